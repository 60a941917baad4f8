// seam/files.h — reading a whole file, and writing a new directory of
// them, with errors that name the path.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seam/error.h"

namespace seam {

// The limits on what each kind of input file may hold, checked before a byte
// of it is read.
inline constexpr size_t kMaxConfigBytes = size_t{16} << 20;  // a config.json (NAS block lists: a few hundred KiB)
inline constexpr size_t kMaxPlanBytes = size_t{64} << 20;    // a plan (JSON or text; Kimi-K2 at pp 4: 317 KiB)

// The bytes of a regular file of at most `max_bytes`; an InvalidArgument
// error names the path and why it could not be read (no such file, a loop of
// links, a directory, a FIFO or device, too large). Never blocks on a FIFO.
Expected<std::string> ReadFileAtMost(const std::string& path, size_t max_bytes);

// Refused (naming `flag`) unless nothing is at `dir` yet: a directory a
// command creates never mixes with what was there.
Status CheckNewDirectory(const std::string& dir, std::string_view flag);
// Creates `dir` holding `files` (name, bytes). They are written into a
// private directory beside it (mode 0700) and that is renamed into place,
// so `dir` holds every file or does not exist.
Status WriteNewDirectory(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace seam
