#pragma once
/// \file
/// The discrete-event engine: plays a Plan on a topology and returns the
/// predicted Timeline, with the semantics of plan/plan.hpp:
/// - compute and epilogue ops occupy their device's compute lane one at a
///   time, in `plan.schedule[device]` order, each as soon as the one before
///   it has finished and its inputs exist;
/// - a transfer starts when its input exists, pays its route's latency, then
///   drains its bytes over the links of its route, sharing their bandwidth
///   with whatever else crosses them (flow_network.hpp);
/// - a collective runs as the point-to-point sends of its algorithm
///   (plan/collective_schedule.hpp, the schedule the executors run),
///   each as soon as what it waits for exists;
/// - network inputs exist at time 0, and the first ops start one lane
///   hand-off later (DeviceSpec::lane_handoff_us, 0 unless given); a
///   compute op whose input a transfer or collective wrote sees it one
///   hand-off after the copy ends;
/// - with a host lane (DeviceSpec::host_issue_us > 0), a compute, epilogue,
///   update or transfer op also waits until the one host thread has issued
///   its first call, a collective's send until the host has issued its copy,
///   and a compute op ends no earlier than its last call's issue
///   (host_issue.hpp);
/// - where devices slow each other (OpCostModel::contended(): a pool's
///   cores sharing caches and memory), a compute op's pace follows how many
///   devices are busy, between its time alone and its time with all busy,
///   re-timed whenever another device starts or ends an op (engine.cpp,
///   SharedRun);
/// - on a GPU, a collective NCCL's model prices (nccl_protocol.hpp) takes
///   SMs and memory bandwidth from the compute it overlaps
///   (nccl_contention.hpp): from the first send into or out of a device to
///   the device's delivery, the op on that device's compute lane runs at
///   1 / nccl_overlap_factor() of its pace alone, re-timed whenever such a
///   collective starts or ends there (engine.cpp, OverlappedRun).
/// Spans (plan/plan_walk.hpp's op_spans): one per compute/epilogue
/// op on its device's compute lane; one per transfer on the destination's
/// copy-in lane; one per output device of a collective on its copy-in lane, from the first
/// send into or out of that device to the moment its output is complete
/// (bytes = what it received). Copy-in spans of one device may overlap:
/// concurrent transfers share bandwidth instead of queueing. Spans come out
/// in op order (a collective's in the order of its outputs).
///
/// The engine trusts what plan.hpp promises and the plan checker verifies
/// (PlanOp::outputs lists the values an op writes; a transfer's bytes_moved
/// is its value's bytes) and checks what would otherwise hang, crash or
/// silently mislead: an op outside the plan's devices, a value written twice
/// or read by an op before the one writing it (plan ops are in data-flow
/// order), a compute op in no schedule or in two, a schedule order against
/// the data flow. Those are plan bugs: std::logic_error naming the op.

#include <optional>

#include "plan/plan.hpp"
#include "sim/costs/op_cost_model.hpp"
#include "sim/costs/op_jitter.hpp"
#include "sim/engine/simulation_deadline.hpp"
#include "sim/machine/topology.hpp"
#include "timeline/timeline.hpp"

namespace splitscope {

/// Simulates `plan` (whose devices are devices 0.. of `topology`), pricing
/// its compute and epilogue ops with `costs`, each times `jitter`'s factor
/// where one is given (op_jitter.hpp).
Timeline simulate_plan(const Plan& plan, const Topology& topology, const OpCostModel& costs,
                       const OpJitter* jitter = nullptr);

/// The same, heeding `deadline`: nullopt if it passes before the plan has
/// played to its end (looked at once set up, then every
/// SimulationDeadline::kEventsBetweenLooks events): cut off, no makespan.
std::optional<Timeline> simulate_plan_until(const Plan& plan, const Topology& topology, const OpCostModel& costs,
                                            const SimulationDeadline& deadline, const OpJitter* jitter = nullptr);

}  // namespace splitscope
