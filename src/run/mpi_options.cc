// The names of the MPI options and the --fault syntax.
#include "seam/runtime/mpi_options.h"

#include <fmt/format.h>

#include <charconv>

#include "core/enum_text.h"

namespace seam {

namespace {

constexpr auto kModes =
    EnumNames<MpiMode>("MPI mode", {{MpiMode::kCanonical, "canonical"}, {MpiMode::kNative, "native"}});
constexpr auto kFaults = EnumNames<FaultKind>("fault", {{FaultKind::kThrow, "throw"},
                                                        {FaultKind::kKill, "kill"},
                                                        {FaultKind::kHang, "hang"},
                                                        {FaultKind::kInput, "input"}});

}  // namespace

std::string_view Name(MpiMode m) { return kModes.Name(m); }
Expected<MpiMode> ParseMpiMode(std::string_view text) { return kModes.Parse(text); }
std::string_view Name(FaultKind k) { return kFaults.Name(k); }

Expected<Fault> ParseFault(std::string_view text) {
  const auto bad = [&] {
    return Malformed(fmt::format("'{}' is not RANK:KIND or RANK:KIND@CALL (KIND: throw, kill, hang, input)", text));
  };
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return bad();
  Fault f;
  const std::string_view rank = text.substr(0, colon);
  std::string_view kind = text.substr(colon + 1);
  if (auto [p, ec] = std::from_chars(rank.data(), rank.data() + rank.size(), f.rank);
      ec != std::errc() || p != rank.data() + rank.size() || f.rank < 0) {
    return bad();
  }
  if (const size_t at = kind.find('@'); at != std::string_view::npos) {
    const std::string_view call = kind.substr(at + 1);
    if (auto [p, ec] = std::from_chars(call.data(), call.data() + call.size(), f.at_call);
        ec != std::errc() || p != call.data() + call.size() || f.at_call < 1) {
      return bad();
    }
    kind = kind.substr(0, at);
  }
  Expected<FaultKind> k = kFaults.Parse(kind);
  if (!k) return bad();
  f.kind = *k;
  return f;
}

}  // namespace seam
