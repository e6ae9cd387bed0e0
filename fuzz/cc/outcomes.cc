#include "outcomes.h"

#include <cstdio>
#include <cstdlib>

namespace graphrun_fuzz {

namespace {

unsigned long long counts[static_cast<int>(Outcome::kCount)];
unsigned long long total = 0;
constexpr unsigned long long kSnapshotEvery = 4096;

std::string counts_line() {
  char line[256];
  std::snprintf(line, sizeof line, "fuzz outcomes: ok=%llu usage(2)=%llu model(3)=%llu run(4)=%llu\n", counts[0],
                counts[1], counts[2], counts[3]);
  return line;
}

void write_file(const std::string& path, const char* mode, const std::string& text) {
  if (std::FILE* file = std::fopen(path.c_str(), mode)) {
    std::fputs(text.c_str(), file);
    std::fclose(file);
  }
}

// libFuzzer leaves with _Exit on SIGINT, SIGUSR1 and when killed, skipping
// atexit: a long campaign's counts so far are kept in <counts file>.partial,
// rewritten every kSnapshotEvery inputs and removed when the run ends.
void snapshot() {
  if (const char* path = std::getenv("GRAPHRUN_FUZZ_COUNTS")) {
    write_file(std::string(path) + ".partial", "w", counts_line());
  }
}

// A run that was killed left its last snapshot: it is folded into the
// counts file, which a campaign's make target sums.
void fold_earlier_snapshot() {
  const char* path = std::getenv("GRAPHRUN_FUZZ_COUNTS");
  if (path == nullptr) return;
  const std::string partial = std::string(path) + ".partial";
  std::FILE* file = std::fopen(partial.c_str(), "r");
  if (file == nullptr) return;
  char line[256];
  const bool read = std::fgets(line, sizeof line, file) != nullptr;
  std::fclose(file);
  if (read) write_file(path, "a", line);
  std::remove(partial.c_str());
}

void print_counts() {
  const std::string line = counts_line();
  std::fputs(line.c_str(), stderr);
  if (const char* path = std::getenv("GRAPHRUN_FUZZ_COUNTS")) {
    write_file(path, "a", line);
    std::remove((std::string(path) + ".partial").c_str());
  }
}

}  // namespace

void count(Outcome outcome) {
  ++counts[static_cast<int>(outcome)];
  if (++total % kSnapshotEvery == 0) snapshot();
}

void report_at_exit() {
  static bool registered = false;
  if (!registered) {
    fold_earlier_snapshot();
    std::atexit(print_counts);
  }
  registered = true;
}

void finding(const std::string& kind, const std::string& detail) {
  std::fprintf(stderr, "FINDING (%s): %s\n", kind.c_str(), detail.c_str());
  std::abort();
}

}  // namespace graphrun_fuzz
