#include "report/chrome_trace.hpp"

#include <fmt/format.h>

#include <array>
#include <set>
#include <string>

namespace splitscope {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::array<Lane, 4> kLanes{Lane::kCompute, Lane::kCopyIn, Lane::kCopyOut, Lane::kHost};

int lane_tid(Lane lane) { return static_cast<int>(lane); }

std::string span_name(const RunReport& run, const Span& span) {
  if (span.op >= 0 && run.plan != nullptr && static_cast<size_t>(span.op) < run.plan->ops.size()) {
    return op_label(*run.plan, run.plan->op(span.op));
  }
  return span.label.empty() ? std::string(to_string(span.kind)) : span.label;
}

Json metadata(const char* name, int pid, int tid, Json args) {
  return {{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

void add_run(Json& events, const RunReport& run, int pid_base, const std::string& process_prefix) {
  const RunSummary& summary = run.summary;
  const std::set<int> critical(summary.critical_path.spans.begin(), summary.critical_path.spans.end());

  const int devices = std::max(summary.devices, run.timeline.device_count());
  std::set<std::pair<int, Lane>> used_lanes;
  for (const Span& span : run.timeline.spans) used_lanes.insert({span.device, span.lane});
  for (int d = 0; d < devices; ++d) {
    const int pid = pid_base + d;
    events.push_back(metadata("process_name", pid, 0, {{"name", fmt::format("{}device {}", process_prefix, d)}}));
    events.push_back(metadata("process_sort_index", pid, 0, {{"sort_index", pid}}));
    for (Lane lane : kLanes) {
      // Every device shows its compute lane; other lanes only where something ran.
      if (lane != Lane::kCompute && !used_lanes.contains({d, lane})) continue;
      events.push_back(metadata("thread_name", pid, lane_tid(lane), {{"name", std::string(to_string(lane))}}));
      events.push_back(metadata("thread_sort_index", pid, lane_tid(lane), {{"sort_index", lane_tid(lane)}}));
    }
  }

  for (size_t i = 0; i < run.timeline.spans.size(); ++i) {
    const Span& span = run.timeline.spans[i];
    Json args = {{"kind", std::string(to_string(span.kind))},
                 {"flops", span.flops},
                 {"bytes", span.bytes},
                 {"critical_path", critical.contains(static_cast<int>(i))}};
    if (span.op >= 0 && run.plan != nullptr && static_cast<size_t>(span.op) < run.plan->ops.size()) {
      const PlanOp& op = run.plan->op(span.op);
      args["op"] = span.op;
      args["role"] = std::string(to_string(op.role));
      args["microbatch"] = op.microbatch;
      if (op.role == OpRole::kCollective) args["collective"] = std::string(to_string(op.collective));
      if (op.role == OpRole::kTransfer) args["from_device"] = op.src_device;
    }
    events.push_back({{"name", span_name(run, span)},
                      {"cat", std::string(to_string(span.kind))},
                      {"ph", "X"},
                      {"ts", span.start_us},
                      {"dur", span.duration_us()},
                      {"pid", pid_base + span.device},
                      {"tid", lane_tid(span.lane)},
                      {"args", std::move(args)}});
  }
}

}  // namespace

Json chrome_trace_json(const RunReport& run) { return chrome_trace_json(std::vector<const RunReport*>{&run}); }

Json chrome_trace_json(const std::vector<const RunReport*>& runs) {
  Json events = Json::array();
  Json runs_meta = Json::array();
  const bool several = runs.size() > 1;
  for (size_t k = 0; k < runs.size(); ++k) {
    const RunReport& run = *runs[k];
    const std::string prefix =
        several ? fmt::format("{} ({}): ", run.summary.strategy, run.summary.info.backend) : std::string();
    add_run(events, run, several ? static_cast<int>(k) * kTracePidStride : 0, prefix);
    runs_meta.push_back({{"model", run.summary.model},
                         {"strategy", run.summary.strategy},
                         {"backend", run.summary.info.backend},
                         {"machine", run.summary.info.machine_name},
                         {"devices", run.summary.devices},
                         {"makespan_us", run.timeline.makespan_us()}});
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", {{"splitscope_runs", runs_meta}}}};
}

}  // namespace splitscope
