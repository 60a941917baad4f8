// fmt's compiled functions, built into the seam command so that it links
// without libfmt.so: Debian ships fmt as a shared library only, and a
// command that loads no shared library starts in about 2 ms less CPU time
// (the loader's relocations of libstdc++ and libfmt, and their page
// faults). Every other consumer of seam's libraries links libfmt as usual.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
// The two templates fmt's headers declare but leave to its compiled
// library (the locale's digit separator and decimal point): the formatting
// code seam calls refers to them even where no `{:L}` asks for a locale.
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
}  // namespace detail
FMT_END_NAMESPACE
