#pragma once
/// \file
/// A Plan as scheduler tasks, walked by plan/plan_walk.hpp's rules:
/// - a compute or epilogue op: one task on its device's compute lane, after
///   the op before it in that device's schedule;
/// - a transfer: one task on the destination's copy-in lane;
/// - a collective: one task per send of its algorithm
///   (plan/collective_schedule.hpp), on the receiver's copy-in lane,
///   plus one per local copy of a participant's own part;
/// each task after the tasks writing the values it reads.
/// The timeline gets the spans op_spans() names; a collective's span on a
/// device runs from the first of its sends into or out of that device to the
/// end of the last one into it (the simulator's rule).

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "exec/cpu/scheduler.hpp"
#include "exec/cpu/task_graph.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "exec/executor.hpp"
#include "plan/plan.hpp"
#include "plan/plan_walk.hpp"

namespace splitscope {

/// Which spans a task's times count in.
struct TaskSpans {
  int span = -1;     ///< the span it does the work of: its start and end count
  int touches = -1;  ///< a span only its start counts in (a send out of that device); -1 for none
};

/// Everything one run of a plan needs, built once and run many times.
struct PlanTasks {
  TaskGraph graph;
  std::vector<SpanSlot> spans;         ///< the timeline's spans, in op order
  std::vector<TaskSpans> task_spans;   ///< by task id
  std::vector<std::vector<float>> scratch;  ///< per device, for the kernels that need it
  std::vector<std::vector<float>> staging;  ///< reduce-scatters' partial sums in transit (collective_schedule.hpp)
};

/// Builds the tasks of `plan` over `buffers` and `weights` (which must outlive
/// the result). With `straggler`, the first op of its device's schedule
/// sleeps its delay before its work (inside that op's span: the device is
/// slow, not the data late). Throws std::logic_error (a bug in the plan)
/// where the plan breaks its own rules: a compute op missing from its
/// device's schedule, a value read before it is written, ranges that do not fit.
PlanTasks build_plan_tasks(const Plan& plan, ValueBuffers& buffers, WeightStore& weights,
                           const std::optional<StragglerDelay>& straggler = std::nullopt);

/// The Timeline of one run of `tasks` from when each task ran: a span
/// starts at the earliest start of the tasks in or touching it and ends at
/// the latest end of the tasks doing its work.
Timeline tasks_timeline(const PlanTasks& tasks, const std::vector<TaskTiming>& timings);

}  // namespace splitscope
