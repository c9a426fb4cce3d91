#include "plan_file/plan_spec.hpp"

#include <fmt/format.h>

#include "util/strings.hpp"

#include "plan/plan_check.hpp"
#include "partitioners/hybrid.hpp"
#include "partitioners/stage_units.hpp"

namespace splitscope {

bool is_layer_split(const std::string& strategy) {
  return strategy == "horizontal" || strategy == "pipeline" || strategy == "hybrid";
}

PartitionOptions partition_options_of(const PlanSpec& spec, std::shared_ptr<const CostFunction> cost) {
  PartitionOptions options;
  options.devices = spec.devices;
  options.microbatches = spec.microbatches;
  options.cost = std::move(cost);
  options.schedule = spec.schedule;
  options.parameter_servers = spec.parameter_servers;
  options.bucket_bytes = spec.bucket_bytes;
  options.recompute = spec.recompute;
  options.stage_starts = spec.stage_starts;
  options.precision = spec.precision;
  options.degrees = spec.degrees;
  options.sequence_parallel = spec.sequence_parallel;
  return options;
}

Plan build_plan(const PlanSpec& spec, const std::shared_ptr<const Graph>& graph,
                std::shared_ptr<const CostFunction> cost) {
  Plan plan = make_plan(*make_partitioner(spec.strategy, spec.replicas), graph,
                        partition_options_of(spec, std::move(cost)));
  check(plan);
  return plan;
}

PlanSpec pinned_spec(const PlanSpec& spec, const Plan& plan) {
  PlanSpec pinned = spec;
  if (is_layer_split(spec.strategy) && pinned.stage_starts.empty()) {
    // A hybrid stage is a tensor group of T devices; replica 0 is the first T·P.
    const int stage_devices = spec.degrees ? spec.degrees->tensor : 1;
    const int replica_devices = spec.degrees ? spec.degrees->tensor * spec.degrees->pipeline : spec.devices / spec.replicas;
    pinned.stage_starts = plan_stage_starts(plan, replica_devices, stage_devices);
  }
  return pinned;
}

namespace {

std::string join_numbers(const std::vector<int>& numbers) {
  std::vector<std::string> texts;
  for (int number : numbers) texts.push_back(std::to_string(number));
  return join(texts, ",");
}

}  // namespace

std::string describe(const PlanSpec& spec) {
  std::string text = spec.degrees ? hybrid_plan_name(*spec.degrees) : spec.strategy;
  if (spec.replicas > 1) text += fmt::format(" x{}", spec.replicas);
  if (spec.microbatches > 1) text += fmt::format(", {} micro-batches", spec.microbatches);
  if (spec.microbatches > 1 && spec.schedule != PipelineSchedule::kGpipe) {
    text += fmt::format(", {}", to_string(spec.schedule));
  }
  if (spec.recompute) text += ", recompute";
  if (spec.precision != Precision::kFp32) text += fmt::format(", {}", to_string(spec.precision));
  if (spec.sequence_parallel) text += ", sequence-parallel";
  if (!spec.stage_starts.empty() && spec.stage_starts.size() > 1) {
    text += ", stages " + join_numbers(spec.stage_starts);
  }
  return text;
}

}  // namespace splitscope
