#pragma once
/// \file
/// A parameter-server run has no plan run per step to time: its workers and
/// shards run at their own pace. Its timeline is cut into step windows that
/// end where the model's updates end, so that a report's per-step makespan
/// is the time one step took, as for every other strategy.

#include <vector>

#include "timeline/timeline.hpp"

namespace splitscope {

/// Cuts `spans` (times since the run's start) into windows [0, ends[0]),
/// [ends[0], ends[1]), ... (`ends` ascending): each span is split at the
/// boundaries it crosses, each piece going to its window with times since
/// the window's start; what lies past the last end (work of a run already
/// over, such as a dropped straggler's step) is left out.
std::vector<Timeline> cut_into_windows(const std::vector<Span>& spans, const std::vector<double>& ends);

}  // namespace splitscope
