#pragma once
/// \file
/// How much memory each device needs for a plan: its weight slices, plus the
/// values alive at the same time, walking the ops in plan order (the order
/// each device issues them). A value lives from the op that writes it (time 0
/// for network inputs) to the last op that reads it; plan outputs live to the end.

#include <vector>

#include "plan/plan.hpp"

namespace splitscope {

std::vector<DeviceMemory> compute_memory(const Plan& plan);

}  // namespace splitscope
