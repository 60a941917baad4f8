#include "seam/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace seam {
namespace {

// A file descriptor closed when it goes out of scope (or on Close()).
class Fd {
 public:
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Close(); }
  int get() const { return fd_; }
  int* out() { return &fd_; }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Both ends close on exec; the child's dup2 onto 0, 1 and 2 clears that flag
// on its copies only.
struct Pipe {
  Fd read;
  Fd write;
  bool Open() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    *read.out() = fds[0];
    *write.out() = fds[1];
    return true;
  }
};

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// Writing to a program that has already exited raises SIGPIPE, which would
// end seam; while this is alive the thread holds SIGPIPE back, and any it
// raised is taken off before the old mask returns.
class HoldSigpipe {
 public:
  HoldSigpipe() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  HoldSigpipe(const HoldSigpipe&) = delete;
  HoldSigpipe& operator=(const HoldSigpipe&) = delete;
  ~HoldSigpipe() {
    const timespec now{};
    while (sigtimedwait(&pipe_, nullptr, &now) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t pipe_{};
  sigset_t old_{};
};

// Feeds `input` to `to_child` and reads `from_out` and `from_err` to their
// ends, all at once, so neither side waits on a full pipe.
void Exchange(Fd& to_child, Fd& from_out, Fd& from_err, std::string_view input, std::string& out, std::string& err) {
  HoldSigpipe hold;
  fcntl(to_child.get(), F_SETFL, O_NONBLOCK);
  size_t written = 0;
  if (input.empty()) to_child.Close();
  char buf[65536];
  while (from_out.get() >= 0 || from_err.get() >= 0) {
    pollfd fds[3] = {{to_child.get(), POLLOUT, 0}, {from_out.get(), POLLIN, 0}, {from_err.get(), POLLIN, 0}};
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents != 0) {
      const ssize_t n = write(to_child.get(), input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      // Done, or the program stopped reading (EPIPE): either way it has all it will take.
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) to_child.Close();
    }
    for (int i = 1; i < 3; ++i) {
      if (fds[i].revents == 0) continue;
      Fd& from = i == 1 ? from_out : from_err;
      const ssize_t n = read(from.get(), buf, sizeof buf);
      if (n > 0) {
        (i == 1 ? out : err).append(buf, static_cast<size_t>(n));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        from.Close();
      }
    }
  }
}

std::string ExitText(int status) {
  if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("signal {}", WTERMSIG(status));
  return fmt::format("wait status {}", status);
}

}  // namespace

std::optional<std::string> FindOnPath(std::string_view program) {
  const char* env = std::getenv("PATH");
  const std::string_view path = env != nullptr ? env : "/usr/bin:/bin";
  for (size_t at = 0; at <= path.size();) {
    size_t end = path.find(':', at);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view dir = path.substr(at, end - at);
    if (!dir.empty()) {
      std::string candidate = fmt::format("{}/{}", dir, program);
      if (IsExecutableFile(candidate)) return candidate;
    }
    at = end + 1;
  }
  return std::nullopt;
}

Expected<std::string> RunFilter(const std::string& path, const std::vector<std::string>& args, std::string_view input) {
  Pipe in;
  Pipe out;
  Pipe err;
  if (!in.Open() || !out.Open() || !err.Open()) {
    return InvalidArgument(fmt::format("cannot run {}: no pipe ({})", path, std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.read.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write.get(), STDERR_FILENO);
  // The child starts with every signal delivered as usual, whatever this
  // thread holds back, and with SIGPIPE at its default.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigset_t pipe;
  sigemptyset(&none);
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &pipe);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> argv{const_cast<char*>(path.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, path.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0) return InvalidArgument(fmt::format("cannot run {}: {}", path, std::strerror(spawned)));
  // Only the child keeps these ends, so its exit ends the reads.
  in.read.Close();
  out.write.Close();
  err.write.Close();
  std::string stdout_text;
  std::string stderr_text;
  Exchange(in.write, out.read, err.read, input, stdout_text, stderr_text);
  int status = -1;  // not an exit, should the wait itself fail
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return stdout_text;
  while (!stderr_text.empty() && stderr_text.back() == '\n') stderr_text.pop_back();
  return InvalidArgument(
      fmt::format("{} failed ({}){}{}", path, ExitText(status), stderr_text.empty() ? "" : ": ", stderr_text));
}

}  // namespace seam
