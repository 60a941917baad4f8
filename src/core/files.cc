#include "seam/files.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace seam {

Expected<std::string> ReadFileAtMost(const std::string& path, size_t max_bytes) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes) {
    return InvalidArgument(fmt::format("{} is {} bytes, more than the {} bytes such a file may have", path, size,
                                       max_bytes));
  }
  return ReadWholeFile(path);
}

Expected<std::string> ReadWholeFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return InvalidArgument(fmt::format("cannot read {}: no such file", path));
  if (!std::filesystem::is_regular_file(path, ec)) {
    return InvalidArgument(fmt::format("cannot read {}: not a regular file", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument(fmt::format("cannot open {}", path));
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return InvalidArgument(fmt::format("cannot read {}", path));
  return s.str();
}

}  // namespace seam
