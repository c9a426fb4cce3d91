#pragma once
// A stand-in for the executors in the report tests: an idealised list
// schedule of a Plan that follows plan.hpp's rules (each device runs its
// compute and epilogue ops in schedule order on its compute lane; a transfer
// runs on its destination's copy-in lane, a collective on each output
// device's copy-in lane, as soon as their inputs exist and the lane is free),
// with fixed costs: compute `us_per_flop` x FLOPs + `launch_us`, data movement
// `us_per_byte` x bytes_moved (split evenly over a collective's devices).
// It is not the simulator; it only gives real partitioner plans timelines
// whose numbers can be worked out, so reports of real plans can be checked.

#include "plan/plan.hpp"
#include "timeline/timeline.hpp"

namespace splitscope::testing {

struct IdealCosts {
  double us_per_flop = 1e-6;
  double us_per_byte = 1e-4;
  double launch_us = 0;
};

Timeline ideal_schedule(const Plan& plan, const IdealCosts& costs);

}  // namespace splitscope::testing
