#include "partitioners/partitioner.hpp"

#include <stdexcept>

#include "plan/plan_precision.hpp"
#include "partitioners/recompute.hpp"
#include "partitioners/replicas.hpp"
#include "partitioners/strategies.hpp"
#include "plan/zero_sharding.hpp"
#include "util/errors.hpp"

namespace splitscope {

// `ps` is not listed: a comparison cannot repeat it (its shards run outside
// the plan), so only `run --strategy ps` takes it (make_partitioner()).
std::vector<std::string> strategy_names() {
  return {"single", "data", "horizontal", "pipeline", "vertical", "tensor", "branches"};
}

std::string baseline_strategy() {
  for (const auto& name : strategy_names()) {
    if (make_partitioner(name)->traits().baseline) return name;
  }
  throw std::logic_error("no strategy is the baseline");
}

std::unique_ptr<Partitioner> make_partitioner(std::string_view name) {
  if (name == "single") return make_single_partitioner();
  if (name == "horizontal") return make_horizontal_partitioner();
  if (name == "pipeline") return make_pipeline_partitioner();
  if (name == "vertical") return make_vertical_partitioner();
  if (name == "tensor") return make_tensor_partitioner();
  if (name == "data") return make_data_partitioner();
  if (name == "branches") return make_branches_partitioner();
  if (name == "ps") return make_ps_partitioner();
  if (name == "hybrid") return make_hybrid_partitioner();
  std::string known;
  for (const auto& strategy : strategy_names()) known += (known.empty() ? "" : ", ") + strategy;
  known += " (or ps, with run --train; or hybrid, with --degrees T,P,D)";
  throw InputError("--strategy", "", "unknown strategy '" + std::string(name) + "'; use one of " + known);
}

std::unique_ptr<Partitioner> make_partitioner(std::string_view name, int replicas) {
  if (replicas < 1) throw InputError("--replicas", "", "must be 1 or more, got " + std::to_string(replicas));
  auto partitioner = make_partitioner(name);
  if (replicas == 1) return partitioner;
  if (name == "hybrid") {
    throw InputError("--replicas", "", "hybrid's data degree is the third of --degrees T,P,D; drop --replicas");
  }
  if (partitioner->traits().replicated) {
    throw InputError("--replicas", "",
                     std::string(name) + " already replicates the whole network on every device; give it more "
                                         "--devices instead, or replicate a model split (tensor, pipeline, ...)");
  }
  return with_replicas(std::move(partitioner), replicas);
}

Plan make_plan(const Partitioner& partitioner, std::shared_ptr<const Graph> graph, const PartitionOptions& options) {
  if (options.recompute && !graph->is_training()) {
    throw InputError("--recompute", "", "re-runs forward passes for a backward pass; add --train");
  }
  // Strategies build in float32 bytes; DDP fills its buckets by the bytes of
  // the gradients it moves, so a bucket of half gradients holds twice the
  // weights: the same buckets as float32 ones of (4 / gradient size) times the bytes.
  PartitionOptions float32 = options;
  float32.bucket_bytes = options.bucket_bytes * 4 / storage_bytes(options.precision).gradient;
  if (options.sequence_parallel && !partitioner.traits().sequence_parallel) {
    throw InputError("--sequence-parallel", "",
                     "splits the layer norms between tensor-parallel pairs along the sequence, and " +
                         std::string(partitioner.name()) +
                         " has no tensor-parallel pairs; use --strategy tensor or hybrid, or drop it");
  }
  // The passes below rewrite every op: they get the whole plan.
  float32.compact_replicas = options.compact_replicas && options.zero_stage == 0 && !options.recompute &&
                             options.precision == Precision::kFp32;
  Plan plan = partitioner.partition(std::move(graph), float32);
  if (options.zero_stage != 0) shard_optimizer_state(plan, options.zero_stage);
  if (options.recompute) plan = recompute_activations(std::move(plan));
  if (options.precision != Precision::kFp32) plan = store_at_precision(std::move(plan), options.precision);
  return plan;
}

const CostFunction& cost_function(const PartitionOptions& options) {
  static const RooflineCost kDefault;  // immutable, so sharing it is not global state
  return options.cost ? *options.cost : kDefault;
}

void require_devices(const PartitionOptions& options, int most, const std::string& strategy,
                     const std::string& why) {
  if (options.devices < 1) {
    throw InputError("--devices", "", "must be at least 1, got " + std::to_string(options.devices));
  }
  if (options.devices > most) {
    throw InputError("--devices", "",
                     strategy + " can use at most " + std::to_string(most) + " devices here (" + why +
                         "); got " + std::to_string(options.devices));
  }
}

void require_one_microbatch(const PartitionOptions& options, const std::string& strategy) {
  if (options.microbatches != 1) {
    throw InputError("--microbatches", "",
                     "only the pipeline strategy uses micro-batches, not " + strategy +
                         "; drop --microbatches or use --strategy pipeline");
  }
}

}  // namespace splitscope
