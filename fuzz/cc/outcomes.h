// Per-class counts of what the fuzz harness saw, printed when the process
// exits (libFuzzer ends a -runs/-max_total_time run with exit()).
#pragma once

#include <string>

namespace graphrun_fuzz {

enum class Outcome { kOk, kUsage, kModel, kRun, kCount };

void count(Outcome outcome);

// Prints "fuzz outcomes: ok=.. usage(2)=.. model(3)=.. run(4)=.." to stderr
// at exit, and appends the same line to $GRAPHRUN_FUZZ_COUNTS when set (so
// a make target can read the counts of a run whose stderr libFuzzer fills).
// While the run lasts, $GRAPHRUN_FUZZ_COUNTS.partial holds the counts so far.
void report_at_exit();

// A finding: prints the class and detail, then aborts, which libFuzzer
// records as a crash with the input that caused it.
[[noreturn]] void finding(const std::string& kind, const std::string& detail);

}  // namespace graphrun_fuzz
