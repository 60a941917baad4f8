#include "seam/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace seam {
namespace {

// Why `path` could not be opened, in words a user acts on.
std::string OpenError(const std::string& path, int err) {
  switch (err) {
    case ENOENT: return fmt::format("cannot read {}: no such file", path);
    case ELOOP: return fmt::format("cannot read {}: a loop of symbolic links", path);
    case EACCES: return fmt::format("cannot read {}: permission denied", path);
    default: return fmt::format("cannot read {}: {}", path, std::strerror(err));
  }
}

}  // namespace

Expected<std::string> ReadFileAtMost(const std::string& path, size_t max_bytes) {
  // Non-blocking, so a FIFO or a device is refused instead of waited on.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return InvalidArgument(OpenError(path, errno));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st {};
  if (fstat(fd, &st) != 0) return InvalidArgument(OpenError(path, errno));
  if (S_ISDIR(st.st_mode)) return InvalidArgument(fmt::format("cannot read {}: it is a directory", path));
  if (!S_ISREG(st.st_mode)) return InvalidArgument(fmt::format("cannot read {}: not a regular file", path));
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return InvalidArgument(
        fmt::format("{} is {} bytes, more than the {} bytes such a file may have", path, st.st_size, max_bytes));
  }
  // Read to the end, never past the limit: files such as /proc's report no size.
  std::string out;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return InvalidArgument(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      return InvalidArgument(fmt::format("{} holds more than the {} bytes such a file may have", path, max_bytes));
    }
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace seam
