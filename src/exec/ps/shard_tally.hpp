#pragma once
/// \file
/// What each parameter-server shard saw (its updates' end times, the
/// gradients it took and dropped, their staleness), and the run's summary
/// from them: RunInfo::parameter_server and the ends of its step windows.
/// The cpu backend's threads and the simulator's events keep the same tally.

#include <cstdint>
#include <vector>

#include "exec/parameter_server.hpp"
#include "timeline/run_result.hpp"

namespace splitscope {

struct ShardTally {
  std::vector<double> update_ends_us;  ///< when each update was applied (since the run's start)
  std::vector<int64_t> staleness;      ///< histogram of the gradients taken
  int64_t applied = 0;
  int64_t dropped = 0;
  int64_t applied_rows = 0;  ///< batch rows of the gradients taken
  int64_t bytes = 0;         ///< weights held

  /// A gradient over `rows` rows taken `staleness` updates after its pull.
  void taken(int staleness, int64_t rows);
};

struct ParameterServerSummary {
  ParameterServerInfo info;         ///< everything but the loss curve
  std::vector<double> window_ends;  ///< the step windows' ends (ps/step_windows.hpp)
};

/// Each step window ends where every shard has closed the step: an
/// aggregated update (sync, spare, async warm-up) closes one, and in async
/// steps every `workers` updates do (one gradient of each worker, on
/// average); a last, partial async step closes at the last update.
/// `pushed`: worker steps that pushed a gradient.
ParameterServerSummary summarize_shards(const ParameterServerOptions& options, int workers,
                                        const std::vector<ShardTally>& shards, int64_t pushed);

}  // namespace splitscope
