#include "report/critical_path.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace splitscope {
namespace {

/// Spans of each lane of each device, in start order, and where each span sits in its lane.
struct LaneIndex {
  std::map<std::pair<int, Lane>, std::vector<int>> lanes;
  std::vector<size_t> position;

  explicit LaneIndex(const Timeline& timeline) : position(timeline.spans.size()) {
    for (size_t i = 0; i < timeline.spans.size(); ++i) {
      const Span& span = timeline.spans[i];
      lanes[{span.device, span.lane}].push_back(static_cast<int>(i));
    }
    for (auto& [key, list] : lanes) {
      std::stable_sort(list.begin(), list.end(), [&](int a, int b) {
        const Span& x = timeline.spans[static_cast<size_t>(a)];
        const Span& y = timeline.spans[static_cast<size_t>(b)];
        return x.start_us < y.start_us || (x.start_us == y.start_us && x.end_us < y.end_us);
      });
      for (size_t p = 0; p < list.size(); ++p) position[static_cast<size_t>(list[p])] = p;
    }
  }

  /// The span before `index` on its lane, or -1.
  int previous(const Timeline& timeline, int index) const {
    const Span& span = timeline.spans[static_cast<size_t>(index)];
    const auto& list = lanes.at({span.device, span.lane});
    const size_t p = position[static_cast<size_t>(index)];
    return p == 0 ? -1 : list[p - 1];
  }
};

/// Of the spans of `op`, the one on `device` (the latest-ending such), else the latest-ending one.
int span_of_op_for(const Timeline& timeline, const std::vector<int>& spans_of_op, int device) {
  int best = -1;
  bool best_on_device = false;
  for (int index : spans_of_op) {
    const Span& span = timeline.spans[static_cast<size_t>(index)];
    const bool on_device = span.device == device;
    if (best < 0 || (on_device && !best_on_device) ||
        (on_device == best_on_device && span.end_us > timeline.spans[static_cast<size_t>(best)].end_us)) {
      best = index;
      best_on_device = on_device;
    }
  }
  return best;
}

/// Spans outside the plan (op -1: a parameter server's pulls, pushes and
/// updates, an input pipeline's preparation and copies) have no data
/// dependencies to follow: what one waited for is taken to be the span that
/// ended last by its start, preferring its own device, then its own lane. A
/// plan span with no predecessor of its own (a worker's first op after its
/// pull, a step's first op after its batch's copy) steps back the same way
/// to a span outside the plan on its device. Without this the walk stopped
/// at a parameter server's update and called the step "waiting" (issue 54
/// item 8).
class OffPlanSteps {
 public:
  OffPlanSteps(const Plan& plan, const Timeline& timeline) : timeline_(timeline) {
    for (size_t i = 0; i < timeline.spans.size(); ++i) {
      by_end_.push_back(static_cast<int>(i));
      if (outside(plan, timeline.spans[i])) off_plan_by_end_.push_back(static_cast<int>(i));
    }
    const auto earlier_end = [&](int a, int b) { return span(a).end_us < span(b).end_us; };
    std::stable_sort(by_end_.begin(), by_end_.end(), earlier_end);
    std::stable_sort(off_plan_by_end_.begin(), off_plan_by_end_.end(), earlier_end);
  }

  static bool outside(const Plan& plan, const Span& span) {
    return span.op < 0 || static_cast<size_t>(span.op) >= plan.ops.size();
  }
  bool any() const { return !off_plan_by_end_.empty(); }

  /// For a span outside the plan: the span, of any kind, that ended last by its start.
  int before_off_plan(int index) const { return latest_before(by_end_, index, false); }
  /// For a plan span: the span outside the plan on its device that ended last by its start.
  int before_plan(int index) const { return latest_before(off_plan_by_end_, index, true); }

 private:
  const Span& span(int index) const { return timeline_.spans[static_cast<size_t>(index)]; }

  int latest_before(const std::vector<int>& sorted, int index, bool same_device_only) const {
    const Span& of = span(index);
    auto end = std::upper_bound(sorted.begin(), sorted.end(), of.start_us,
                                [&](double start, int candidate) { return start < span(candidate).end_us; });
    int best = -1;
    int best_rank = -1;
    double best_end = 0;
    // Among the candidates that end last (the walk back stops once the end drops), the one nearest `of`.
    for (auto it = end; it != sorted.begin();) {
      --it;
      if (*it == index) continue;
      const Span& candidate = span(*it);
      if (best >= 0 && candidate.end_us < best_end) break;
      if (same_device_only && candidate.device != of.device) continue;
      const int rank = (candidate.device == of.device ? 2 : 0) + (candidate.lane == of.lane ? 1 : 0);
      if (best < 0 || rank > best_rank) {
        best = *it;
        best_rank = rank;
        best_end = candidate.end_us;
      }
    }
    return best;
  }

