#pragma once
/// \file
/// Parameter-server training (`--strategy ps`): the weights and the
/// optimizer's state live on K shards; each of N workers pulls the weights,
/// computes the gradient of its share of the batch (its part of the `ps`
/// plan, plan/plan_part.hpp) and pushes it to the shards, which
/// aggregate and apply it by the rules of ShardLedger (shard_ledger.hpp):
/// - sync: each update waits for every worker's gradient of that step;
/// - spare R: each update takes the first N - R gradients of the step and
///   drops the rest (late ones), so no worker waits for the slowest R;
/// - async: each gradient is applied as it arrives, on whatever weights the
///   shard holds by then; its staleness is the number of updates applied
///   since its worker pulled.
/// An applied update's gradient is the rows-weighted mean of its workers'
/// gradients (the full batch's gradient when every worker is in), so sync
/// trains exactly as `data` and `single` do.

#include <cstdint>
#include <optional>
#include <string_view>

namespace splitscope {

enum class PsMode { kSync, kAsync, kSpare };
std::string_view to_string(PsMode mode);

struct ParameterServerOptions {
  PsMode mode = PsMode::kSync;
  /// sync and spare: updates to apply (training steps). async: gradients
  /// each worker computes and pushes (the same work as that many sync steps).
  int steps = 3;
  int spare = 0;  ///< spare: gradients of each step left out (R)
  /// async mitigations (the textbook's):
  int sync_warmup = 0;                ///< the first this many steps synchronous
  std::optional<int> max_staleness;   ///< drop gradients staler than this
  bool staleness_scaled_lr = false;   ///< apply each gradient with lr / (1 + staleness)
};

/// InputError (exit 2) for options a `ps` run on `workers` workers cannot
/// take (steps below 1, spare not in [1, workers - 1], mitigations outside
/// async), naming the option.
void check_parameter_server_options(const ParameterServerOptions& options, int workers);

struct RunOptions;
/// InputError (exit 2) where --straggler names a device that is not one of
/// the `workers` workers (devices 0 to workers - 1; the shards come after).
void check_ps_straggler(const RunOptions& options, int workers);

}  // namespace splitscope
