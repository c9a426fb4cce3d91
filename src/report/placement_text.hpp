#pragma once
/// \file
/// What `run` and `compare` print of a simulated run's `--placement
/// topology` (src/sim/machine/device_placement.hpp): where the plan's devices ran,
/// and the bytes across nodes and the makespan under that mapping and under
/// the default one, so the user sees what the placement bought. Nothing for
/// runs under the default placement.

#include <string>
#include <vector>

#include "report/comparison.hpp"
#include "report/run_summary.hpp"

namespace splitscope {

/// "8-15,0-7": the machine device of each plan device, increasing runs
/// written first-last; "default" where plan device i is machine device i.
std::string device_map_text(const std::vector<int>& device_map);

/// `run`'s lines on its placement; empty unless it was `topology`.
std::string placement_lines(const RunSummary& summary);

/// `compare`'s table of a group's placements, one row per run: bytes across
/// nodes and makespan under the default mapping and the topology one, and
/// the mapping; empty unless the group's runs were placed by topology.
std::string placement_table(const RunGroup& group);

}  // namespace splitscope
