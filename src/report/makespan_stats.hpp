#pragma once
/// \file
/// Makespan statistics over the timed repeats of one run, nccl-tests style:
/// median, min, max and p95, plus which repeat stands for the run.

#include <vector>

#include "timeline/timeline.hpp"

namespace splitscope {

struct MakespanStats {
  double median_ms = 0;  ///< the middle value; the mean of the two middle values for an even count
  double min_ms = 0;
  double max_ms = 0;
  double p95_ms = 0;     ///< nearest rank: the ceil(0.95·n)-th smallest
  double mean_ms = 0;
  int repeats = 0;
  /// The repeat whose makespan is closest to the median (the earlier one on a
  /// tie): per-device numbers, traces and pictures come from it.
  int representative = 0;
  double representative_ms = 0;  ///< that repeat's makespan
  std::vector<double> repeat_ms;  ///< every repeat's makespan, in the order they ran

  /// Half the relative width of [min, max] around the median, the larger side:
  /// max(max - median, median - min) / median. 0 for a single repeat.
  double spread() const;
};

/// Statistics over `timelines` (one per repeat). Needs at least one timeline.
MakespanStats makespan_stats(const std::vector<Timeline>& timelines);

}  // namespace splitscope