  const Timeline& timeline_;
  std::vector<int> by_end_;
  std::vector<int> off_plan_by_end_;
};

}  // namespace

double CriticalPath::transfer_share() const {
  const double length = length_ms();
  return length > 0 ? transfer_ms / length : 0;
}

CriticalPath find_critical_path(const Plan& plan, const Timeline& timeline) {
  CriticalPath path;
  const auto& spans = timeline.spans;
  if (spans.empty()) return path;

  const LaneIndex lanes(timeline);
  std::vector<std::vector<int>> spans_of_op(plan.ops.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    const int op = spans[i].op;
    if (op >= 0 && static_cast<size_t>(op) < plan.ops.size()) {
      spans_of_op[static_cast<size_t>(op)].push_back(static_cast<int>(i));
    }
  }
  const auto predecessors = op_predecessors(plan);
  const OffPlanSteps off_plan(plan, timeline);

  int current = 0;
  for (size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].end_us > spans[static_cast<size_t>(current)].end_us) current = static_cast<int>(i);
  }

  // `frontier` is how far back the path is accounted for; each span adds the
  // part of itself before the frontier, so overlapping noise is never counted twice.
  double frontier_us = spans[static_cast<size_t>(current)].end_us;
  double input_us = 0;
  double compute_us = 0;
  double transfer_us = 0;
  double gap_us = 0;
  std::vector<bool> visited(spans.size(), false);
  while (current >= 0 && !visited[static_cast<size_t>(current)]) {
    visited[static_cast<size_t>(current)] = true;
    path.spans.push_back(current);
    const Span& span = spans[static_cast<size_t>(current)];
    const double counted = std::max(0.0, std::min(frontier_us, span.end_us) - span.start_us);
    (is_host_work(span) ? input_us : span.kind == SpanKind::kCompute ? compute_us : transfer_us) += counted;
    frontier_us = std::min(frontier_us, span.start_us);

    // A data dependency wins a tie with the lane predecessor: it says more.
    int next = -1;
    if (span.op >= 0 && static_cast<size_t>(span.op) < plan.ops.size()) {
      for (int producer : predecessors[static_cast<size_t>(span.op)]) {
        const int candidate = span_of_op_for(timeline, spans_of_op[static_cast<size_t>(producer)], span.device);
        if (candidate >= 0 && (next < 0 || spans[static_cast<size_t>(candidate)].end_us >
                                               spans[static_cast<size_t>(next)].end_us)) {
          next = candidate;
        }
      }
    }
    const int on_lane = lanes.previous(timeline, current);
    if (on_lane >= 0 && (next < 0 || spans[static_cast<size_t>(on_lane)].end_us >
                                         spans[static_cast<size_t>(next)].end_us)) {
      next = on_lane;
    }
    if (off_plan.any()) {
      const int waited_for = OffPlanSteps::outside(plan, span) ? off_plan.before_off_plan(current)
                                                               : off_plan.before_plan(current);
      if (waited_for >= 0 && (next < 0 || spans[static_cast<size_t>(waited_for)].end_us >
                                              spans[static_cast<size_t>(next)].end_us)) {
        next = waited_for;
      }
    }
    const double resumes_us = next >= 0 ? spans[static_cast<size_t>(next)].end_us : 0.0;
    gap_us += std::max(0.0, frontier_us - resumes_us);
    frontier_us = std::min(frontier_us, std::max(resumes_us, 0.0));
    if (next >= 0 && visited[static_cast<size_t>(next)]) {
      gap_us += frontier_us;  // inconsistent timestamps: account for the rest as waiting
      break;
    }
    current = next;
  }
  std::reverse(path.spans.begin(), path.spans.end());
  path.input_ms = input_us / 1000.0;
  path.compute_ms = compute_us / 1000.0;
  path.transfer_ms = transfer_us / 1000.0;
  path.gap_ms = gap_us / 1000.0;
  return path;
}

}  // namespace splitscope
