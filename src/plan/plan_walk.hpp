#pragma once
/// \file
/// The rules every runner of a Plan shares (plan.hpp's semantics), in one
/// place: the cpu executor, the cuda executor and the simulator all take
/// from here which spans an op produces (and their bytes), which ops an op
/// waits for, and in what order a device runs its compute ops. A new
/// schedule (GPipe, 1F1B) or collective algorithm changes the plan, never
/// the runners.

#include <cstdint>
#include <vector>

#include "plan/collective_schedule.hpp"
#include "plan/plan.hpp"
#include "timeline/timeline.hpp"
#include "util/check.hpp"

namespace splitscope {

/// A span an op puts on the timeline, before it is timed.
struct SpanSlot {
  int op = -1;
  int device = 0;
  Lane lane = Lane::kCompute;
  SpanKind kind = SpanKind::kCompute;
  int64_t flops = 0;
  int64_t bytes = 0;  ///< bytes that crossed into `device`
};

/// Appends the Span for `slot` to `spans`, its times not yet known (0), and
/// returns it: built in place, as a simulation appends a million of them.
inline Span& append_unstarted_span(std::vector<Span>& spans, const SpanSlot& slot) {
  Span& span = spans.emplace_back();
  span.device = slot.device;
  span.lane = slot.lane;
  span.kind = slot.kind;
  span.op = slot.op;
  span.flops = slot.flops;
  span.bytes = slot.bytes;
  return span;
}

/// The one span of a compute, epilogue or transfer op (inline: the simulator asks it of every op).
inline SpanSlot single_span(const PlanOp& op) {
  SPLITSCOPE_CHECK(op.role != OpRole::kCollective, "a collective has a span per delivery");
  if (op.role == OpRole::kTransfer) {
    const int64_t bytes = op.src_device == op.device ? 0 : op.bytes_moved;
    return SpanSlot{op.id, op.device, Lane::kCopyIn, SpanKind::kTransfer, 0, bytes};
  }
  return SpanSlot{op.id, op.device, Lane::kCompute, SpanKind::kCompute, op.flops, 0};
}

/// The span of a collective op on the device of one of its deliveries.
SpanSlot delivery_span(const PlanOp& op, const CollectiveDelivery& delivery);

/// The spans of `op`: a compute, epilogue or update op one on its device's compute
/// lane; a transfer one on its destination's copy-in lane (its value's
/// bytes, 0 if both ends are one device); a collective one per output, in
/// `outputs` order, on that output's device's copy-in lane, with the bytes
/// its algorithm delivers there (collective_schedule.hpp).
std::vector<SpanSlot> op_spans(const Plan& plan, const PlanOp& op);

/// The order in which the ops of a plan may be issued.
struct PlanWalk {
  /// Every op once, each after the ops writing its inputs and after the op
  /// before it in its device's schedule (a topological order of both).
  std::vector<int> order;
  /// Per op: the op before it in its device's schedule; -1 for the first,
  /// and for transfers and collectives (they run when their inputs exist).
  std::vector<int> schedule_previous;
};

/// Checks that `plan.schedule` lists each compute, epilogue and update op exactly
/// once, on its own device, and nothing else; returns each op's
/// predecessor in its schedule (PlanWalk::schedule_previous). Throws
/// std::logic_error naming the op otherwise (a bug in the plan).
std::vector<int> schedule_predecessors(const Plan& plan);
/// The same, given by op its device if it is a compute, epilogue or update
/// op and -1 otherwise (what a caller that has read the ops already knows;
/// the check then reads no PlanOp but the ones it names in an error).
std::vector<int> schedule_predecessors(const Plan& plan, std::vector<int> scheduled_device);

/// The walk of `plan`; throws std::logic_error where a schedule runs an op
/// before the data it needs can exist (the schedules and the data flow form
/// a cycle), naming a device and op of the cycle.
PlanWalk walk_plan(const Plan& plan);

}  // namespace splitscope
