// The one way graphrun-cc writes to stdout: everything at once, flushed, with
// a closed pipe reported as graphrun reports it (RunError).
#pragma once

#include <string>

namespace graphrun {

void write_stdout(const std::string& text);

}  // namespace graphrun
