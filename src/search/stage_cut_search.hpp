#pragma once
/// \file
/// PipeDream's planner for one replica: the contiguous cut of the units into
/// `stages` stages whose slowest stage is the fastest, a stage's time being
/// its ops' time for one micro-batch plus the time to send and receive what
/// crosses its two cuts over one link (a dynamic programme, O(stages · n²)).
/// Unlike the partitioners' own balance (compute only), it moves cuts to
/// where little crosses.

#include <cstddef>
#include <vector>

#include "search/stage_costs.hpp"

namespace splitscope {

/// Seconds of stage [first, end) of `costs` with `bytes_per_second` links.
double stage_seconds(const StageCosts& costs, size_t first, size_t end, double bytes_per_second);

/// The first unit of each stage in the best cut (among equals, the one whose
/// last stage starts earliest).
/// Requires 1 <= stages <= units.
std::vector<int> best_stage_cuts(const StageCosts& costs, int stages, double bytes_per_second);

/// The slowest stage of the cut at `starts`.
double slowest_stage_seconds(const StageCosts& costs, const std::vector<int>& starts, double bytes_per_second);

}  // namespace splitscope
