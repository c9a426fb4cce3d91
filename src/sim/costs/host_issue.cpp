#include "sim/costs/host_issue.hpp"

#include <algorithm>

#include "ir/ops/op_def.hpp"
#include "ir/params.hpp"
#include "plan/collective_schedule.hpp"
#include "plan/plan_walk.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

/// How the plan placed a compute op, as its kind's OpDef::device_calls needs it.
int compute_calls(const Plan& plan, const PlanOp& op) {
  const OpNode& node = plan.graph->node(op.node);
  const auto calls = op_def(node.kind).device_calls;
  SPLITSCOPE_CHECK(calls != nullptr, "an op kind without device_calls in its definition");
  SliceCalls placed{node, op.slice};
  // A weight-gradient op that adds to an earlier running sum has it as an extra last input.
  placed.adds_running_sum = op.inputs.size() > node.input_shapes.size();
  for (size_t slot = 0; slot < op.inputs.size() && slot < 64; ++slot) {
    const int input = op.inputs[slot];
    if (input < 0) continue;
    placed.inputs_present |= uint64_t{1} << slot;
    if (plan.value(input).channels != op.slice.out) placed.inputs_match_slice = false;
  }
  return calls(placed);
}

int update_calls(const Plan& plan, const PlanOp& op) {
  const Value& params = plan.value(op.params);
  const OpNode& node = plan.graph->node(params.node);
  int tensors = static_cast<int>(param_tensors(*plan.graph, params.node).size());
  if (node.kind == OpKind::kDense && tensors > kBias && !slice_carries_bias(node, params.reduce)) tensors -= 1;
  const bool adam = plan.graph->is_training() && plan.graph->training()->optimizer.adam();
  return std::max(1, tensors * (adam ? 2 : 1));
}

int local_delivery_calls(const CollectiveSchedule& schedule) {
  int calls = 0;
  for (const CollectiveDelivery& delivery : schedule.deliveries) {
    calls += delivery.local_copy >= 0 ? schedule.segments : 0;
  }
  return calls;
}

int send_calls(const CollectiveSchedule& schedule, const CollectiveSend& send) {
  // The cuda backend copies (and sums) each segment a chunk spans on its own.
  const int pieces = send.slice >= 0 ? 1 : static_cast<int>(schedule.pieces(send.elements).size());
  return pieces * (send.reduces ? 2 : 1);
}

int collective_calls(const Plan& plan, const PlanOp& op, CollectiveScheduleCache& schedules) {
  const CollectiveSchedule& schedule = schedules.of(plan, op);
  int calls = local_delivery_calls(schedule);
  for (const CollectiveSend& send : schedule.sends) calls += send_calls(schedule, send);
  return std::max(1, calls);
}

}  // namespace

std::vector<int> calls_before_sends(const CollectiveSchedule& schedule) {
  std::vector<int> before;
  before.reserve(schedule.sends.size());
  int calls = local_delivery_calls(schedule);
  for (const CollectiveSend& send : schedule.sends) {
    before.push_back(calls);
    calls += send_calls(schedule, send);
  }
  return before;
}

int device_calls(const Plan& plan, const PlanOp& op, CollectiveScheduleCache& schedules) {
  switch (op.role) {
    case OpRole::kCompute: return compute_calls(plan, op);
    case OpRole::kEpilogue:
    case OpRole::kTransfer: return 1;
    case OpRole::kCollective: return collective_calls(plan, op, schedules);
    case OpRole::kUpdate: return update_calls(plan, op);
  }
  return 1;
}

int device_calls(const Plan& plan, const PlanOp& op) {
  CollectiveScheduleCache schedules;
  return device_calls(plan, op, schedules);
}

std::vector<HostRelease> host_releases(const Plan& plan, double issue_seconds) {
  CollectiveScheduleCache schedules;
  return host_releases(plan, issue_seconds, schedules);
}

std::vector<HostRelease> host_releases(const Plan& plan, double issue_seconds, CollectiveScheduleCache& schedules) {
  std::vector<HostRelease> releases(plan.ops.size());
  if (issue_seconds <= 0) return releases;
  double issued = 0;  // host time spent so far
  for (int id : walk_plan(plan).order) {
    const int calls = device_calls(plan, plan.op(id), schedules);
    HostRelease& release = releases[static_cast<size_t>(id)];
    release.first = issued + issue_seconds;
    issued += calls * issue_seconds;
    release.last = issued;
  }
  return releases;
}

}  // namespace splitscope
