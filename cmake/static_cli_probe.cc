// Built at configure time with tools/seam/fmt_compiled.cc, threads and
// -static-pie, as the seam command is linked under SEAM_STATIC_CLI: if this
// machine's fmt, libstdc++ or libc cannot link that way, the setting's AUTO
// turns it off instead of the build failing.
#include <fmt/format.h>

#include <string>
#include <thread>

int main(int argc, char**) {
  // The locale-aware paths are the ones fmt leaves to its compiled part.
  const std::string s = fmt::format("{} {:L} {:L}", argc, 1000000, 2.5);
  std::thread t([] {});
  t.join();
  return s.empty() ? 1 : 0;
}
