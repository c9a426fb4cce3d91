#include "search/priced_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/costs/machine_cost_function.hpp"
#include "util/errors.hpp"
#include "report/text_table.hpp"

namespace splitscope {

std::optional<PricedPlan> price_plan(const PlanSpec& spec, const std::shared_ptr<const Graph>& graph,
                                     const Simulator& simulator, int64_t memory_limit_bytes, RefusedPlan& refused) {
  bool cut_off = false;
  return price_plan_until(spec, graph, simulator, memory_limit_bytes, SimulationDeadline(), refused, cut_off);
}

std::optional<PricedPlan> price_plan_until(const PlanSpec& spec, const std::shared_ptr<const Graph>& graph,
                                           const Simulator& simulator, int64_t memory_limit_bytes,
                                           const SimulationDeadline& deadline, RefusedPlan& refused, bool& cut_off) {
  cut_off = false;
  refused = {spec, ""};
  std::optional<Plan> plan;
  try {
    plan = build_plan(spec, graph, std::make_shared<MachineCostFunction>(simulator.machine()));
  } catch (const InputError& error) {
    refused.reason = error.problem();
    return std::nullopt;
  }
  // A large plan takes seconds to build: the budget may have run out meanwhile.
  if (deadline.passed()) {
    cut_off = true;
    return std::nullopt;
  }
  PricedPlan priced;
  priced.spec = pinned_spec(spec, *plan);
  for (const DeviceMemory& memory : plan->memory) {
    priced.peak_memory_bytes.push_back(memory.peak);
    priced.peak_memory_max = std::max(priced.peak_memory_max, memory.peak);
  }
  if (priced.peak_memory_max > memory_limit_bytes) {
    refused.spec = priced.spec;
    refused.reason = fmt::format("needs {} on a device, over the limit of {}", binary_bytes(double(priced.peak_memory_max)),
                                 binary_bytes(double(memory_limit_bytes)));
    return std::nullopt;
  }
  std::optional<Timeline> simulated = simulator.simulate(*plan, deadline);
  if (!simulated) {
    cut_off = true;
    return std::nullopt;
  }
  const Timeline& timeline = *simulated;
  priced.makespan_us = timeline.makespan_us();
  std::vector<double> compute(static_cast<size_t>(plan->devices), 0.0);
  std::vector<double> copies(static_cast<size_t>(plan->devices), 0.0);
  for (const Span& span : timeline.spans) {
    if (span.device < 0 || span.device >= plan->devices) continue;
    if (span.lane == Lane::kCompute) compute[static_cast<size_t>(span.device)] += span.duration_us();
    if (span.kind != SpanKind::kCompute) copies[static_cast<size_t>(span.device)] += span.duration_us();
  }
  const size_t busiest = static_cast<size_t>(std::max_element(compute.begin(), compute.end()) - compute.begin());
  priced.compute_us = compute[busiest];
  priced.transfer_us = copies[busiest];
  priced.idle_us = std::max(0.0, priced.makespan_us - priced.compute_us);
  priced.samples_per_second =
      priced.makespan_us > 0 ? static_cast<double>(graph->batch()) / (priced.makespan_us * 1e-6) : 0.0;
  return priced;
}

}  // namespace splitscope
