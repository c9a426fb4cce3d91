#include "exec/mpi/rank_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

#include "util/check.hpp"

namespace splitscope {

std::vector<double> rank_span_times(size_t spans, const std::vector<RankTaskSpans>& task_spans,
                                    const std::vector<TaskTiming>& timings, double shift_us) {
  SPLITSCOPE_CHECK(task_spans.size() == timings.size(), "a timing per task");
  std::vector<double> times(2 * spans, std::numeric_limits<double>::quiet_NaN());
  const auto earliest = [](double& slot, double value) { slot = std::isnan(slot) ? value : std::min(slot, value); };
  const auto latest = [](double& slot, double value) { slot = std::isnan(slot) ? value : std::max(slot, value); };
  for (size_t task = 0; task < task_spans.size(); ++task) {
    const RankTaskSpans& in = task_spans[task];
    const double start = timings[task].start_us + shift_us;
    const double end = timings[task].end_us + shift_us;
    if (in.span >= 0) {
      earliest(times.at(2 * static_cast<size_t>(in.span)), start);
      latest(times.at(2 * static_cast<size_t>(in.span) + 1), end);
    }
    if (in.starts >= 0) earliest(times.at(2 * static_cast<size_t>(in.starts)), start);
    if (in.ends >= 0) latest(times.at(2 * static_cast<size_t>(in.ends) + 1), end);
  }
  return times;
}

Timeline merge_rank_span_times(const std::vector<SpanSlot>& slots, const std::vector<double>& all_ranks) {
  const size_t per_rank = 2 * slots.size();
  SPLITSCOPE_CHECK(per_rank > 0 ? all_ranks.size() % per_rank == 0 : all_ranks.empty(),
                   "every rank reports every span");
  Timeline timeline;
  timeline.spans.reserve(slots.size());
  for (size_t span = 0; span < slots.size(); ++span) {
    double start = std::numeric_limits<double>::infinity();
    double end = -std::numeric_limits<double>::infinity();
    for (size_t rank = 0; per_rank > 0 && rank < all_ranks.size() / per_rank; ++rank) {
      const double seen_start = all_ranks[rank * per_rank + 2 * span];
      const double seen_end = all_ranks[rank * per_rank + 2 * span + 1];
      if (!std::isnan(seen_start)) start = std::min(start, seen_start);
      if (!std::isnan(seen_end)) end = std::max(end, seen_end);
    }
    SPLITSCOPE_CHECK(std::isfinite(start) && std::isfinite(end),
                     fmt::format("span {} (op {}) was not {} by any rank", span, slots[span].op,
                                 std::isfinite(start) ? "ended" : "started"));
    Span& out = append_unstarted_span(timeline.spans, slots[span]);
    out.start_us = start;
    out.end_us = std::max(start, end);
  }
  return timeline;
}

}  // namespace splitscope
