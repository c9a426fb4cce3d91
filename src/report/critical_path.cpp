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

  int current = 0;
  for (size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].end_us > spans[static_cast<size_t>(current)].end_us) current = static_cast<int>(i);
  }

  // `frontier` is how far back the path is accounted for; each span adds the
  // part of itself before the frontier, so overlapping noise is never counted twice.
  double frontier_us = spans[static_cast<size_t>(current)].end_us;
  double compute_us = 0;
  double transfer_us = 0;
  double gap_us = 0;
  std::vector<bool> visited(spans.size(), false);
  while (current >= 0 && !visited[static_cast<size_t>(current)]) {
    visited[static_cast<size_t>(current)] = true;
    path.spans.push_back(current);
    const Span& span = spans[static_cast<size_t>(current)];
    const double counted = std::max(0.0, std::min(frontier_us, span.end_us) - span.start_us);
    (span.kind == SpanKind::kCompute ? compute_us : transfer_us) += counted;
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
  path.compute_ms = compute_us / 1000.0;
  path.transfer_ms = transfer_us / 1000.0;
  path.gap_ms = gap_us / 1000.0;
  return path;
}

}  // namespace splitscope
