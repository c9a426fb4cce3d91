#include "sim/costs/model_error.hpp"

#include <vector>

#include "ir/ops/op_def.hpp"
#include "sim/costs/achieved_rates.hpp"

namespace splitscope {

std::optional<ModelErrorInfo> plan_model_error(const OpCostModel& costs, const Plan& plan) {
  if (!costs.has_achieved_rates()) return std::nullopt;
  OpCostModel::PlanPricing pricing(costs, plan);
  // Ops of one kind and variant share their family (achieved_rate_variant), so each is looked up once;
  // on a machine with measured op times an op's own signature decides, so each is looked up.
  const bool by_op = costs.has_calibration();
  std::vector<std::optional<std::optional<double>>> error_of(op_defs().size() * kAchievedRateVariants);
  double all_seconds = 0;
  double covered_seconds = 0;
  double weighted_error = 0;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCompute && op.role != OpRole::kEpilogue && op.role != OpRole::kUpdate) continue;
    const double seconds = pricing.seconds(op);
    all_seconds += seconds;
    if (op.role != OpRole::kCompute) continue;
    std::optional<double> error;
    if (by_op) {
      error = costs.op_rule_error(plan, op);
    } else {
      const OpNode& node = plan.graph->node(op.node);
      auto& known = error_of[static_cast<size_t>(node.kind) * kAchievedRateVariants +
                             static_cast<size_t>(achieved_rate_variant(node, op.slice))];
      if (!known) known = costs.op_rule_error(plan, op);
      error = *known;
    }
    if (!error) continue;
    covered_seconds += seconds;
    weighted_error += seconds * *error;
  }
  if (covered_seconds <= 0) return std::nullopt;
  return ModelErrorInfo{weighted_error / covered_seconds, covered_seconds / all_seconds};
}

}  // namespace splitscope
