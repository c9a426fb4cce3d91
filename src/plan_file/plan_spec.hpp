#pragma once
/// \file
/// A plan as the parameters that rebuild it: which strategy, how many
/// replicas, micro-batches, the schedule, recomputation and, for the layer
/// splits, the stage cuts. The partitioners turn it into the Plan; the plan
/// file (plan_file.hpp) and the search (src/search/) speak in it.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "ir/precision.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan.hpp"

namespace splitscope {

struct PlanSpec {
  std::string strategy = "single";  ///< a name of strategy_names()
  int devices = 1;                  ///< all of them, every replica's
  int replicas = 1;                 ///< data-parallel copies of the strategy (replicas.hpp)
  int microbatches = 1;             ///< micro-batched strategies (pipeline), per replica
  PipelineSchedule schedule = PipelineSchedule::kGpipe;  ///< training pipelines
  bool recompute = false;           ///< training
  /// Layer splits: the first stage unit of each stage (PartitionOptions::stage_starts).
  std::vector<int> stage_starts;
  int parameter_servers = 1;        ///< ps
  int64_t bucket_bytes = int64_t{25} << 20;  ///< training replicas' all-reduce buckets
  Precision precision = Precision::kFp32;    ///< what the plan stores its tensors in (`--precision`)
  /// `hybrid`: its tensor, pipeline and data degrees (`--degrees T,P,D`); its
  /// stage cuts are `stage_starts`, one per pipeline stage.
  std::optional<ParallelDegrees> degrees;
  bool sequence_parallel = false;  ///< `tensor` and `hybrid` on a transformer (`--sequence-parallel`)
};

/// Whether `strategy` cuts the network into contiguous stages (horizontal,
/// pipeline; hybrid's pipeline stages too).
bool is_layer_split(const std::string& strategy);

/// The partition options `spec` asks for, pricing with `cost` (null: the roofline).
PartitionOptions partition_options_of(const PlanSpec& spec, std::shared_ptr<const CostFunction> cost);

/// The checked plan of `graph` that `spec` describes. InputError (exit 2) for
/// options the strategy refuses, as `plan` gives them.
Plan build_plan(const PlanSpec& spec, const std::shared_ptr<const Graph>& graph,
                std::shared_ptr<const CostFunction> cost = nullptr);

/// `spec` with its stage cuts read off `plan` (built from it) when it had
/// none: a layer split balanced by cost, pinned to the cuts it got.
PlanSpec pinned_spec(const PlanSpec& spec, const Plan& plan);

/// "pipeline x2, 8 micro-batches, 1f1b, recompute, stages 0,3": one line.
std::string describe(const PlanSpec& spec);

}  // namespace splitscope
