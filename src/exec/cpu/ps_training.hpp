#pragma once
/// \file
/// Parameter-server training on this machine's cores (exec/parameter_server.hpp
/// gives the protocol): each worker is a thread running its part of the `ps`
/// plan (plan/plan_part.hpp) on a scheduler of its own, each shard a
/// thread holding its weight sets' master copy and optimizer state.
/// - A worker pulls: under each shard's lock, copies its weights into its
///   own (after waiting, where the protocol says so, for the next version).
/// - It runs its forward and backward pass, its loss read off its rows.
/// - It pushes: copies each shard's gradients into a message for that shard.
/// - A shard takes its messages in arrival order: the ledger takes or drops
///   each; a taken gradient is summed in; a completed update is applied in
///   place under the shard's lock (pulls wait for it, as on a real server).
/// Timeline: each worker's ops (their plan op ids) on its device, a pull
/// span on its copy-in lane and a push span on its copy-out lane; each
/// shard's updates on its device's compute lane; cut into step windows
/// (ps/step_windows.hpp). `--straggler D:MS` holds worker D back every step.

#include "exec/executor.hpp"

namespace splitscope {

/// Runs `plan` (strategy `ps`, a training graph) by the rules of `ps`.
/// Throws InputError for impossible options, RunError for a failed step or
/// one past `options.timeout_ms`.
RunResult run_cpu_parameter_server(const Plan& plan, const RunOptions& options, const ParameterServerOptions& ps);

}  // namespace splitscope
