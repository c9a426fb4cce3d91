#include "report/run_summary.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include "plan/plan_replicas.hpp"
#include "report/bandwidth.hpp"
#include "report/intervals.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

/// Index of the largest value and its share of the sum; {0, 0} when the sum is 0.
template <typename T, typename Get>
std::pair<int, double> largest_share(const std::vector<DeviceSummary>& devices, Get get) {
  T total = 0;
  int best = 0;
  for (size_t d = 0; d < devices.size(); ++d) {
    total += get(devices[d]);
    if (get(devices[d]) > get(devices[static_cast<size_t>(best)])) best = static_cast<int>(d);
  }
  if (devices.empty() || total <= 0) return {0, 0.0};
  return {best, static_cast<double>(get(devices[static_cast<size_t>(best)])) / static_cast<double>(total)};
}

std::string movement_kind(const PlanOp& op) {
  return op.role == OpRole::kTransfer ? std::string("transfer") : std::string(to_string(op.collective));
}

/// The order kinds are listed in: transfers, then the collectives in
/// CollectiveKind order, so that a new collective appears without a list to update.
int movement_order(const PlanOp& op) {
  return op.role == OpRole::kTransfer ? -1 : static_cast<int>(op.collective);
}

/// Training: each device's compute time by part of the step.
void fill_pass_times(const Plan& plan, const Timeline& timeline, std::vector<DeviceSummary>& devices) {
  for (const Span& span : timeline.spans) {
    if (span.kind != SpanKind::kCompute || span.op < 0) continue;
    const PlanOp& op = plan.op(span.op);
    DeviceSummary& device = devices.at(static_cast<size_t>(span.device));
    const double ms = (span.end_us - span.start_us) / 1000.0;
    if (op.role == OpRole::kUpdate) {
      device.update_ms += ms;
    } else if (plan.graph->node(op.node).pass == Pass::kBackward) {
      device.backward_ms += ms;
    } else {
      device.forward_ms += ms;
    }
  }
}

/// Each device's compute spans of one repeat, as one union per device.
std::vector<IntervalSet> computing_by_device(const Timeline& timeline, size_t devices) {
  std::vector<std::vector<Interval>> compute(devices);
  for (const Span& span : timeline.spans) {
    SPLITSCOPE_CHECK(span.device >= 0 && static_cast<size_t>(span.device) < devices,
                     "a timeline span is on a device the plan does not have");
    if (span.kind == SpanKind::kCompute && !is_host_work(span)) {
      compute[static_cast<size_t>(span.device)].push_back({span.start_us, span.end_us});
    }
  }
  std::vector<IntervalSet> computing;
  computing.reserve(devices);
  for (auto& intervals : compute) computing.emplace_back(std::move(intervals));
  return computing;
}

/// Per-device busy intervals by kind, from one repeat.
void fill_device_times(const Timeline& timeline, const std::vector<IntervalSet>& computing_of,
                       std::vector<DeviceSummary>& devices) {
  const double makespan_us = timeline.makespan_us();
  std::vector<std::vector<Interval>> transfer(devices.size());
  for (const Span& span : timeline.spans) {
    if (span.kind != SpanKind::kCompute) transfer[static_cast<size_t>(span.device)].push_back({span.start_us, span.end_us});
  }
  for (size_t d = 0; d < devices.size(); ++d) {
    const IntervalSet& computing = computing_of[d];
    const IntervalSet moving(std::move(transfer[d]));
    const double busy_us = IntervalSet::unite(computing, moving).length();
    devices[d].compute_ms = computing.length() / 1000.0;
    devices[d].transfer_ms = moving.length() / 1000.0;
    devices[d].overlap_ms = IntervalSet::intersect(computing, moving).length() / 1000.0;
    devices[d].idle_ms = std::max(0.0, makespan_us - busy_us) / 1000.0;
  }
}

