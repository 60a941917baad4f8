#include "seam/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

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

Status CheckNewDirectory(const std::string& dir, std::string_view flag) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) == 0) {
    return InvalidArgument(fmt::format("{} {}: something is there already; give a new directory", flag, dir));
  }
  if (errno != ENOENT) return InvalidArgument(fmt::format("{} {}: {}", flag, dir, std::strerror(errno)));
  return Status::Ok();
}

namespace {

Status WriteInto(const std::string& tmp, const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [name, bytes] : files) {
    const std::string path = fmt::format("{}/{}", tmp, name);
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return InvalidArgument(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n = write(fd, bytes.data() + at, bytes.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = errno;
        close(fd);
        return InvalidArgument(fmt::format("cannot write {}: {}", path, std::strerror(err)));
      }
      at += static_cast<size_t>(n);
    }
    if (close(fd) != 0) return InvalidArgument(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  }
  return Status::Ok();
}

}  // namespace

Status WriteNewDirectory(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files) {
  const std::filesystem::path target(dir);
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::absolute(target, ec).parent_path();
  if (ec) return InvalidArgument(fmt::format("cannot place {}: {}", dir, ec.message()));
  std::string tmp = (parent / (".seam-" + target.filename().string() + "-XXXXXX")).string();
  if (mkdtemp(tmp.data()) == nullptr) {
    return InvalidArgument(fmt::format("cannot create a directory beside {}: {}", dir, std::strerror(errno)));
  }
  Status written = WriteInto(tmp, files);
  if (written.ok() && rename(tmp.c_str(), dir.c_str()) != 0) {
    written = InvalidArgument(fmt::format("cannot move the files into {}: {}", dir, std::strerror(errno)));
  }
  if (!written.ok()) {
    std::filesystem::remove_all(tmp, ec);
    return Error{written.error().code, fmt::format("{}; nothing was written to {}", written.error().message, dir)};
  }
  return Status::Ok();
}

}  // namespace seam
