#pragma once
/// \file
/// A Plan as scheduler tasks (plan.hpp's semantics):
/// - a compute or epilogue op: one task on its device's compute lane, after
///   the op before it in that device's schedule;
/// - a transfer: one task on the destination's copy-in lane;
/// - a collective: one task per output device, on that device's copy-in lane,
///   assembling that device's result from every participant's input;
/// each task after the tasks writing the values it reads.

#include <cstdint>
#include <memory>
#include <vector>

#include "exec/cpu/task_graph.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "partitioners/plan.hpp"

namespace splitscope {

/// What the timeline says about a task.
struct TaskSpan {
  int op = -1;
  int device = 0;
  Lane lane = Lane::kCompute;
  SpanKind kind = SpanKind::kCompute;
  int64_t flops = 0;
  int64_t bytes = 0;  ///< bytes this task receives from other devices
};

/// Everything one run of a plan needs, built once and run many times.
struct PlanTasks {
  TaskGraph graph;
  std::vector<TaskSpan> spans;  ///< by task id
  std::vector<std::vector<float>> scratch;  ///< per device, for the kernels that need it
};

/// Builds the tasks of `plan` over `buffers` and `weights` (which must outlive
/// the result). Throws std::logic_error (a bug in the plan) where the plan
/// breaks its own rules: a compute op missing from its device's schedule, a
/// value read before it is written, ranges that do not fit.
PlanTasks build_plan_tasks(const Plan& plan, ValueBuffers& buffers, WeightStore& weights);

/// Bytes that output `index` of collective `op` receives from other devices:
/// for a gather, the input slices held elsewhere; for an all-reduce, its share
/// of the ring's traffic (op.bytes_moved / participants, the remainder spread
/// over the first outputs), so that the spans of a collective add up to its bytes_moved.
int64_t collective_received_bytes(const Plan& plan, const PlanOp& op, size_t index);

}  // namespace splitscope
