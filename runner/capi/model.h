// What graphrun_c.h's functions work on: a model loaded and optimized once,
// its inputs and outputs described, and runs of it from borrowed buffers.
// The C functions (capi/graphrun_c.cc) only translate to and from C; errors
// are thrown here as graphrun's ExitError kinds, which they turn into codes.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/tensor.h"
#include "exec/executor.h"
#include "exec/unsupported.h"
#include "graph/graph.h"
#include "session/session.h"

namespace graphrun {

struct TensorInfo {
  std::string name;    // in runs: the input's node name; "node" or "node:k" for an output
  std::string dtype;   // numpy's name
  int rank = -1;       // -1: any rank
  std::vector<int64_t> dims;  // -1: any size
  bool required = true;       // false for a PlaceholderWithDefault
  Endpoint endpoint;          // in the optimized graph
};

class CapiModel {
 public:
  // Throws ModelError, UnsupportedError.
  CapiModel(const std::string& path, const std::string& signature, bool optimize);

  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }
  const std::string& optimize_summary() const { return optimize_summary_; }

  // The OpenMP threads each run uses (0: OpenMP's default). Throws
  // UsageError once a run has prepared the kernels for another count.
  void set_threads(int threads);

  // One tensor per fetch, none of them borrowing the feeds' memory. Throws
  // UsageError for a bad call, RunError when a kernel fails. Runs of one
  // model take turns (its plans and kernels' state are the model's own).
  std::vector<TensorPtr> run(const std::vector<BorrowedFeed>& feeds, const std::vector<std::string>& fetches);

 private:
  const TensorInfo& input_named(const std::string& name) const;
  Endpoint fetch_named(const std::string& name) const;
  TensorPtr borrow(const BorrowedFeed& feed, const TensorInfo& input) const;
  const Executor& plan(const FeedMap& feeds, const std::vector<Endpoint>& fetches);

  std::unique_ptr<const Graph> graph_;  // optimized
  std::vector<TensorInfo> inputs_, outputs_;
  std::string optimize_summary_;
  bool optimized_ = false;  // then only outputs can be fetched: the passes may have folded the rest
  // Plans by fed inputs and fetched outputs: a server asks the same few
  // questions over and over. Used under run_mutex_ only.
  std::map<std::string, std::unique_ptr<Executor>> plans_;
  // Held for a whole run: the plans and the nodes' kernel state (oneDNN's
  // argument handles, written each run) are the model's alone.
  std::mutex run_mutex_;
  int threads_ = 0;    // under run_mutex_
  bool ran_ = false;   // under run_mutex_
};

}  // namespace graphrun
