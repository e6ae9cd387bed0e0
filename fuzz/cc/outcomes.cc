#include "outcomes.h"

#include <cstdio>
#include <cstdlib>

namespace graphrun_fuzz {

namespace {

unsigned long long counts[static_cast<int>(Outcome::kCount)];

void print_counts() {
  char line[256];
  std::snprintf(line, sizeof line, "fuzz outcomes: ok=%llu usage(2)=%llu model(3)=%llu run(4)=%llu\n", counts[0],
                counts[1], counts[2], counts[3]);
  std::fputs(line, stderr);
  if (const char* path = std::getenv("GRAPHRUN_FUZZ_COUNTS")) {
    if (std::FILE* file = std::fopen(path, "a")) {
      std::fputs(line, file);
      std::fclose(file);
    }
  }
}

}  // namespace

void count(Outcome outcome) { ++counts[static_cast<int>(outcome)]; }

void report_at_exit() {
  static bool registered = false;
  if (!registered) std::atexit(print_counts);
  registered = true;
}

void finding(const std::string& kind, const std::string& detail) {
  std::fprintf(stderr, "FINDING (%s): %s\n", kind.c_str(), detail.c_str());
  std::abort();
}

}  // namespace graphrun_fuzz
