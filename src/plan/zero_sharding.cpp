#include "plan/zero_sharding.hpp"

#include <algorithm>
#include <string>

#include "plan/plan_memory.hpp"
#include "util/errors.hpp"

namespace splitscope {

ZeroShard zero_shard(const Plan& plan, const PlanOp& update) {
  if (plan.zero_stage != 1 || update.inputs.empty()) return {};
  const int producer = plan.value(update.inputs.at(0)).producer;
  if (producer < 0) return {};
  const PlanOp& reduce = plan.op(producer);
  if (reduce.role != OpRole::kCollective || reduce.collective != CollectiveKind::kAllReduce) return {};
  const auto at = std::find(reduce.participants.begin(), reduce.participants.end(), update.device);
  if (at == reduce.participants.end()) return {};
  return ZeroShard{.replicas = static_cast<int>(reduce.participants.size()),
                   .rank = static_cast<int>(at - reduce.participants.begin())};
}

int64_t shard_elements(int64_t elements, const ZeroShard& shard) {
  const int64_t replicas = shard.replicas;
  return elements / replicas + (shard.rank < elements % replicas ? 1 : 0);
}

void shard_optimizer_state(Plan& plan, int stage) {
  if (stage == 0) return;
  if (stage != 1) {
    throw InputError("--zero", "",
                     "must be 0 or 1, got " + std::to_string(stage) + "; 0: every replica keeps the whole optimizer state, 1: ZeRO stage 1 shards it over the data-parallel replicas");
  }
  if (!plan.graph->is_training()) {
    throw InputError("--zero", "", "shards the optimizer state of a training step; add --train");
  }
  plan.zero_stage = 1;
  int largest = 1;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kUpdate) largest = std::max(largest, zero_shard(plan, op).replicas);
  }
  if (largest == 1) {
    throw InputError("--zero", "",
                     "shards the optimizer state over data-parallel replicas, and this " + plan.strategy +
                         " plan has none; use --strategy data, hybrid with a data degree above 1, or --replicas R");
  }
  plan.memory = compute_memory(plan);
  plan.notes.push_back("ZeRO-1: each weight slice's optimizer state" +
                       std::string(storage_bytes(plan.precision).master > 0 ? " and fp32 masters are" : " is") +
                       " sharded over the replicas that all-reduce its gradient (up to " + std::to_string(largest) +
                       "); a reduce-scatter and an all-gather move the bytes of that all-reduce");
}

}  // namespace splitscope
