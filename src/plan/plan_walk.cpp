#include "plan/plan_walk.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <queue>

#include "util/check.hpp"

namespace splitscope {
namespace {

bool is_scheduled(const PlanOp& op) {
  return op.role == OpRole::kCompute || op.role == OpRole::kEpilogue || op.role == OpRole::kUpdate;
}

// States of an op in schedule_predecessors (devices are >= 0).
constexpr int kNotScheduled = -1;
constexpr int kSeen = -2;
constexpr int kOnNoDevice = -3;  ///< a compute op whose device is negative: no schedule may list it

}  // namespace

SpanSlot delivery_span(const PlanOp& op, const CollectiveDelivery& delivery) {
  return SpanSlot{op.id, delivery.device, Lane::kCopyIn, SpanKind::kCollective, 0, delivery.bytes_received};
}

std::vector<SpanSlot> op_spans(const Plan& plan, const PlanOp& op) {
  if (op.role != OpRole::kCollective) return {single_span(op)};
  std::vector<SpanSlot> spans;
  for (const CollectiveDelivery& delivery : collective_schedule(plan, op).deliveries) {
    spans.push_back(delivery_span(op, delivery));
  }
  return spans;
}

std::vector<int> schedule_predecessors(const Plan& plan) {
  // One sequential pass over the ops (a million-op plan does not fit in the
  // caches), then the schedules against a compact copy of what they need.
  std::vector<int> scheduled_device(plan.ops.size());
  for (size_t id = 0; id < plan.ops.size(); ++id) {
    const PlanOp& op = plan.ops[id];
    scheduled_device[id] = !is_scheduled(op) ? kNotScheduled : op.device >= 0 ? op.device : kOnNoDevice;
  }
  return schedule_predecessors(plan, std::move(scheduled_device));
}

std::vector<int> schedule_predecessors(const Plan& plan, std::vector<int> scheduled_device) {
  SPLITSCOPE_CHECK(plan.schedule.size() <= static_cast<size_t>(plan.devices),
                   fmt::format("the plan has {} schedules for {} devices", plan.schedule.size(), plan.devices));
  SPLITSCOPE_CHECK(scheduled_device.size() == plan.ops.size(), "one device per op");
  size_t expected = 0;
  for (int device : scheduled_device) expected += device != kNotScheduled ? 1 : 0;
  std::vector<int> previous(plan.ops.size(), -1);
  size_t seen = 0;
  for (size_t device = 0; device < plan.schedule.size(); ++device) {
    int before = -1;
    for (int id : plan.schedule[device]) {
      SPLITSCOPE_CHECK(id >= 0 && static_cast<size_t>(id) < plan.ops.size(),
                       fmt::format("the schedule of device {} lists op {}, which the plan lacks", device, id));
      int& state = scheduled_device[static_cast<size_t>(id)];
      SPLITSCOPE_CHECK(state != kSeen, fmt::format("op {} ({}) appears twice in the schedules", id,
                                                   op_label(plan, plan.op(id))));
      SPLITSCOPE_CHECK(state == static_cast<int>(device),
                       fmt::format("the schedule of device {} lists op {} ({}), which is not a compute op there",
                                   device, id, op_label(plan, plan.op(id))));
      state = kSeen;
      ++seen;
      previous[static_cast<size_t>(id)] = before;
      before = id;
    }
  }
  if (seen == expected) return previous;
  for (const PlanOp& op : plan.ops) {
    const int state = scheduled_device[static_cast<size_t>(op.id)];
    SPLITSCOPE_CHECK(state == kNotScheduled || state == kSeen,
                     fmt::format("compute op {} ({}) is in no schedule", op.id, op_label(plan, op)));
  }
  return previous;
}

PlanWalk walk_plan(const Plan& plan) {
  PlanWalk walk;
  walk.schedule_previous = schedule_predecessors(plan);
  const size_t n = plan.ops.size();

  // Kahn's algorithm over data edges and schedule edges. Ready ops are taken
  // lowest id first, so a plan whose schedules follow op order walks in op order.
  std::vector<std::vector<int>> successors = op_successors(plan);
  std::vector<int> waiting(n, 0);
  for (size_t id = 0; id < n; ++id) {
    for (int next : successors[id]) waiting[static_cast<size_t>(next)] += 1;
  }
  for (size_t id = 0; id < n; ++id) {
    const int before = walk.schedule_previous[id];
    if (before >= 0) {
      successors[static_cast<size_t>(before)].push_back(static_cast<int>(id));
      waiting[id] += 1;
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (size_t id = 0; id < n; ++id) {
    if (waiting[id] == 0) ready.push(static_cast<int>(id));
  }
  walk.order.reserve(n);
  while (!ready.empty()) {
    const int id = ready.top();
    ready.pop();
    walk.order.push_back(id);
    for (int successor : successors[static_cast<size_t>(id)]) {
      if (--waiting[static_cast<size_t>(successor)] == 0) ready.push(successor);
    }
  }
  if (walk.order.size() == n) return walk;
  for (const PlanOp& op : plan.ops) {
    SPLITSCOPE_CHECK(waiting[static_cast<size_t>(op.id)] == 0 || !is_scheduled(op),
                     fmt::format("the schedule of device {} runs op {} ({}) before the data it needs can exist",
                                 op.device, op.id, op_label(plan, op)));
  }
  SPLITSCOPE_CHECK(false, "the plan's ops wait on each other in a cycle");
  return walk;
}

}  // namespace splitscope
