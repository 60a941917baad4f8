// A line the parser read (engine/argparse.h) turned into the launch it
// says: each flag's role applied, the last of a repeated flag kept and said,
// old spellings mapped to their successors, flags seam reads past listed
// with why, flags that change communication seam does not model refused.
#pragma once

#include "engine/argparse.h"

namespace seam::engine {

Expected<EngineLaunch> ApplyLine(const EngineTable& table, const ReadLine& line);

}  // namespace seam::engine
