// seam/files.h — reading a whole file, with an error that names it.
#pragma once

#include <string>

#include "seam/error.h"

namespace seam {

// The bytes of a regular file; an InvalidArgument error names the path and
// why it could not be read.
Expected<std::string> ReadWholeFile(const std::string& path);

}  // namespace seam
