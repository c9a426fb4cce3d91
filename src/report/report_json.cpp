#include "report/report_json.hpp"

#include <optional>

#include "report/input_pipeline_text.hpp"

namespace splitscope {
namespace {

using Json = nlohmann::ordered_json;

template <typename T>
Json or_null(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json makespan_json(const RunSummary& summary) {
  if (!summary.makespan) return nullptr;
  const MakespanStats& m = *summary.makespan;
  return {{"median", m.median_ms},       {"min", m.min_ms},   {"max", m.max_ms},
          {"repeats", m.repeats},        {"p95", m.p95_ms},   {"mean", m.mean_ms},
          {"spread", m.spread()},        {"representative_repeat", m.representative},
          {"representative", m.representative_ms}};
}

Json per_device_json(const RunSummary& summary) {
  Json devices = Json::array();
  const bool timed = summary.timed();
  auto time = [&](double ms) { return timed ? Json(ms) : Json(nullptr); };
  for (const DeviceSummary& d : summary.per_device) {
    devices.push_back({{"id", d.id},
                       {"compute_ms", time(d.compute_ms)},
                       {"transfer_ms", time(d.transfer_ms)},
                       {"idle_ms", time(d.idle_ms)},
                       {"flops", d.flops},
                       {"memory_peak_bytes", d.memory_peak_bytes},
                       {"overlap_ms", time(d.overlap_ms)},
                       {"exposed_transfer_ms", time(d.exposed_transfer_ms())},
                       {"ops", d.ops},
                       {"param_bytes", d.param_bytes},
                       {"activations_peak_bytes", d.activations_peak_bytes},
                       {"memory_available_bytes", or_null(d.memory_available_bytes)}});
    if (summary.training) {
      Json& device = devices.back();
      device["forward_ms"] = time(d.forward_ms);
      device["backward_ms"] = time(d.backward_ms);
      device["update_ms"] = time(d.update_ms);
      device["gradient_bytes"] = d.gradient_bytes;
      device["optimizer_state_bytes"] = d.optimizer_state_bytes;
    }
  }
  return devices;
}

Json input_pipeline_json(const RunInfo& info) {
  if (!info.input_pipeline) return nullptr;
  const InputPipelineInfo& p = *info.input_pipeline;
  const auto ms = [](double us) { return us / 1000.0; };
  return {{"cost_us_per_sample", p.cost_us_per_sample},
          {"prefetch", p.prefetch},
          {"steps", p.steps},
          {"prepare_ms", ms(p.prepare_us)},
          {"copy_ms", ms(p.copy_us)},
          {"compute_ms", ms(p.compute_us)},
          {"step_ms", ms(p.step_us)},
          {"stall_ms", ms(p.stall_us)},
          {"serial_step_ms", ms(p.serial_step_us)},
          {"prefetch_speedup", or_null(prefetch_speedup(p))},
          {"input_bound", p.input_bound}};
}

Json parameter_server_json(const ParameterServerInfo& ps) {
  Json curve = Json::array();
  for (const auto& [time_us, loss] : ps.loss_curve) curve.push_back({{"time_ms", time_us / 1000.0}, {"loss", loss}});
  return {{"mode", ps.mode},
          {"workers", ps.workers},
          {"shards", ps.shards},
          {"spare", ps.spare},
          {"updates", ps.updates},
          {"gradients_pushed", ps.gradients_pushed},
          {"gradients_applied", ps.gradients_applied},
          {"gradients_dropped", ps.gradients_dropped},
          {"wall_ms", ps.wall_us / 1000.0},
          {"applied_samples_per_s", ps.applied_samples_per_s},
          {"shard_bytes", ps.shard_bytes},
          {"mitigations", ps.mitigations},
          {"loss_curve", curve}};
}

Json train_json(const RunSummary& summary) {
  if (!summary.training) return nullptr;
  const TrainingSummary& t = summary.training.value();
  Json train = {{"steps", t.steps},
                {"losses", t.losses.empty() ? Json(nullptr) : Json(t.losses)},
                {"schedule", t.schedule},
                {"samples_per_s", or_null(t.samples_per_s)},
                {"optimizer", {{"name", t.optimizer}, {"learning_rate", t.learning_rate}, {"momentum", t.momentum}}},
                {"loss", t.loss}};
  if (const auto& ps = summary.info.parameter_server) {
    train["staleness"] = {{"mean", ps->staleness_mean}, {"max", ps->staleness_max}, {"histogram", ps->staleness_histogram}};
    train["parameter_server"] = parameter_server_json(*ps);
  }
  return train;
}

Json transfers_json(const RunSummary& summary) {
  const bool timed = summary.timed();
  Json kinds = Json::array();
  for (const MovementSummary& m : summary.movement) {
    kinds.push_back({{"kind", m.kind},
                     {"count", m.count},
                     {"bytes", m.bytes_moved},
                     {"payload_bytes", m.payload_bytes},
                     {"time_ms", timed ? Json(m.time_ms) : Json(nullptr)},
                     {"algbw_gbps", timed ? Json(m.algbw_gbps) : Json(nullptr)},
                     {"busbw_gbps", timed ? Json(m.busbw_gbps) : Json(nullptr)},
                     {"exposed_ms", timed ? Json(m.exposed_ms) : Json(nullptr)}});
  }
  return {{"count", summary.transfers.count},
          {"bytes", summary.transfers.bytes},
          {"time_ms", timed ? Json(summary.transfers.time_ms) : Json(nullptr)},
          {"by_kind", kinds}};
}

Json critical_path_json(const RunSummary& summary) {
  if (!summary.timed()) return nullptr;
  const CriticalPath& path = summary.critical_path;
  return {{"compute_ms", path.compute_ms},
          {"input_ms", path.input_ms},
          {"transfer_ms", path.transfer_ms},
          {"gap_ms", path.gap_ms},
          {"length_ms", path.length_ms()},
          {"transfer_share", path.transfer_share()},
          {"spans", path.spans.size()}};
}

Json machine_json(const RunInfo& info) {
  Json facts = Json::object();
  for (const auto& [key, value] : info.facts) facts[key] = value;
  Json machine = {{"name", info.machine_name}, {"device_name", info.device_name}, {"driver", info.driver}, {"facts", facts}};
  if (info.calibrated_share) machine["calibrated_share"] = *info.calibrated_share;
  if (info.model_error) {
    machine["model_error"] = {{"relative", info.model_error->relative},
                              {"covered_share", info.model_error->covered_share}};
  }
  return machine;
}

/// The machine device of each plan device: plan device i on device i where the run says nothing else.
Json device_map_json(const RunSummary& summary) {
  const std::vector<int>& device_map = summary.info.placement.device_map;
  if (!device_map.empty()) return device_map;
  Json identity = Json::array();
  for (int d = 0; d < summary.devices; ++d) identity.push_back(d);
  return identity;
}

Json default_placement_json(const PlacementInfo& placement) {
  if (!placement.default_cross_node_bytes) return nullptr;
  return {{"cross_node_bytes", *placement.default_cross_node_bytes},
          {"makespan_ms", placement.default_makespan_us ? Json(*placement.default_makespan_us / 1000.0)
                                                        : Json(nullptr)},
          {"note", placement.note.empty() ? Json(nullptr) : Json(placement.note)}};
}

Json judgement_extras(const Judgement& judgement) {
  if (!judgement.losses) return nullptr;
  return {{"compute_inflation", judgement.losses->compute_inflation},
          {"exposed_transfer", judgement.losses->exposed_transfer},
          {"idle", judgement.losses->idle}};
}

Json group_json(const RunGroup& group) {
  Json runs = Json::array();
  for (const RunReport& run : group.runs) runs.push_back(run_report_json(run, nullptr));
  return {{"backend", group.backend},
          {"machine", group.machine},
          {"measured", group.measured},
          {"runs", runs},
          {"best", or_null(group.best)}};
}

}  // namespace

Json context_json(const ReportContext& context) {
  return {{"date", context.date},
          {"host", context.host},
          {"executable", context.executable},
          {"splitscope_version", context.version},
          {"git_revision", context.git_revision},
          {"build_type", context.build_type},
          {"cuda_built", context.cuda_built},
          {"cpus", context.cpus},
          {"command_line", context.command_line},
          {"command", quoted_command_line(context.command_line)}};
}

Json run_report_json(const RunReport& report, const ReportContext* context) {
  const RunSummary& s = report.summary;
  const Judgement& j = report.judgement;
  Json json = {
      {"schema", kReportSchema},
      {"model", {{"name", s.model}, {"params", s.params}, {"flops", s.flops}}},
      {"strategy", s.strategy},
      {"devices", s.devices},
      {"microbatches", s.microbatches},
      {"batch", s.batch},
      {"backend", s.info.backend},
      {"measured", s.info.measured},
      {"device_mode", s.info.device_mode},
      {"machine", machine_json(s.info)},
      {"fits", s.fits()},
      {"makespan_ms", makespan_json(s)},
      {"per_device", per_device_json(s)},
      {"transfers", transfers_json(s)},
      {"critical_path", critical_path_json(s)},
      {"baseline_makespan_ms", or_null(j.baseline_makespan_ms)},
      {"speedup", or_null(j.speedup)},
      {"verdict", j.verdict ? Json(std::string(to_string(*j.verdict))) : Json(nullptr)},
      {"reason", j.reason},
      // Extras beyond the first contract (docs/reports.md).
      {"precision", s.precision},
      {"train", train_json(s)},
      {"baseline_strategy", or_null(j.baseline_strategy)},
      {"decided_by", std::string(to_string(j.decider))},
      {"speedup_interval", j.speedup_interval ? Json{j.speedup_interval->low, j.speedup_interval->high}
                                              : Json(nullptr)},
      {"model_error_interval", j.model_error_interval
                                   ? Json{j.model_error_interval->low, j.model_error_interval->high}
                                   : Json(nullptr)},
      {"losses", judgement_extras(j)},
      {"shares", s.timed() ? Json{{"compute", s.shares.compute},
                                  {"transfer", s.shares.transfer},
                                  {"idle", s.shares.idle}}
                           : Json(nullptr)},
      {"bubble", s.bubble_ideal ? Json{{"measured", or_null(s.bubble_measured)}, {"ideal", *s.bubble_ideal}}
                                : Json(nullptr)},
      {"memory", {{"checked", s.memory.checked},
                  {"problem", s.fits() ? Json(nullptr) : Json(s.memory.problem)},
                  {"max_peak_bytes", s.max_memory_peak_bytes()}}},
      {"plan_notes", s.plan_notes},
      {"placement", s.info.placement.mode},
      {"device_map", device_map_json(s)},
      {"cross_node_bytes", s.info.placement.cross_node_bytes},
      {"default_placement", default_placement_json(s.info.placement)},
      {"input_pipeline", input_pipeline_json(s.info)},
  };
  if (context != nullptr) json["context"] = context_json(*context);
  return json;
}

Json compare_json(const Comparison& comparison) {
  const RunGroup& primary = comparison.primary();
  Json runs = Json::array();
  for (const RunReport& run : primary.runs) runs.push_back(run_report_json(run, nullptr));
  Json predicted = Json::array();
  for (size_t g = 1; g < comparison.groups.size(); ++g) predicted.push_back(group_json(comparison.groups[g]));
  return {{"schema", kCompareSchema},
          {"runs", runs},
          {"best", or_null(primary.best)},
          {"backend", primary.backend},
          {"machine", primary.machine},
          {"measured", primary.measured},
          {"predicted", predicted},
          {"context", context_json(comparison.context)}};
}

}  // namespace splitscope
