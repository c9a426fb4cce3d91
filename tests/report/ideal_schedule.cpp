#include "ideal_schedule.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace splitscope::testing {

Timeline ideal_schedule(const Plan& plan, const IdealCosts& costs) {
  std::vector<double> ready(plan.values.size(), -1.0);  // when each value exists; -1: not yet
  for (int input : plan.inputs) ready[static_cast<size_t>(input)] = 0.0;
  std::map<std::pair<int, Lane>, double> lane_free;
  std::vector<size_t> next_in_schedule(plan.schedule.size(), 0);
  std::vector<bool> done(plan.ops.size(), false);

  auto inputs_ready = [&](const PlanOp& op) {
    double at = 0;
    for (int input : op.inputs) {
      if (input < 0) continue;
      if (ready[static_cast<size_t>(input)] < 0) return -1.0;
      at = std::max(at, ready[static_cast<size_t>(input)]);
    }
    return at;
  };
  auto lanes_of = [&](const PlanOp& op) {
    std::vector<std::pair<int, Lane>> lanes;
    if (op.role == OpRole::kCompute || op.role == OpRole::kEpilogue) {
      lanes.push_back({op.device, Lane::kCompute});
    } else if (op.role == OpRole::kTransfer) {
      lanes.push_back({op.device, Lane::kCopyIn});
    } else {
      for (int output : op.outputs) lanes.push_back({plan.value(output).device, Lane::kCopyIn});
    }
    return lanes;
  };

  Timeline timeline;
  for (size_t scheduled = 0; scheduled < plan.ops.size(); ++scheduled) {
    // Of the ops that can run (compute: next in its device's schedule), the one that can start first.
    int best = -1;
    double best_start = std::numeric_limits<double>::max();
    for (const PlanOp& op : plan.ops) {
      if (done[static_cast<size_t>(op.id)]) continue;
      if (op.role == OpRole::kCompute || op.role == OpRole::kEpilogue) {
        const auto& order = plan.schedule[static_cast<size_t>(op.device)];
        const size_t next = next_in_schedule[static_cast<size_t>(op.device)];
        if (next >= order.size() || order[next] != op.id) continue;
      }
      double start = inputs_ready(op);
      if (start < 0) continue;
      for (const auto& lane : lanes_of(op)) start = std::max(start, lane_free[lane]);
      if (start < best_start) {
        best_start = start;
        best = op.id;
      }
    }
    if (best < 0) break;  // nothing can run: a broken plan; the tests check every op ran
    const PlanOp& op = plan.op(best);
    done[static_cast<size_t>(best)] = true;
    const auto lanes = lanes_of(op);
    double duration = 0;
    if (op.role == OpRole::kCompute || op.role == OpRole::kEpilogue) {
      duration = costs.launch_us + costs.us_per_flop * static_cast<double>(op.flops);
      ++next_in_schedule[static_cast<size_t>(op.device)];
    } else {
      duration = costs.us_per_byte * static_cast<double>(op.bytes_moved) / static_cast<double>(lanes.size());
    }
    const double end = best_start + duration;
    for (const auto& [device, lane] : lanes) {
      Span span;
      span.device = device;
      span.lane = lane;
      span.kind = op.role == OpRole::kCompute || op.role == OpRole::kEpilogue
                      ? SpanKind::kCompute
                      : (op.role == OpRole::kTransfer ? SpanKind::kTransfer : SpanKind::kCollective);
      span.op = op.id;
      span.start_us = best_start;
      span.end_us = end;
      span.flops = span.kind == SpanKind::kCompute ? op.flops : 0;
      span.bytes = span.kind == SpanKind::kCompute ? 0 : op.bytes_moved / static_cast<int64_t>(lanes.size());
      timeline.spans.push_back(span);
      lane_free[{device, lane}] = end;
    }
    for (int output : op.outputs) ready[static_cast<size_t>(output)] = end;
  }
  return timeline;
}

}  // namespace splitscope::testing
