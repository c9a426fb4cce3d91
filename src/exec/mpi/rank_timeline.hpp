#pragma once
/// \file
/// One Timeline from the ranks of a multi-process run. Each rank times only
/// its own tasks, so a span may be seen by two ranks: a transfer starts when
/// its source rank sends and ends when its destination rank has the data.
/// Each rank reports, per span of the plan, the start and end it saw (on the
/// common clock); the run's span starts at the earliest start any rank gave
/// and ends at the latest end. No MPI here: the gathering is mpi_executor's.

#include <cstddef>
#include <vector>

#include "exec/cpu/scheduler.hpp"
#include "plan/plan_walk.hpp"
#include "timeline/timeline.hpp"

namespace splitscope {

/// Which of the spans' times one task of a rank gives (-1: none).
struct RankTaskSpans {
  int span = -1;    ///< the span it does the work of: its start and its end count
  int starts = -1;  ///< a span only its start counts in (a send out of this rank)
  int ends = -1;    ///< a span only its end counts in (a receive into this rank)
};

/// This rank's times of every span: 2 a span (start, end), NaN where none of
/// its tasks gave one; `shift_us` is added to each (this rank's clock start
/// on the common clock).
std::vector<double> rank_span_times(size_t spans, const std::vector<RankTaskSpans>& task_spans,
                                    const std::vector<TaskTiming>& timings, double shift_us);

/// The Timeline of `slots` from every rank's rank_span_times(), end to end,
/// rank after rank. Throws std::logic_error naming a span that no rank
/// started or none ended (a bug in the rank's tasks).
Timeline merge_rank_span_times(const std::vector<SpanSlot>& slots, const std::vector<double>& all_ranks);

}  // namespace splitscope
