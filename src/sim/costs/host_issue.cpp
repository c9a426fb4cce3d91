#include "sim/costs/host_issue.hpp"

#include <algorithm>

#include "ir/ops/conv2d_rules.hpp"
#include "ir/params.hpp"
#include "plan/collective_schedule.hpp"
#include "plan/plan_walk.hpp"

namespace splitscope {
namespace {

bool has_input(const PlanOp& op, int slot) {
  return static_cast<size_t>(slot) < op.inputs.size() && op.inputs[static_cast<size_t>(slot)] >= 0;
}

/// A weight-gradient op that adds to an earlier running sum (its extra last input) first copies that sum in.
int running_sum_copy(const OpNode& node, const PlanOp& op) {
  return op.inputs.size() > node.input_shapes.size() ? 1 : 0;
}

int compute_calls(const Plan& plan, const PlanOp& op) {
  const OpNode& node = plan.graph->node(op.node);
  const OpAttrs& attrs = node.attrs;
  if (const auto calls = op_def(node.kind).device_calls) return calls(node, op.slice, running_sum_copy(node, op) != 0);
  switch (node.kind) {
    case OpKind::kDense: {
      const bool partial = op.slice.is_partial(node);
      const bool bias = slice_carries_bias(node, op.slice.reduce);
      return 1 + ((bias || (!partial && attrs.activation != Activation::kNone)) ? 1 : 0);
    }
    case OpKind::kConv2d: {
      const auto pieces = group_pieces(op.slice.out, node.output_shapes.at(0).at(0) / attrs.groups);
      return static_cast<int>(pieces.size()) + ((attrs.bias || attrs.activation != Activation::kNone) ? 1 : 0);
    }
    case OpKind::kConv2dGradInput: {
      // One call per piece, and a zero fill where the pieces leave channels unwritten.
      const int64_t per_group = node.input_shapes.at(0).at(0) / attrs.groups;
      const int64_t channels = node.output_shapes.at(0).at(0) / attrs.groups;
      const int zero = group_channels(op.slice.reduce, per_group, channels) != op.slice.out ? 1 : 0;
      return static_cast<int>(group_pieces(op.slice.reduce, per_group).size()) + zero;
    }
    case OpKind::kLstmCell:
    case OpKind::kGruCell:
    case OpKind::kLstmCellGrad:
    case OpKind::kGruCellGrad: return 2 + (has_input(op, kCellHiddenSlot) ? 1 : 0);
    case OpKind::kAdd:
      // One sum over the slice's rows where every input holds just its
      // channels; else one per row (the rows of the inputs are strided apart).
      for (int input : op.inputs) {
        if (input >= 0 && plan.value(input).channels != op.slice.out) return static_cast<int>(op.slice.batch.size());
      }
      return 1;
    case OpKind::kStack: return std::max<int>(1, static_cast<int>(op.slice.out.size()));
    case OpKind::kConcat: {
      int copies = 0;  // one per input the slice takes channels from
      for (size_t slot = 0; slot < node.input_shapes.size(); ++slot) {
        copies += needed_input_channels(*plan.graph, op.node, op.slice, static_cast<int>(slot)).size() > 0 ? 1 : 0;
      }
      return std::max(1, copies);
    }
    case OpKind::kDenseGradWeight:
      return 1 + (slice_carries_bias(node, op.slice.reduce) ? 1 : 0) + running_sum_copy(node, op);
    case OpKind::kConv2dGradWeight: {
      const auto pieces = group_pieces(op.slice.out, node.input_shapes.at(1).at(0) / attrs.groups);
      return static_cast<int>(pieces.size()) + (attrs.bias ? 1 : 0) + running_sum_copy(node, op);
    }
    case OpKind::kCellGradInput: return 2;
    case OpKind::kCellGradHidden: {
      // Gather and product; the GRU's direct part copied in first, after a
      // zero fill of the units a slice's direct part leaves out.
      if (!attrs.gru || !has_input(op, 1)) return 2;
      return 3 + (op.slice.reduce.size() != attrs.hidden ? 1 : 0);
    }
    case OpKind::kCellGradWeight: {
      // Gather and dWx; gather (GRU) and dWh, or at t = 0 a zero fill where nothing is summed onto;
      // the bias sum; the running sum copied in.
      const int sum = running_sum_copy(node, op);
      const int recurrent = has_input(op, 1) ? (attrs.gru ? 2 : 1) : (sum == 0 ? 1 : 0);
      return 2 + recurrent + (attrs.bias ? 1 : 0) + sum;
    }
    default: return 1;
  }
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
