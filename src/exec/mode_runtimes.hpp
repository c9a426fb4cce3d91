#pragma once
/// \file
/// The run modes that need more of a backend than running a plan: a stream
/// of steps behind an input pipeline (batches prepared and copied beside the
/// steps) and parameter-server training (workers and shards). As with ggml's
/// optional backend entries, they are not part of the Executor's table: a
/// backend that has a runtime for such a mode implements that mode's
/// interface too, and the mode's driver (run/run_driver.hpp) asks for it with
/// runtime_of() and refuses the mode where the backend has none.

#include "exec/executor.hpp"
#include "exec/input_pipeline.hpp"
#include "exec/parameter_server.hpp"

namespace splitscope {

/// Runs a plan as a stream of `options.warmup` (at least one, which fills
/// the pipeline) + `options.repeats` steps, each step's batch prepared and
/// copied by `input` (input_pipeline.hpp): a Timeline per timed step and
/// RunInfo::input_pipeline set. The cpu and cuda backends measure it
/// (input_stream.hpp), the simulator predicts it.
class InputStreamRuntime {
 public:
  virtual ~InputStreamRuntime() = default;
  virtual RunResult run_input_stream(const Plan& plan, const RunOptions& options,
                                     const InputPipelineOptions& input) = 0;
};

/// Trains a `ps` plan with its workers and parameter-server shards by the
/// rules of `ps` (parameter_server.hpp): a Timeline per step window, the
/// loss of each, the output of the last step and RunInfo::parameter_server.
/// The shards' bookkeeping is shared (exec/ps/); the cpu backend runs them
/// as threads, the MPI backend as ranks, the simulator predicts them.
class ParameterServerRuntime {
 public:
  virtual ~ParameterServerRuntime() = default;
  virtual RunResult run_parameter_server(const Plan& plan, const RunOptions& options,
                                         const ParameterServerOptions& ps) = 0;
};

/// `executor`'s runtime for the mode `Runtime` is the interface of; null
/// where it has none.
template <typename Runtime>
Runtime* runtime_of(Executor& executor) {
  return dynamic_cast<Runtime*>(&executor);
}

}  // namespace splitscope
