// seam/printable.h — names read from files (a model's, a hardware's) made
// safe to print: a name is text from a file, and a control byte in it must
// not reach a terminal (an escape sequence) or a Graphviz file (a NUL ends
// it; a control byte makes the SVG Graphviz writes invalid XML).
//
//   std::cout << Printable(model.name);      // "evil\x1b[2J" stays on one line
//   out += DotText(model.name);              // inside a dot string "..."
#pragma once

#include <string>
#include <string_view>

namespace seam {

// The text with every control (bytes below 0x20, DEL, and the C1 controls
// U+0080..U+009F) and every byte that is not part of valid UTF-8 written as
// \xHH; the rest as it is.
std::string Printable(std::string_view text);

// The longest name a label shows whole, in characters; a longer one is cut.
inline constexpr size_t kMaxLabelName = 64;

// The text for a dot string "...": Printable, with " and \ escaped, and a
// name over kMaxLabelName characters cut to that many followed by an
// ellipsis and its length ("aaaa… (100000 characters)").
std::string DotText(std::string_view text);

}  // namespace seam
