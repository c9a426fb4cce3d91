#pragma once
/// \file
/// Which parameter-server shard holds which weights (`ps`): whole weight
/// sets (a layer's weights and bias together), largest first, each to the
/// shard holding the fewest bytes so far: TensorFlow's greedy load-balancing
/// placement of variables over parameter-server tasks. Every worker's
/// replica of a weight set goes to the same shard.

#include <cstdint>
#include <vector>

#include "plan/plan.hpp"

namespace splitscope {

/// For each of worker `worker`'s parameter values (its entries of
/// Plan::parameters, in that order), the shard holding its weights, in
/// [0, plan.parameter_servers).
std::vector<int> parameter_shards(const Plan& plan, int worker);

/// Bytes of weights each of `shards` shards holds when `bytes` (one entry per
/// weight set) are placed by the greedy rule; the shard of each entry goes
/// into `shard_of`.
std::vector<int64_t> greedy_shards(const std::vector<int64_t>& bytes, int shards, std::vector<int>& shard_of);

/// The workers of a `ps` plan: its devices before the shards.
inline int ps_workers(const Plan& plan) { return plan.devices - plan.parameter_servers; }

}  // namespace splitscope
