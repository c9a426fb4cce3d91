#include "report/memory_timeline.hpp"

#include <algorithm>
#include <limits>

#include "plan/plan_memory.hpp"

namespace splitscope {
namespace {

struct Change {
  double time_us;
  int64_t delta;
  bool operator<(const Change& other) const {
    // Frees before allocations at one instant (see the header).
    return time_us != other.time_us ? time_us < other.time_us : delta < other.delta;
  }
};

/// Merges runs of points into at most `limit`, each keeping its stretch's largest value.
std::vector<MemoryPoint> thin(const std::vector<MemoryPoint>& points, size_t limit) {
  if (points.size() <= limit || limit < 2) return points;
  std::vector<MemoryPoint> kept;
  const size_t per = (points.size() + limit - 2) / (limit - 1);
  for (size_t i = 0; i + 1 < points.size(); i += per) {
    MemoryPoint merged = points[i];
    for (size_t j = i; j < std::min(points.size() - 1, i + per); ++j) merged.bytes = std::max(merged.bytes, points[j].bytes);
    kept.push_back(merged);
  }
  kept.push_back(points.back());
  return kept;
}

}  // namespace

std::vector<std::vector<MemoryPoint>> memory_over_time(const Plan& plan, const Timeline& timeline, size_t max_points) {
  // Replicas held once (timeline.hpp): replica 0's devices' series, then each copy's the same.
  const auto devices = static_cast<size_t>(plan.replicas ? plan.replicas->devices_each : plan.devices);
  constexpr double kNever = std::numeric_limits<double>::infinity();
  std::vector<double> op_start(plan.ops.size(), kNever);
  std::vector<double> op_end(plan.ops.size(), -kNever);
  for (const Span& span : timeline.spans) {
    if (span.op < 0 || span.op >= static_cast<int>(plan.ops.size())) continue;
    op_start[static_cast<size_t>(span.op)] = std::min(op_start[static_cast<size_t>(span.op)], span.start_us);
    op_end[static_cast<size_t>(span.op)] = std::max(op_end[static_cast<size_t>(span.op)], span.end_us);
  }
  const double end = timeline.makespan_us();
  std::vector<double> freed(plan.values.size(), -kNever);
  for (const PlanOp& op : plan.ops) {
    for (int input : op.inputs) {
      if (input >= 0 && op_end[static_cast<size_t>(op.id)] > -kNever) {
        freed[static_cast<size_t>(input)] = std::max(freed[static_cast<size_t>(input)], op_end[static_cast<size_t>(op.id)]);
      }
    }
  }
  for (int output : plan.outputs) freed[static_cast<size_t>(output)] = end;

  std::vector<std::vector<Change>> changes(devices);
  for (const Value& value : plan.values) {
    // Weights, and gradients (summed in one resident buffer per slice), are in the resident bytes.
    if (value.role != ValueRole::kActivation || value.device < 0 || static_cast<size_t>(value.device) >= devices) continue;
    double from = 0;
    if (value.producer >= 0) {
      from = op_start[static_cast<size_t>(value.producer)];
      if (from == kNever) continue;  // its writer never ran in this timeline
    }
    double to = freed[static_cast<size_t>(value.id)];
    if (to == -kNever) to = value.producer >= 0 ? op_end[static_cast<size_t>(value.producer)] : from;
    auto& list = changes[static_cast<size_t>(value.device)];
    list.push_back({from, value.bytes});
    list.push_back({std::max(from, to), -value.bytes});
  }
  const std::vector<DeviceMemory> resident = plan.replicas ? plan.memory : compute_memory(plan);
  std::vector<std::vector<MemoryPoint>> series(devices);
  for (size_t d = 0; d < devices; ++d) {
    std::sort(changes[d].begin(), changes[d].end());
    const DeviceMemory& memory = resident[d];
    int64_t bytes = memory.params + memory.gradients + memory.optimizer_state;
    std::vector<MemoryPoint> points{{0.0, bytes}};
    for (const Change& change : changes[d]) {
      bytes += change.delta;
      if (points.back().time_us == change.time_us) {
        points.back().bytes = bytes;  // frees come first at an instant, so the last level is its highest
      } else {
        points.push_back({change.time_us, bytes});
      }
    }
    if (points.back().time_us < end) points.push_back({end, points.back().bytes});
    series[d] = thin(points, max_points);
  }
  for (size_t d = devices; d < static_cast<size_t>(plan.devices); ++d) series.push_back(series[d % devices]);
  return series;
}

}  // namespace splitscope
