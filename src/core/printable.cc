// Names from files, escaped for a terminal and for Graphviz.
#include "seam/printable.h"

#include <fmt/format.h>

namespace seam {
namespace {

// The length of the valid UTF-8 sequence at the start of `s` (its code point
// is neither a surrogate nor above U+10FFFF and is written in its shortest
// form); 0 when it is not one.
size_t Utf8Length(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto tail = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return tail(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!tail(1) || !tail(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // a surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!tail(1) || !tail(2) || !tail(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7F; }

// U+0080..U+009F, the C1 controls (U+009B is a terminal's CSI, as ESC [ is).
bool IsC1Control(std::string_view sequence) {
  return sequence.size() == 2 && static_cast<unsigned char>(sequence[0]) == 0xC2 &&
         static_cast<unsigned char>(sequence[1]) < 0xA0;
}

// Calls `each(character)` for each character of `text`: a valid UTF-8
// sequence that is not a control as it is, any other byte as \xHH.
template <typename Each>
void ForEachPrintable(std::string_view text, Each each) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8Length(text.substr(i));
    if (n == 0 || (n == 1 && IsControl(static_cast<unsigned char>(text[i]))) || IsC1Control(text.substr(i, n))) {
      each(fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i])), true);
      ++i;
    } else {
      each(text.substr(i, n), false);
      i += n;
    }
  }
}

}  // namespace

std::string Printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  ForEachPrintable(text, [&](std::string_view c, bool) { out += c; });
  return out;
}

std::string DotText(std::string_view text) {
  std::string out;
  size_t characters = 0;
  ForEachPrintable(text, [&](std::string_view, bool) { characters += 1; });
  const bool cut = characters > kMaxLabelName;
  size_t shown = 0;
  ForEachPrintable(text, [&](std::string_view c, bool escaped) {
    if (cut && shown == kMaxLabelName) return;
    ++shown;
    // An escape's backslash is text in the label, so Graphviz must see \\.
    if (escaped) out += '\\';
    if (c == "\"" || c == "\\") out += '\\';
    out += c;
  });
  if (cut) out += fmt::format("\u2026 ({} characters)", characters);
  return out;
}

}  // namespace seam
