// The names of the MPI options and the --fault syntax.
#include "seam/mpi_options.h"

#include <fmt/format.h>

#include <charconv>

#include "core/enum_text.h"

namespace seam {

std::string_view Name(MpiMode m) { return m == MpiMode::kCanonical ? "canonical" : "native"; }

Expected<MpiMode> ParseMpiMode(std::string_view text) {
  return ParseEnum(text, std::array{MpiMode::kCanonical, MpiMode::kNative}, "MPI mode");
}

std::string_view Name(FaultKind k) {
  switch (k) {
    case FaultKind::kThrow: return "throw";
    case FaultKind::kKill: return "kill";
    case FaultKind::kHang: return "hang";
    case FaultKind::kInput: return "input";
  }
  return "?";
}

Expected<Fault> ParseFault(std::string_view text) {
  const auto bad = [&] {
    return Malformed(fmt::format("'{}' is not RANK:KIND or RANK:KIND@CALL (KIND: throw, kill, hang, input)",
                                 text));
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
  Expected<FaultKind> k =
      ParseEnum(kind, std::array{FaultKind::kThrow, FaultKind::kKill, FaultKind::kHang, FaultKind::kInput}, "fault");
  if (!k) return bad();
  f.kind = *k;
  return f;
}

}  // namespace seam
