#pragma once
/// \file
/// One candidate of the search, built by the partitioners and priced by the
/// simulator: its time and where the time goes, and the memory it needs.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan_file/plan_spec.hpp"
#include "sim/engine/simulation_deadline.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {

struct PricedPlan {
  PlanSpec spec;
  bool named = false;  ///< a named strategy as `compare` runs it (no search parameter changed)
  double makespan_us = 0;
  /// On the device that computes longest: its compute, what its copy lanes
  /// carried (transfers and collectives, overlapped or not), and the rest of
  /// the step, during which it waits (the pipeline bubble, exposed transfers).
  double compute_us = 0;
  double transfer_us = 0;
  double idle_us = 0;
  std::vector<int64_t> peak_memory_bytes;  ///< per device (Plan::memory peak)
  int64_t peak_memory_max = 0;
  double samples_per_second = 0;
};

/// Why a candidate has no price.
struct RefusedPlan {
  PlanSpec spec;
  std::string reason;  ///< "needs 91.2 GiB on a device, over the limit of 80 GiB", the partitioner's message
};

/// `spec` built for `graph` and simulated on `simulator`; nullopt with
/// `refused` set if the partitioner refuses it or its peak memory on some
/// device exceeds `memory_limit_bytes` (then it is not simulated).
std::optional<PricedPlan> price_plan(const PlanSpec& spec, const std::shared_ptr<const Graph>& graph,
                                     const Simulator& simulator, int64_t memory_limit_bytes, RefusedPlan& refused);

/// The same, its simulation heeding `deadline` (simulation_deadline.hpp):
/// if that passes first, nullopt with `cut_off` true (neither priced nor
/// refused: it has no price); else `cut_off` false and price_plan's answer.
std::optional<PricedPlan> price_plan_until(const PlanSpec& spec, const std::shared_ptr<const Graph>& graph,
                                           const Simulator& simulator, int64_t memory_limit_bytes,
                                           const SimulationDeadline& deadline, RefusedPlan& refused, bool& cut_off);

}  // namespace splitscope
