#include "report/saved_report.hpp"

#include <algorithm>
#include <optional>

#include "report/html_report.hpp"
#include "util/errors.hpp"
#include "util/json_text.hpp"

namespace splitscope {
namespace {

using Json = nlohmann::ordered_json;

template <typename T>
std::optional<T> optional_of(const Json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<T>();
}

/// A time a run that was not timed reports as null: 0, as the summary held it.
double time_or_zero(const Json& value) { return value.is_null() ? 0.0 : value.get<double>(); }

/// A member that reports written before it was added lack (reports/ keeps
/// such reports of the same schema version): null there.
const Json& added_later(const Json& object, const char* key) {
  static const Json kNull;
  const auto found = object.find(key);
  return found == object.end() ? kNull : *found;
}

std::optional<Verdict> verdict_of(const Json& value) {
  if (value.is_null()) return std::nullopt;
  const std::string name = value.get<std::string>();
  for (Verdict verdict : {Verdict::kWins, Verdict::kLoses, Verdict::kEven, Verdict::kUncertain}) {
    if (to_string(verdict) == name) return verdict;
  }
  throw InputError("", "verdict", "'" + name + "' is not a verdict (wins, loses, even, uncertain)");
}

std::optional<ParameterServerInfo> parameter_server_of(const Json& run) {
  const Json& train = added_later(run, "train");
  if (!train.is_object() || !train.contains("parameter_server")) return std::nullopt;
  const Json& ps = train.at("parameter_server");
  ParameterServerInfo info;
  info.mode = ps.at("mode").get<std::string>();
  info.workers = ps.at("workers").get<int>();
  for (const Json& sample : ps.at("loss_curve")) {
    info.loss_curve.emplace_back(sample.at("time_ms").get<double>() * 1000.0, sample.at("loss").get<double>());
  }
  return info;
}

RunReport run_from_json(const Json& run) {
  RunReport report;
  RunSummary& s = report.summary;
  s.model = run.at("model").at("name").get<std::string>();
  s.batch = run.at("batch").get<int64_t>();
  s.strategy = run.at("strategy").get<std::string>();
  s.devices = run.at("devices").get<int>();
  s.microbatches = run.at("microbatches").get<int>();
  // Reports written before --precision stored float32.
  s.precision = run.contains("precision") ? run.at("precision").get<std::string>() : "fp32";
  s.info.backend = run.at("backend").get<std::string>();
  s.info.measured = run.at("measured").get<bool>();
  s.info.machine_name = run.at("machine").at("name").get<std::string>();
  s.info.parameter_server = parameter_server_of(run);
  s.memory.fits = run.at("fits").get<bool>();
  for (const Json& device : run.at("per_device")) {
    DeviceSummary d;
    d.id = device.at("id").get<int>();
    d.compute_ms = time_or_zero(device.at("compute_ms"));
    d.transfer_ms = time_or_zero(device.at("transfer_ms"));
    d.overlap_ms = time_or_zero(added_later(device, "overlap_ms"));
    d.idle_ms = time_or_zero(device.at("idle_ms"));
    d.memory_peak_bytes = device.at("memory_peak_bytes").get<int64_t>();
    s.per_device.push_back(d);
  }
  if (const Json& m = run.at("makespan_ms"); !m.is_null()) {
    MakespanStats stats;
    stats.median_ms = m.at("median").get<double>();
    stats.min_ms = m.at("min").get<double>();
    stats.max_ms = m.at("max").get<double>();
    stats.p95_ms = m.at("p95").get<double>();
    stats.mean_ms = m.at("mean").get<double>();
    stats.repeats = m.at("repeats").get<int>();
    stats.representative = m.at("representative_repeat").get<int>();
    if (m.contains("representative")) {
      stats.representative_ms = m.at("representative").get<double>();
    } else {  // reports written before it: the devices' time adds up to it, up to rounding
      for (const DeviceSummary& d : s.per_device) {
        stats.representative_ms =
            std::max(stats.representative_ms, d.compute_ms + d.exposed_transfer_ms() + d.idle_ms);
      }
    }
    s.makespan = stats;
  }
  s.transfers.count = run.at("transfers").at("count").get<int64_t>();
  s.transfers.bytes = run.at("transfers").at("bytes").get<int64_t>();
  if (const Json& shares = run.at("shares"); !shares.is_null()) {
    s.shares = {shares.at("compute").get<double>(), shares.at("transfer").get<double>(),
                shares.at("idle").get<double>()};
  }
  report.judgement.speedup = optional_of<double>(run.at("speedup"));
  report.judgement.verdict = verdict_of(run.at("verdict"));
  report.judgement.reason = run.at("reason").get<std::string>();
  return report;
}

RunGroup group_from_json(const Json& group, const Json& runs) {
  RunGroup read{group.at("backend").get<std::string>(), group.at("machine").get<std::string>(),
                group.at("measured").get<bool>(), {}, std::nullopt, optional_of<std::string>(group.at("best"))};
  for (const Json& run : runs) read.runs.push_back(run_from_json(run));
  return read;
}

ReportContext context_from_json(const Json& context) {
  ReportContext read;
  read.date = context.at("date").get<std::string>();
  read.host = context.at("host").get<std::string>();
  read.executable = context.at("executable").get<std::string>();
  read.version = context.at("splitscope_version").get<std::string>();
  read.git_revision = context.at("git_revision").get<std::string>();
  read.build_type = context.at("build_type").get<std::string>();
  read.cuda_built = context.at("cuda_built").get<bool>();
  read.cpus = context.at("cpus").get<int>();
  read.command_line = context.at("command_line").get<std::vector<std::string>>();
  return read;
}

std::vector<std::pair<std::string, std::string>> ties_from_json(const Json& pairs) {
  std::vector<std::pair<std::string, std::string>> ties;
  if (pairs.is_null()) return ties;  // a report from before ties were kept
  for (const Json& pair : pairs) ties.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
  return ties;
}

constexpr const char* kKinds = "splitscope.report/1 (run --report), splitscope.compare/1 (compare --report), "
                               "splitscope.validate/1 (validate --report), splitscope.sweep/1 (sweep --report)";

}  // namespace

SavedReportKind saved_report_kind(const Json& report, const std::string& source) {
  const auto schema = report.is_object() ? report.find("schema") : report.end();
  if (!report.is_object() || schema == report.end() || !schema->is_string()) {
    throw InputError(source, "schema",
                     std::string("not a splitscope report: it has no \"schema\" string; report draws ") + kKinds);
  }
  const std::string name = schema->get<std::string>();
  if (name == "splitscope.report/1") return SavedReportKind::kRun;
  if (name == "splitscope.compare/1") return SavedReportKind::kCompare;
  if (name == "splitscope.validate/1") return SavedReportKind::kValidate;
  if (name == "splitscope.sweep/1") return SavedReportKind::kSweep;
  throw InputError(source, "schema", "'" + name + "' is not a kind report draws; it draws " + kKinds);
}

Comparison comparison_from_run_json(const Json& report) {
  Comparison comparison;
  comparison.context = context_from_json(report.at("context"));
  RunGroup group = group_from_json({{"backend", report.at("backend")},
                                    {"machine", report.at("machine").at("name")},
                                    {"measured", report.at("measured")},
                                    // As ComparisonBuilder: the first run, when it was timed.
                                    {"best", report.at("makespan_ms").is_null() ? Json() : report.at("strategy")}},
                                   Json::array({report}));
  comparison.groups.push_back(std::move(group));
  return comparison;
}

Comparison comparison_from_compare_json(const Json& report) {
  Comparison comparison;
  comparison.context = context_from_json(report.at("context"));
  comparison.groups.push_back(group_from_json(report, report.at("runs")));
  for (const Json& group : report.at("predicted")) comparison.groups.push_back(group_from_json(group, group.at("runs")));
  return comparison;
}

OptionSweep option_sweep_from_json(const Json& report) {
  OptionSweep sweep;
  sweep.run_arguments = report.at("run_arguments").get<std::vector<std::string>>();
  sweep.over = report.at("over").get<std::vector<std::string>>();
  for (const Json& entry : report.at("points")) {
    OptionSweepPoint point;
    // ordered_json keeps the values in the sweep's order, the first option along the x axis.
    for (const auto& [option, value] : entry.at("values").items()) point.values.emplace_back(option, value.get<std::string>());
    point.fits = entry.at("fits").get<bool>();
    point.makespan_ms = time_or_zero(entry.at("makespan_ms"));
    point.samples_per_s = time_or_zero(entry.at("samples_per_s"));
    point.speedup = optional_of<double>(entry.at("speedup"));
    point.verdict = entry.at("verdict").get<std::string>();
    if (entry.contains("loss_curve")) {
      for (const Json& sample : entry.at("loss_curve")) {
        point.loss_curve.emplace_back(sample.at("time_ms").get<double>(), sample.at("loss").get<double>());
      }
    }
    sweep.points.push_back(std::move(point));
  }
  return sweep;
}

SavedValidation validation_from_json(const Json& report) {
  SavedValidation read;
  ValidationSetup& setup = read.setup;
  setup.backend = report.at("backend").get<std::string>();
  setup.device_mode = report.at("device_mode").get<std::string>();
  setup.machine_name = report.at("machine").get<std::string>();
  setup.cuda_graph = report.at("cuda_graph").get<bool>();
  if (report.contains("host_speed")) {
    setup.host_speed_before = report.at("host_speed").at("before").get<double>();
    setup.host_speed_after = report.at("host_speed").at("after").get<double>();
  }
  ValidationSummary& s = read.summary;
  for (const Json& c : report.at("cases")) {
    ValidationCase one{c.at("network").get<std::string>(), c.at("devices").get<int>(),
                       c.at("strategy").get<std::string>(), c.at("measured_ms").get<double>(),
                       c.at("predicted_ms").get<double>()};
    if (c.contains("calibrated_share")) one.calibrated_share = c.at("calibrated_share").get<double>();
    if (const Json& repeats = added_later(c, "measured_repeats_ms"); !repeats.is_null()) {
      one.repeat_ms = repeats.get<std::vector<double>>();
    }
    s.cases.push_back(std::move(one));
  }
  for (const Json& g : report.at("groups")) {
    ValidationGroup group;
    group.network = g.at("network").get<std::string>();
    group.devices = g.at("devices").get<int>();
    group.measured_order = g.at("measured_order").get<std::vector<std::string>>();
    group.predicted_order = g.at("predicted_order").get<std::vector<std::string>>();
    group.kendall_tau = g.at("kendall_tau").get<double>();
    group.same_ranking = g.at("same_ranking").get<bool>();
    group.predicted_ties = ties_from_json(added_later(g, "predicted_ties"));
    group.measured_ties = ties_from_json(added_later(g, "measured_ties"));
    // Older reports judged rankings only strictly: same_ranking implies the looser verdicts.
    group.ranking_right = added_later(g, "ranking_right").is_null() ? group.same_ranking
                                                                   : g.at("ranking_right").get<bool>();
    group.ranking_right_beyond_noise = added_later(g, "ranking_right_beyond_noise").is_null()
                                           ? group.ranking_right
                                           : g.at("ranking_right_beyond_noise").get<bool>();
    s.groups.push_back(std::move(group));
  }
  const Json& totals = report.at("summary");
  s.median_abs_error = totals.at("median_abs_error").get<double>();
  s.max_abs_error = totals.at("max_abs_error").get<double>();
  s.within_10_percent = totals.at("within_10_percent").get<int>();
  s.within_25_percent = totals.at("within_25_percent").get<int>();
  s.groups_same_ranking = totals.at("groups_same_ranking").get<int>();
  s.groups_ranking_right = added_later(totals, "groups_ranking_right").is_null()
                               ? s.groups_same_ranking
                               : totals.at("groups_ranking_right").get<int>();
  s.groups_ranking_right_beyond_noise = added_later(totals, "groups_ranking_right_beyond_noise").is_null()
                                            ? s.groups_ranking_right
                                            : totals.at("groups_ranking_right_beyond_noise").get<int>();
  return read;
}

std::string saved_report_html(const std::string& text, const std::string& source) {
  parse_json_text(text, source);  // says what is wrong with text that is not JSON, as for every input file
  const Json report = Json::parse(text);  // again, keeping the order of each object's members
  const SavedReportKind kind = saved_report_kind(report, source);
  try {
    switch (kind) {
      case SavedReportKind::kRun: return html_report(comparison_from_run_json(report));
      case SavedReportKind::kCompare: return html_report(comparison_from_compare_json(report));
      case SavedReportKind::kValidate: {
        const SavedValidation validation = validation_from_json(report);
        return validation_html(validation.summary, validation.setup);
      }
      case SavedReportKind::kSweep: return option_sweep_html(option_sweep_from_json(report));
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(source, "", std::string("an incomplete or altered ") + report.at("schema").get<std::string>() +
                                     " report (" + e.what() + "); give a report as the command wrote it");
  } catch (const InputError& e) {
    throw InputError(source, e.field(), e.problem());
  }
  return {};
}

}  // namespace splitscope
