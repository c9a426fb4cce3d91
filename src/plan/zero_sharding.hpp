#pragma once
/// \file
/// ZeRO stage 1 (Rajbhandari et al., 2020; DeepSpeed's `zero_optimization.stage: 1`)
/// over a training plan's data-parallel replicas (`--zero 1`).
///
/// Each weight slice whose gradient d replicas all-reduce keeps its
/// optimizer state (and, under amp, its fp32 masters) in d shards, one per
/// replica: replica r (its place among the all-reduce's participants) holds
/// elements [r·E/d, (r+1)·E/d) of the slice's E, the first E mod d replicas
/// one element more, as the reduce-scatter chunks (CollectiveKind::kReduceScatter).
/// Weights and gradients stay whole on every replica.
///
/// The step's traffic is that of the all-reduce it replaces: the gradient
/// all-reduce becomes a reduce-scatter (each replica gets the sum of its
/// shard), the replica updates its shard, and an all-gather hands every
/// replica the updated weights. In a ring, reduce-scatter and all-gather are
/// the two halves of the ring all-reduce, (N−1)/N·B per device each, so
/// together they move exactly its 2(N−1)/N·B; the plan keeps the one
/// all-reduce op, priced as before, and only the memory changes.

#include <cstdint>

#include "plan/plan.hpp"

namespace splitscope {

/// A replica's shard of one weight slice's optimizer state.
struct ZeroShard {
  int replicas = 1;  ///< d: the replicas the slice's state is spread over (1: not sharded)
  int rank = 0;      ///< this replica's place among them
};

/// The shard `update` (an update op of `plan`) keeps: over the participants
/// of the all-reduce that wrote its gradient where plan.zero_stage is 1, else whole.
ZeroShard zero_shard(const Plan& plan, const PlanOp& update);

/// Elements of `elements` that replica `rank` of `replicas` holds (the first
/// elements mod replicas replicas one more).
int64_t shard_elements(int64_t elements, const ZeroShard& shard);

/// Applies `--zero stage` to `plan` (make_plan()): 0 leaves it as it is; 1
/// sets Plan::zero_stage, recounts its memory and notes the sharding.
/// InputError (exit 2) for another stage, an inference plan, or a plan with
/// no gradient all-reduced between replicas (nothing to shard over).
void shard_optimizer_state(Plan& plan, int stage);

}  // namespace splitscope
