#pragma once
/// \file
/// The simulator's own error for a plan it priced (RunInfo::model_error).
///
/// Every compute op that an achieved-rate rule prices carries the rule's
/// median error on the GPUs it was measured on (AchievedRateRule::
/// median_error, from models/rules/NAME.json): that is how far off an op of
/// its family typically is. A plan's error is the mean of those errors
/// weighted by each op's predicted time:
///
///   relative      = Σ seconds(op) · error(op) / Σ seconds(op)   over the ops with an error
///   covered_share = Σ seconds(op) over the ops with an error / Σ seconds(op) over every compute-lane op
///
/// Epilogues, optimizer updates and ops priced by a measured time, an
/// efficiency or the datasheet rules alone have no measured error: they
/// lower the covered share. Transfers and collectives are not in it either
/// (no measured link table feeds the rules), which docs/cost-model.md says.

#include <optional>

#include "plan/plan.hpp"
#include "sim/costs/op_cost_model.hpp"
#include "timeline/run_result.hpp"

namespace splitscope {

/// nullopt where no op of `plan` has a measured error on `costs`' device.
std::optional<ModelErrorInfo> plan_model_error(const OpCostModel& costs, const Plan& plan);

}  // namespace splitscope
