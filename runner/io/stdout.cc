#include "io/stdout.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/errors.h"

namespace graphrun {

void write_stdout(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    if (errno == EPIPE) throw RunError("output closed before everything was written (broken pipe)");
    throw RunError(std::string("cannot write the output: ") + std::strerror(errno));
  }
}

}  // namespace graphrun