/// Count and bytes of every data-movement op by kind (from the plan), and
/// their times, bandwidths and exposed part (from `timeline` and its
/// devices' compute, `computing`, when there is one).
void fill_movement(const Plan& plan, const Timeline* timeline, const std::vector<IntervalSet>* computing,
                   RunSummary& summary) {
  struct OpTime {
    double start = std::numeric_limits<double>::max();
    double end = std::numeric_limits<double>::lowest();
  };
  std::map<int, OpTime> times;
  // By kind (movement_order()): the mean, over the devices moving data of
  // that kind, of the time they spend on it while not computing.
  std::map<int, double> exposed_us;
  if (timeline != nullptr) {
    std::map<std::pair<int, int>, std::vector<Interval>> moving;  // (kind, device) -> its spans there
    for (const Span& span : timeline->spans) {
      if (span.kind == SpanKind::kCompute || span.op < 0) continue;
      OpTime& time = times[span.op];
      time.start = std::min(time.start, span.start_us);
      time.end = std::max(time.end, span.end_us);
      moving[{movement_order(plan.op(span.op)), span.device}].push_back({span.start_us, span.end_us});
    }
    std::map<int, int> devices_of;
    for (auto& [key, intervals] : moving) {
      const auto [kind, device] = key;
      const IntervalSet spans(std::move(intervals));
      double hidden = 0;
      for (const Interval& interval : spans.intervals()) hidden += (*computing)[static_cast<size_t>(device)].overlap(interval);
      exposed_us[kind] += spans.length() - hidden;
      devices_of[kind] += 1;
    }
    for (auto& [kind, total] : exposed_us) total /= devices_of[kind];
  }
  std::map<int, MovementSummary> by_kind;  // by movement_order()
  std::map<int, double> bus_bytes;         // payload · bus factor, summed
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kTransfer && op.role != OpRole::kCollective) continue;
    const int kind = movement_order(op);
    MovementSummary& entry = by_kind[kind];
    entry.kind = movement_kind(op);
    entry.count += 1;
    entry.bytes_moved += op.bytes_moved;
    const int64_t payload = op.role == OpRole::kTransfer ? op.bytes_moved : op.payload_bytes;
    entry.payload_bytes += payload;
    // Replicas held once: an op of each replica counts once per replica; a
    // collective spanning them once, over every replica's participants.
    const int copies = plan.replicas && !op.spans_replicas ? plan.replicas->count : 1;
    const int participants = static_cast<int>(op.participants.size()) *
                             (plan.replicas && op.spans_replicas ? plan.replicas->count : 1);
    entry.count += copies - 1;
    entry.bytes_moved += (copies - 1) * op.bytes_moved;
    entry.payload_bytes += (copies - 1) * payload;
    const double factor = op.role == OpRole::kTransfer ? 1.0 : bus_factor(op.collective, participants);
    bus_bytes[kind] += static_cast<double>(payload) * factor * copies;
    if (auto it = times.find(op.id); it != times.end()) {
      entry.time_ms += copies * (it->second.end - it->second.start) / 1000.0;
    }
  }
  for (auto& [kind, entry] : by_kind) {
    entry.exposed_ms = exposed_us[kind] / 1000.0;
    const double seconds = entry.time_ms / 1000.0;
    entry.algbw_gbps = gigabytes_per_second(entry.payload_bytes, seconds);
    entry.busbw_gbps = seconds > 0 ? bus_bytes[kind] / seconds / 1e9 : 0.0;
    summary.transfers.count += entry.count;
    summary.transfers.bytes += entry.bytes_moved;
    summary.transfers.time_ms += entry.time_ms;
    summary.movement.push_back(entry);
  }
}

