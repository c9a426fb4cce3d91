#pragma once
/// \file
/// The critical path of one run: the chain of spans that decided when it
/// ended, split into compute and data-movement time.
///
/// The walk starts at the span that ends last and steps back, at each span,
/// to whichever of its predecessors ended latest (the one that bounded its
/// start):
/// - a data dependency: a span of an op producing one of its inputs
///   (op_predecessors() of the Plan); of a collective's several spans, the one
///   on the same device, else the one that ends last;
/// - the span before it on the same lane of the same device (lanes run one
///   span at a time, so that span held it up).
/// It stops at a span with neither. Time on the path when none of its spans
/// ran (the wait between a predecessor's end and the next start: launch
/// latency, scheduling, and the run's start before the first span) is the
/// gap, so that input + compute + transfer + gap = the makespan exactly.

#include <vector>

#include "plan/plan.hpp"
#include "timeline/timeline.hpp"

namespace splitscope {

struct CriticalPath {
  double input_ms = 0;     ///< host work on the path (is_host_work(): an input pipeline preparing batches)
  double compute_ms = 0;   ///< compute (and epilogue) spans on the path
  double transfer_ms = 0;  ///< transfer and collective spans on the path
  double gap_ms = 0;       ///< time on the path between spans
  std::vector<int> spans;  ///< indices into Timeline::spans, in time order

  double length_ms() const { return input_ms + compute_ms + transfer_ms + gap_ms; }
  /// transfer_ms / length_ms (0 for an empty path).
  double transfer_share() const;
};

/// Walks `timeline` (one repeat of `plan`) back from its last span.
CriticalPath find_critical_path(const Plan& plan, const Timeline& timeline);

}  // namespace splitscope
