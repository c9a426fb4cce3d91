#pragma once
/// \file
/// A partitioning strategy: Graph -> Plan. One implementation per file
/// (single, horizontal, pipeline, vertical, tensor), all behind this interface,
/// and all sharing PlanBuilder for the data movement between devices.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partitioners/cost_function.hpp"
#include "plan/plan.hpp"

namespace splitscope {

struct PartitionOptions {
  int devices = 1;
  int microbatches = 1;  ///< pipeline only; the others take 1
  /// Prices ops when balancing; null means the default roofline.
  std::shared_ptr<const CostFunction> cost;
  /// Training graphs on a micro-batched pipeline: each stage's order of forwards and backwards.
  PipelineSchedule schedule = PipelineSchedule::kGpipe;
  /// `ps`: parameter-server shards, devices of their own after the workers.
  int parameter_servers = 1;
  /// Training replicas (`data`, `--replicas`): the gradient all-reduce's
  /// bucket size in bytes (gradient_all_reduce.hpp; PyTorch DDP's
  /// bucket_cap_mb, 25 MiB); 0: one all-reduce per weight slice.
  int64_t bucket_bytes = int64_t{25} << 20;
  /// Training: re-run each micro-batch's forward ops for its backward instead
  /// of stashing their activations (`--recompute`, recompute.hpp); make_plan() applies it.
  bool recompute = false;
  /// Training replicas (`--zero`): 1 shards the optimizer state over the
  /// replicas of each weight slice (ZeRO stage 1; Plan::zero_stage); make_plan() applies it.
  int zero_stage = 0;
  /// Layer splits (horizontal, pipeline): the first stage unit
  /// (stage_units.hpp) of each stage, one per device, starting at 0 and
  /// rising (`--stages`, a plan file's cut points); empty: the stages are
  /// balanced by `cost`. With replicas, every replica takes the same cuts.
  std::vector<int> stage_starts = {};
  /// `hybrid` (`--degrees T,P,D`): its tensor, pipeline and data degrees;
  /// absent: hybrid refuses to guess them.
  std::optional<ParallelDegrees> degrees = std::nullopt;
  /// `tensor` and `hybrid` on a transformer (`--sequence-parallel`,
  /// head_split.hpp): layer norms, residual adds and dropout between the
  /// tensor-parallel pairs run on a share of the sequence on each device,
  /// with reduce-scatters and all-gathers in place of the all-reduces.
  bool sequence_parallel = false;
  /// What the plan stores its tensors in (`--precision`, plan_precision.hpp); make_plan() applies it.
  Precision precision = Precision::kFp32;
  /// `data` and `--replicas`: hold the replicas once (Plan::replicas, plan_replicas.hpp)
  /// instead of writing every replica's ops; for callers that read the
  /// compact form (the simulator). make_plan() keeps it only where no pass
  /// after the partitioner applies (no --recompute, --zero, --precision).
  bool compact_replicas = false;
};

class Partitioner {
 public:
  virtual ~Partitioner() = default;
  /// "single", "horizontal", "pipeline", "vertical", "tensor"
  virtual std::string_view name() const = 0;
  /// One sentence: what it does.
  virtual std::string_view summary() const = 0;
  /// What callers need to know of it (its plans carry the same).
  virtual StrategyTraits traits() const { return {}; }
  /// Most devices this strategy can put to use on `graph`.
  virtual int max_devices(const Graph& graph) const = 0;
  /// Whether the strategy is worth running on `graph` over `devices` (what
  /// `compare` runs by default): it can use that many devices, and it is not
  /// merely another strategy under a different name.
  virtual bool applies(const Graph& graph, int devices) const { return devices <= max_devices(graph); }
  /// Builds the plan; throws InputError (exit 2) for impossible options,
  /// naming the maximum where there is one.
  virtual Plan partition(std::shared_ptr<const Graph> graph, const PartitionOptions& options) const = 0;
};

/// The strategy of that name; InputError listing the names otherwise.
std::unique_ptr<Partitioner> make_partitioner(std::string_view name);
/// The strategy of that name run as `replicas` data-parallel copies
/// (replicas.hpp; itself for 1). InputError for fewer than 1, or for a
/// strategy that already replicates the network (data, ps).
std::unique_ptr<Partitioner> make_partitioner(std::string_view name, int replicas);
/// `partitioner`'s plan of `graph`, then what `options` asks of every
/// strategy's plan alike (re-materialisation). InputError as partition().
Plan make_plan(const Partitioner& partitioner, std::shared_ptr<const Graph> graph, const PartitionOptions& options);
/// All strategy names, in the order `compare` shows them.
std::vector<std::string> strategy_names();
/// The name of the strategy every other is judged against (traits().baseline).
std::string baseline_strategy();

}  // namespace splitscope