/// A parameter server's pulls and pushes: moves between devices outside the
/// plan (Span::move), one kind each, after the plan's own, counted from
/// `timeline` as the plan's are from its ops (issue 54 item 8: a ps run said
/// "no data crosses devices" while moving 232 MiB each way a step).
void fill_off_plan_movement(const Timeline& timeline, const std::vector<IntervalSet>& computing, RunSummary& summary) {
  std::map<OffPlanMove, MovementSummary> by_kind;
  std::map<std::pair<OffPlanMove, int>, std::vector<Interval>> moving;  // (kind, device) -> its spans there
  for (const Span& span : timeline.spans) {
    if (span.move == OffPlanMove::kNone || span.op >= 0) continue;
    MovementSummary& entry = by_kind[span.move];
    entry.kind = std::string(to_string(span.move));
    entry.count += 1;
    entry.bytes_moved += span.bytes;
    entry.payload_bytes += span.bytes;
    entry.time_ms += span.duration_us() / 1000.0;
    moving[{span.move, span.device}].push_back({span.start_us, span.end_us});
  }
  std::map<OffPlanMove, std::pair<double, int>> exposed;  // kind -> (exposed us summed over devices, devices)
  for (auto& [key, intervals] : moving) {
    const IntervalSet spans(std::move(intervals));
    double hidden = 0;
    for (const Interval& interval : spans.intervals()) hidden += computing[static_cast<size_t>(key.second)].overlap(interval);
    exposed[key.first].first += spans.length() - hidden;
    exposed[key.first].second += 1;
  }
  for (auto& [kind, entry] : by_kind) {
    entry.exposed_ms = exposed[kind].first / exposed[kind].second / 1000.0;
    entry.algbw_gbps = gigabytes_per_second(entry.payload_bytes, entry.time_ms / 1000.0);
    entry.busbw_gbps = entry.algbw_gbps;
    summary.transfers.count += entry.count;
    summary.transfers.bytes += entry.bytes_moved;
    summary.transfers.time_ms += entry.time_ms;
    summary.movement.push_back(entry);
  }
}

/// Replicas held once (timeline.hpp): device d of replica r ran what
/// device d of replica 0 did, whose times the spans gave.
void copy_replica_times(const Timeline& timeline, std::vector<DeviceSummary>& devices) {
  if (timeline.replicas <= 1) return;
  const auto each = static_cast<size_t>(timeline.replica_devices);
  for (size_t d = each; d < devices.size(); ++d) {
    const DeviceSummary& same = devices[d % each];
    DeviceSummary& device = devices[d];
    device.compute_ms = same.compute_ms;
    device.transfer_ms = same.transfer_ms;
    device.overlap_ms = same.overlap_ms;
    device.idle_ms = same.idle_ms;
    device.forward_ms = same.forward_ms;
    device.backward_ms = same.backward_ms;
    device.update_ms = same.update_ms;
  }
}

}  // namespace

int RunSummary::busiest_device() const {
  return largest_share<int64_t>(per_device, [](const DeviceSummary& d) { return d.flops; }).first;
}
double RunSummary::busiest_flop_share() const {
  return largest_share<int64_t>(per_device, [](const DeviceSummary& d) { return d.flops; }).second;
}
int RunSummary::busiest_compute_device() const {
  return largest_share<double>(per_device, [](const DeviceSummary& d) { return d.compute_ms; }).first;
}
double RunSummary::busiest_compute_share() const {
  return largest_share<double>(per_device, [](const DeviceSummary& d) { return d.compute_ms; }).second;
}

double RunSummary::total_compute_ms() const {
  double total = 0;
  for (const DeviceSummary& device : per_device) total += device.compute_ms;
  return total;
}

int64_t RunSummary::max_memory_peak_bytes() const {
  int64_t peak = 0;
  for (const DeviceSummary& device : per_device) peak = std::max(peak, device.memory_peak_bytes);
  return peak;
}

