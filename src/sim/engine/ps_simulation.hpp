#pragma once
/// \file
/// Parameter-server training predicted on a machine (exec/parameter_server.hpp
/// gives the protocol; the shards keep the same ShardLedger as the cpu
/// backend's threads). The shards sit on the plan's devices N..N+K-1 of the
/// machine; an event simulation runs the workers and shards:
/// - a worker's step computes for its part of the plan's predicted makespan
///   (the simulator's timeline of that part, its spans shifted into place),
///   times a lognormal factor per (worker, step) under `--jitter`;
/// - a pull is one copy of each shard's weights to the worker, a push one
///   copy of its gradients to each shard, over the machine's routes: copies
///   sharing a link share its bandwidth (sim/network/flow_network.hpp), so N workers
///   pushing to one shard saturate that shard's link;
/// - a shard serves its gradients one at a time, in arrival order: summing
///   one in streams three times its weights (an epilogue's cost), an update
///   is the optimizer's cost (op_cost_model.hpp), and the worker's push is
///   answered when its gradient has been dealt with.

#include "exec/executor.hpp"

namespace splitscope {

class Simulator;

/// The predicted run: a Timeline per step window, no losses, no output;
/// RunInfo::parameter_server set (RunInfo's other fields are the caller's).
RunResult simulate_parameter_server(const Simulator& simulator, const Plan& plan, const RunOptions& options,
                                    const ParameterServerOptions& ps);

}  // namespace splitscope
