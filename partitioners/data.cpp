// `data` (mirrored data parallelism): N replicas of the whole network, the
// batch split N ways (the first B mod N replicas one row more). A forward run
// is batch-split inference and moves nothing; a training step ends with one
// ring all-reduce per bucket of its gradients (PyTorch DDP's buckets,
// `bucket_bytes`; gradient_all_reduce.hpp), which the plan builder places:
// each starts as soon as backward has written the bucket's gradients on
// every replica, so it overlaps the backward of the layers before them.
// The alternative every model split must beat.
//
// `ps` (parameter servers) places the same replicas, but leaves each
// replica's gradient of its own rows on it: the shards that hold the weights
// aggregate and apply them outside the plan, synchronously or not
// (exec/parameter_server.hpp), so its plan has no all-reduce and no update.
#include <algorithm>

#include "plan/parameter_shards.hpp"
#include "plan/plan_builder.hpp"
#include "plan/plan_replicas.hpp"
#include "partitioners/strategies.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

class ReplicaPartitioner : public Partitioner {
 public:
  ReplicaPartitioner(std::string_view name, std::string_view summary, StrategyTraits traits)
      : name_(name), summary_(summary), traits_(traits) {}

  std::string_view name() const override { return name_; }
  std::string_view summary() const override { return summary_; }
  StrategyTraits traits() const override { return traits_; }
  int max_devices(const Graph& graph) const override {
    return static_cast<int>(std::min<int64_t>(graph.batch(), int64_t{1} << 20));
  }
  /// `data` is the baseline of a training comparison beside `single`;
  /// forward comparisons run it when asked (`--strategies data`). `ps` runs
  /// through `run` only (its shards are not a plan a comparison can repeat).
  bool applies(const Graph& graph, int devices) const override {
    return !traits_.parameter_server && graph.is_training() && devices > 1 && devices <= max_devices(graph);
  }

  Plan partition(std::shared_ptr<const Graph> graph, const PartitionOptions& options) const override {
    require_one_microbatch(options, name_);
    if (traits_.parameter_server && !graph->is_training()) {
      throw InputError("--strategy", "", "ps trains (its shards apply gradients); add --train, or use data for inference");
    }
    require_devices(options, max_devices(*graph), name_, "one sample per replica at least");
    // One replica (and, for uneven rows, one of the shorter), held once.
    const auto rows = split_evenly(graph->batch(), options.devices);
    Plan plan = replica(graph, options, rows, 0);
    if (plan.replicas) {
      ReplicaSet& set = *plan.replicas;
      set.rows = rows;
      while (set.short_from < set.count && rows[static_cast<size_t>(set.short_from)].size() == rows[0].size()) {
        ++set.short_from;
      }
      if (set.short_from < set.count) {
        set.short_replica = std::make_shared<const Plan>(replica(graph, options, rows, set.short_from));
      }
      plan.devices = options.devices;
    }
    if (!options.compact_replicas || traits_.parameter_server) plan = expand_replicas(plan);
    if (traits_.parameter_server) add_shards(plan, options.parameter_servers);
    return plan;
  }

 private:
  /// Replica `r` over its rows on device 0, one of rows.size() alike
  /// replicas: the whole network in wavefront order, ending with the
  /// gradient all-reduces that span the replicas.
  Plan replica(const std::shared_ptr<const Graph>& graph, const PartitionOptions& options,
               const std::vector<Range>& rows, int r) const {
    PlanBuilder builder(graph, name_, traits(), 1, 1);
    builder.set_gradient_buckets(options.bucket_bytes);
    builder.hold_replicas(static_cast<int>(rows.size()));
    for (NodeId id : graph->wavefront_order()) {
      if (graph->node(id).kind == OpKind::kInput) continue;
      builder.place(id, 0, full_slice(graph->node(id), rows[static_cast<size_t>(r)]), 0);
    }
    Plan plan = builder.build();
    if (plan.replicas) plan.replicas->short_from = 1;  // set by the caller, from 1 (replica 0 is never short)
    return plan;
  }

  /// The shards, as devices after the workers: the weights and the
  /// optimizer's state of the weight sets parameter_shards() gives them.
  static void add_shards(Plan& plan, int shards) {
    const int workers = plan.devices;
    if (shards < 1) throw InputError("--ps", "", "needs at least one parameter-server shard, got " + std::to_string(shards));
    const int weight_sets = static_cast<int>(std::count_if(plan.parameters.begin(), plan.parameters.end(),
                                                           [&](int id) { return plan.value(id).device == 0; }));
    if (shards > weight_sets) {
      throw InputError("--ps", "",
                       "each shard holds whole weight sets, and " + plan.graph->model().name + " has " +
                           std::to_string(weight_sets) + "; give at most that many shards");
    }
    plan.parameter_servers = shards;
    plan.devices = workers + shards;
    plan.schedule.resize(static_cast<size_t>(plan.devices));
    plan.memory.resize(static_cast<size_t>(plan.devices));
    const std::vector<int> shard_of = parameter_shards(plan, 0);
    const int per_param = plan.graph->is_training() ? plan.graph->training()->optimizer.state_per_param() : 0;
    size_t index = 0;
    for (int id : plan.parameters) {
      const Value& value = plan.value(id);
      if (value.device != 0) continue;
      DeviceMemory& shard = plan.memory[static_cast<size_t>(workers + shard_of[index++])];
      shard.params += value.bytes;
      shard.optimizer_state += per_param * value.bytes;
      shard.peak = shard.params + shard.optimizer_state;
    }
    const std::string who = shards == 1 ? "1 parameter-server shard (device " + std::to_string(workers) + ") holds"
                                        : std::to_string(shards) + " parameter-server shards (devices " +
                                              std::to_string(workers) + "-" + std::to_string(plan.devices - 1) + ") hold";
    plan.notes.push_back(who + " the weights and the optimizer; the workers pull weights and push gradients");
  }

  std::string name_;
  std::string summary_;
  StrategyTraits traits_;
};

}  // namespace

std::unique_ptr<Partitioner> make_data_partitioner() {
  return std::make_unique<ReplicaPartitioner>(
      "data", "replicas of the whole network, the batch split between them, gradients all-reduced",
      StrategyTraits{.trains = true, .replicated = true});
}

std::unique_ptr<Partitioner> make_ps_partitioner() {
  return std::make_unique<ReplicaPartitioner>(
      "ps", "worker replicas of the whole network, the batch split between them, weights on parameter-server shards",
      StrategyTraits{.trains = true, .replicated = true, .parameter_server = true});
}

}  // namespace splitscope
