#include "report/chrome_trace.hpp"

#include <fmt/format.h>

#include <array>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "util/json_dump.hpp"

namespace splitscope {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::array<Lane, 4> kLanes{Lane::kCompute, Lane::kCopyIn, Lane::kCopyOut, Lane::kHost};

int lane_tid(Lane lane) { return static_cast<int>(lane); }

const PlanOp* plan_op(const RunReport& run, const Span& span) {
  if (span.op < 0 || run.plan == nullptr || static_cast<size_t>(span.op) >= run.plan->ops.size()) return nullptr;
  return &run.plan->op(span.op);
}

std::string span_name(const RunReport& run, const Span& span) {
  if (const PlanOp* op = plan_op(run, span)) return op_label(*run.plan, *op);
  return span.label.empty() ? std::string(to_string(span.kind)) : span.label;
}

Json metadata(const char* name, int pid, int tid, Json args) {
  return {{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

/// The cpu executor and the simulator record a transfer once, on the
/// receiver's copy-in lane; the sender's side of the link is busy for the same
/// interval, so the trace draws it on the sender's copy-out lane as well. The
/// cuda backend records both ends itself (a transfer with a copy-out span of
/// its own is left alone).
std::vector<Span> sender_views(const RunReport& run) {
  std::set<int> recorded_by_sender;
  for (const Span& span : run.timeline.spans) {
    if (span.lane == Lane::kCopyOut && span.op >= 0) recorded_by_sender.insert(span.op);
  }
  std::vector<Span> views;
  for (const Span& span : run.timeline.spans) {
    const PlanOp* op = plan_op(run, span);
    if (op == nullptr || span.kind != SpanKind::kTransfer || span.lane != Lane::kCopyIn ||
        op->role != OpRole::kTransfer || op->src_device == span.device || recorded_by_sender.contains(span.op)) {
      continue;
    }
    Span view = span;
    view.device = op->src_device;
    view.lane = Lane::kCopyOut;
    views.push_back(view);
  }
  return views;
}

/// Calls `emit` with each event of `run`, in the trace's order.
void add_run(const std::function<void(const Json&)>& emit, const RunReport& run, int pid_base,
             const std::string& process_prefix) {
  const RunSummary& summary = run.summary;
  const std::set<int> critical(summary.critical_path.spans.begin(), summary.critical_path.spans.end());
  const std::vector<Span> views = sender_views(run);

  const int devices = std::max(summary.devices, run.timeline.device_count());
  std::set<std::pair<int, Lane>> used_lanes;
  for (const Span& span : run.timeline.spans) used_lanes.insert({span.device, span.lane});
  for (const Span& view : views) used_lanes.insert({view.device, view.lane});
  for (int d = 0; d < devices; ++d) {
    const int pid = pid_base + d;
    emit(metadata("process_name", pid, 0, {{"name", fmt::format("{}device {}", process_prefix, d)}}));
    emit(metadata("process_sort_index", pid, 0, {{"sort_index", pid}}));
    for (Lane lane : kLanes) {
      // Every device shows its compute lane; other lanes only where something ran.
      if (lane != Lane::kCompute && !used_lanes.contains({d, lane})) continue;
      emit(metadata("thread_name", pid, lane_tid(lane), {{"name", std::string(to_string(lane))}}));
      emit(metadata("thread_sort_index", pid, lane_tid(lane), {{"sort_index", lane_tid(lane)}}));
    }
  }

  const auto add_span = [&](const Span& span, bool on_critical_path, bool sender_view) {
    Json args = {{"kind", std::string(to_string(span.kind))},
                 {"flops", span.flops},
                 {"bytes", span.bytes},
                 {"critical_path", on_critical_path}};
    if (const PlanOp* op = plan_op(run, span)) {
      args["op"] = span.op;
      args["role"] = std::string(to_string(op->role));
      args["microbatch"] = op->microbatch;
      if (op->role == OpRole::kCollective) args["collective"] = std::string(to_string(op->collective));
      if (op->role == OpRole::kTransfer) {
        args["from_device"] = op->src_device;
        args["to_device"] = op->device;
      }
    }
    if (sender_view) args["sender_view"] = true;  // the same transfer as on the receiver's copy-in lane
    emit({{"name", span_name(run, span)},
                      {"cat", std::string(to_string(span.kind))},
                      {"ph", "X"},
                      {"ts", span.start_us},
                      {"dur", span.duration_us()},
                      {"pid", pid_base + span.device},
                      {"tid", lane_tid(span.lane)},
                      {"args", std::move(args)}});
  };
  for (size_t i = 0; i < run.timeline.spans.size(); ++i) {
    add_span(run.timeline.spans[i], critical.contains(static_cast<int>(i)), false);
  }
  for (const Span& view : views) add_span(view, false, true);
}

/// The trace's pieces: its runs, their process names' prefixes and pid bases, and `otherData`.
struct TraceRuns {
  std::vector<const RunReport*> runs;
  std::vector<std::string> prefixes;
  std::vector<int> pid_bases;
  Json other_data;

  explicit TraceRuns(const std::vector<const RunReport*>& of) : runs(of) {
    Json runs_meta = Json::array();
    const bool several = runs.size() > 1;
    for (size_t k = 0; k < runs.size(); ++k) {
      const RunReport& run = *runs[k];
      prefixes.push_back(several ? fmt::format("{} ({}): ", run.summary.strategy, run.summary.info.backend)
                                 : std::string());
      pid_bases.push_back(several ? static_cast<int>(k) * kTracePidStride : 0);
      runs_meta.push_back({{"model", run.summary.model},
                           {"strategy", run.summary.strategy},
                           {"backend", run.summary.info.backend},
                           {"machine", run.summary.info.machine_name},
                           {"devices", run.summary.devices},
                           {"makespan_us", run.timeline.makespan_us()}});
    }
    other_data = {{"splitscope_runs", runs_meta}};
  }

  void each_event(const std::function<void(const Json&)>& emit) const {
    for (size_t k = 0; k < runs.size(); ++k) add_run(emit, *runs[k], pid_bases[k], prefixes[k]);
  }
};

}  // namespace

Json chrome_trace_json(const RunReport& run) { return chrome_trace_json(std::vector<const RunReport*>{&run}); }

Json chrome_trace_json(const std::vector<const RunReport*>& runs) {
  const TraceRuns trace(runs);
  Json events = Json::array();
  trace.each_event([&events](const Json& event) { events.push_back(event); });
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", trace.other_data}};
}

void write_chrome_trace(const std::vector<const RunReport*>& runs,
                        const std::function<void(std::string_view)>& put) {
  const TraceRuns trace(runs);
  // dump_json() writes a document's keys sorted (it takes nlohmann::json):
  // displayTimeUnit, otherData, traceEvents; and so each event's.
  put(R"({"displayTimeUnit":"ms","otherData":)");
  put(dump_json(trace.other_data));
  put(R"(,"traceEvents":[)");
  bool first = true;
  trace.each_event([&](const Json& event) {
    if (!first) put(",");
    first = false;
    put(dump_json(event));
  });
  put("]}");
}

}  // namespace splitscope