RunSummary summarize(const Plan& plan, const RunResult& result) {
  SPLITSCOPE_CHECK(plan.graph != nullptr, "a plan to summarize needs its graph");
  RunSummary summary;
  summary.model = plan.graph->name();
  summary.params = plan.graph->total_params();
  summary.flops = plan.graph->total_flops();
  summary.batch = plan.graph->batch();
  summary.strategy = plan.strategy;
  summary.baseline = plan.traits.baseline;
  summary.devices = plan.devices;
  summary.microbatches = plan.microbatches;
  summary.precision = std::string(to_string(plan.precision));
  summary.info = result.info;
  summary.plan_notes = plan.notes;
  summary.memory = check_memory_fit(plan, result.info.device_memory_bytes);
  summary.bubble_ideal = ideal_bubble(plan);
  summary.stages = plan.degrees ? plan.degrees->pipeline : plan.devices;
  if (plan.degrees) summary.group_traffic = group_traffic(plan_traffic(plan), *plan.degrees);

  const PlanTotals totals = plan_totals(plan);
  summary.per_device.resize(static_cast<size_t>(plan.devices));
  for (size_t d = 0; d < summary.per_device.size(); ++d) {
    DeviceSummary& device = summary.per_device[d];
    device.id = static_cast<int>(d);
    device.ops = totals.device_ops[d];
    device.flops = totals.device_flops[d];
    if (d < plan.memory.size() || plan.replicas) {
      const DeviceMemory& memory = device_memory(plan, static_cast<int>(d));
      device.memory_peak_bytes = memory.peak;
      device.param_bytes = memory.params;
      device.activations_peak_bytes = memory.activations_peak;
      device.gradient_bytes = memory.gradients;
      device.optimizer_state_bytes = memory.optimizer_state;
    }
    if (d < result.info.device_memory_bytes.size()) device.memory_available_bytes = result.info.device_memory_bytes[d];
  }

  if (const auto& spec = plan.graph->training()) {
    TrainingSummary training;
    training.steps = static_cast<int>(result.timelines.size());
    if (result.info.steps_alike > 0) {
      training.steps = result.info.steps_alike;
      training.steps_alike = true;
    }
    training.losses = result.losses;
    training.schedule = plan.traits.microbatched ? std::string(to_string(plan.pipeline_schedule)) : "none";
    training.optimizer = std::string(spec->optimizer.name());
    training.loss = std::string(to_string(spec->loss));
    training.learning_rate = spec->optimizer.learning_rate;
    training.momentum = spec->optimizer.momentum;
    summary.training = std::move(training);
  }

  const bool run = summary.fits() && !result.timelines.empty();
  SPLITSCOPE_CHECK(run || !summary.fits(), "a run that fits needs at least one timed repeat");
  if (!run) {
    fill_movement(plan, nullptr, nullptr, summary);
    return summary;
  }

  summary.makespan = makespan_stats(result.timelines);
  const Timeline& timeline = result.timelines[static_cast<size_t>(summary.makespan->representative)];
  const std::vector<IntervalSet> computing = computing_by_device(timeline, summary.per_device.size());
  fill_device_times(timeline, computing, summary.per_device);
  if (plan.graph->is_training()) {
    fill_pass_times(plan, timeline, summary.per_device);
    if (summary.makespan->median_ms > 0) {
      summary.training->samples_per_s = static_cast<double>(plan.graph->batch()) / (summary.makespan->median_ms / 1000.0);
    }
  }
  copy_replica_times(timeline, summary.per_device);
  fill_movement(plan, &timeline, &computing, summary);
  fill_off_plan_movement(timeline, computing, summary);
  summary.critical_path = find_critical_path(plan, timeline);

  const double device_time_ms = timeline.makespan_us() / 1000.0 * plan.devices;
  if (device_time_ms > 0) {
    for (const DeviceSummary& device : summary.per_device) {
      summary.shares.compute += device.compute_ms / device_time_ms;
      summary.shares.transfer += device.exposed_transfer_ms() / device_time_ms;
      summary.shares.idle += device.idle_ms / device_time_ms;
    }
  }
  if (summary.bubble_ideal) summary.bubble_measured = summary.shares.idle;
  return summary;
}

}  // namespace splitscope
