#include "plan/plan_limits.hpp"

#include <fmt/format.h>

#include "util/errors.hpp"

namespace splitscope {

void check_plan_ops(const Plan& plan, int64_t ops) {
  if (ops <= kMaxPlanOps) return;
  throw InputError("--devices", "",
                   fmt::format("the {} plan of {} over {} devices has more than {} ops, the most a plan may have "
                               "(docs/limits.md); give fewer devices, another strategy, or a network of fewer layers",
                               plan.strategy, plan.graph->name(), plan.devices, kMaxPlanOps));
}

}  // namespace splitscope
