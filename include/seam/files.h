// seam/files.h — reading a whole file, with an error that names it.
#pragma once

#include <string>

#include "seam/error.h"

namespace seam {

// The bytes of a regular file; an InvalidArgument error names the path and
// why it could not be read.
Expected<std::string> ReadWholeFile(const std::string& path);
// The same, refusing a file larger than `max_bytes` before reading any of it.
Expected<std::string> ReadFileAtMost(const std::string& path, size_t max_bytes);

}  // namespace seam
