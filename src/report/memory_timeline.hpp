#pragma once
/// \file
/// Memory in use on each device over one run's timeline: what a training
/// step's activations, stash and running sums cost as they come and go.
/// The same accounting as the plan's peak (plan/plan_memory.hpp),
/// placed in time: the device's resident bytes (weights, one gradient
/// buffer per weight slice, the optimizer's state) throughout, plus each
/// activation value from the start of the op that writes it (a network
/// input: from 0) to the end of the last op that reads it (a network output:
/// to the end of the run; a value nobody reads: to the end of its writer).
/// At one instant, what ends is freed before what starts is allocated, so a
/// device running its ops one after another peaks exactly where the plan's
/// walk-ordered accounting says.

#include <cstdint>
#include <vector>

#include "plan/plan.hpp"
#include "timeline/timeline.hpp"

namespace splitscope {

struct MemoryPoint {
  double time_us = 0;
  int64_t bytes = 0;  ///< in use from time_us until the next point
};

/// Per device, the bytes in use at each time they change (the first point
/// at 0, the last at the run's end), at most `max_points` a device: where a
/// timeline has more changes, consecutive ones are merged keeping each
/// merged stretch's largest value, so a chart never hides a peak.
std::vector<std::vector<MemoryPoint>> memory_over_time(const Plan& plan, const Timeline& timeline,
                                                       size_t max_points = 400);

}  // namespace splitscope
