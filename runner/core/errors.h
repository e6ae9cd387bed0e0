// The error types of graphrun-cc and the exit code each one maps to.
//
// Code deep inside (tensor allocation, TensorProto decoding, a kernel's shape
// checks) throws a plain Error: it does not know whether it is loading a model,
// reading a feed or running a node. The layer that does know catches it and
// rethrows one of the ExitError kinds with the right context in front, so the
// CLI prints one line and exits with the code the contract gives that stage.
#pragma once

#include <stdexcept>
#include <string>

namespace graphrun {

// A failure that still needs its context (which node, which feed) added.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A tensor over GRAPHDEF_MAX_TENSOR_BYTES: refused before allocating, and a
// run failure (exit 4) wherever it is met, as graphrun reports it.
class TensorLimitError : public Error {
 public:
  using Error::Error;
};

enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 2,  // bad flag, bad feed, unknown fetch, unfed placeholder
  kExitModel = 3,  // model file unreadable or invalid
  kExitRun = 4,    // a kernel failed while running
};

// A failure whose message is final; main() prints it and exits with code().
class ExitError : public std::runtime_error {
 public:
  ExitError(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

struct UsageError : ExitError {
  explicit UsageError(const std::string& message) : ExitError(kExitUsage, message) {}
};

struct ModelError : ExitError {
  explicit ModelError(const std::string& message) : ExitError(kExitModel, message) {}
};

struct RunError : ExitError {
  explicit RunError(const std::string& message) : ExitError(kExitRun, message) {}
};

}  // namespace graphrun
