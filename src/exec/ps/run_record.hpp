#pragma once
/// \file
/// What a parameter-server run's workers and shards recorded, wherever they
/// ran (threads of one process, MPI ranks), and the RunResult made of it:
/// the timeline cut into step windows at the shards' step-closing updates
/// (step_windows.hpp), one loss a window, RunInfo::parameter_server.

#include <cstdint>
#include <vector>

#include "exec/parameter_server.hpp"
#include "exec/ps/shard_tally.hpp"
#include "ir/graph.hpp"
#include "timeline/run_result.hpp"
#include "timeline/timeline.hpp"

namespace splitscope {

/// One worker step's loss over its rows, and when its compute ended.
struct StepLoss {
  double end_us = 0;
  double loss = 0;
  int64_t rows = 0;
};

struct PsRunRecord {
  std::vector<Span> spans;            ///< every worker's and shard's, on one clock
  std::vector<StepLoss> step_losses;  ///< one a worker step that pushed a gradient
  std::vector<ShardTally> tallies;    ///< by shard
};

/// A worker's pull of the weights (its copy-in lane) and push of its
/// gradients (copy-out), as both ways of running parameter servers record them.
Span pull_span(int worker, double start_us, double end_us, int64_t bytes);
Span push_span(int worker, double start_us, double end_us, int64_t bytes);

/// The run's timelines (one a step window), losses (one a window: the
/// rows-weighted mean of the worker steps that ended in it, else the
/// previous one) and `info` with its parameter_server filled in. Throws
/// RunError when no update was applied. The output is the caller's.
RunResult parameter_server_result(const ParameterServerOptions& options, int workers, PsRunRecord record,
                                  RunInfo info);

/// The network output of `graph`, [batch, ...], zeros: for the workers' rows.
HostTensor empty_network_output(const Graph& graph);

}  // namespace splitscope
