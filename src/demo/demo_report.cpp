#include "demo/demo_report.hpp"

#include <fmt/format.h>

#include "demo/sweep_chart.hpp"
#include "report/html_page.hpp"
#include "report/judgement.hpp"
#include "report/report_json.hpp"
#include "report/svg_charts.hpp"
#include "report/text_table.hpp"
#include "report/units.hpp"

namespace splitscope {
namespace {

using Json = nlohmann::ordered_json;

Json optional_number(const std::optional<double>& value) { return value ? Json(*value) : Json(nullptr); }

Json makespan_json(const std::optional<MakespanStats>& makespan) {
  if (!makespan) return nullptr;
  return {{"median", makespan->median_ms},
          {"min", makespan->min_ms},
          {"max", makespan->max_ms},
          {"repeats", makespan->repeats}};
}

constexpr const char* kSingleBaseline =
    "the cell-by-cell single device (this backend has no fused training step)";
constexpr const char* kSingleBaselineMethod =
    "the single strategy's training steps, every cell's forward and backward one op each";

Json shape_json(const RnnDemoShape& shape) {
  return {{"cell", shape.cell}, {"layers", shape.layers}, {"hidden", shape.hidden}, {"steps", shape.steps},
          {"batch", shape.batch}};
}

/// The keys every demo report starts with, in order.
Json header_json(const ReportContext& context, const RnnDemoSettings& settings, const RunInfo& info) {
  return {{"schema", kDemoRnnSchema},
          {"context", context_json(context)},
          {"shape", shape_json(settings.shape)},
          {"devices", settings.devices},
          {"microbatches", settings.microbatches},
          {"backend", info.backend},
          {"measured", info.measured},
          {"device_mode", info.device_mode},
          {"machine", {{"name", info.machine_name}, {"device_name", info.device_name}, {"driver", info.driver}}}};
}

Json baseline_json(const std::string& implementation, const std::string& method, bool measured,
                   const std::string& device_mode, const std::optional<MakespanStats>& makespan) {
  return {{"implementation", implementation}, {"method", method},          {"measured", measured},
          {"device_mode", device_mode},       {"makespan_ms", makespan_json(makespan)}};
}

Json row_json(const DemoRow& row, bool against_single) {
  const bool timed = row.makespan.has_value();
  return {{"way", to_string(row.way)},
          {"title", row.title},
          {"strategy", row.strategy},
          {"devices", row.devices},
          {"microbatches", row.microbatches},
          {"makespan_ms", makespan_json(row.makespan)},
          {"speedup_vs_fused", timed && !against_single ? Json(row.speedup) : Json(nullptr)},
          {"speedup_vs_baseline", timed ? Json(row.speedup) : Json(nullptr)},
          {"compute_ms", timed ? Json(row.compute_ms) : Json(nullptr)},
          {"transfer_ms", timed ? Json(row.transfer_ms) : Json(nullptr)},
          {"moved_bytes", row.moved_bytes},
          {"idle_share", timed ? Json(row.idle_share) : Json(nullptr)},
          {"verdict", row.verdict ? Json(std::string(to_string(*row.verdict))) : Json(nullptr)},
          {"decider", row.decider},
          {"reason", row.reason}};
}

Json wavefront_json(const Wavefront& wave) {
  Json busy = Json::array();
  for (size_t d = 0; d < wave.busy.size(); ++d) {
    std::string marks;
    for (size_t k = 0; k < wave.busy[d].size(); ++k) marks += wave.busy[d][k] ? '#' : wave.partial[d][k] ? '-' : '.';
    busy.push_back(marks);
  }
  return {{"slice_us", wave.slice_us},
          {"cells_per_slice", wave.cells_per_slice},
          {"busy", busy},
          {"busy_devices", wave.busy_devices},
          {"fill_slices", wave.fill_slices},
          {"drain_slices", wave.drain_slices},
          {"fill_ms", wave.fill_us / 1e3},
          {"steady_ms", wave.steady_us / 1e3},
          {"drain_ms", wave.drain_us / 1e3},
          {"peak_busy", wave.peak_busy},
          {"steady_occupancy", wave.steady_occupancy},
          {"compute_ms", wave.compute_us / 1e3},
          {"transfer_ms", wave.transfer_us / 1e3},
          {"makespan_ms", wave.makespan_us / 1e3}};
}

constexpr const char* kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; background: #fff; max-width: 1200px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ccc; }
p.context { color: #666; font-size: 12px; margin: 0 0 12px; }
p.conclusion { font-size: 15px; font-weight: 600; }
pre.wavefront { background: #f6f6f6; padding: 10px; font-size: 13px; line-height: 1.25; overflow-x: auto; }
table.demo { border-collapse: collapse; font-size: 13px; }
table.demo th, table.demo td { padding: 4px 8px; border-bottom: 1px solid #e4e4e4; text-align: right; white-space: nowrap; }
table.demo th { background: #f3f3f3; } table.demo td.left, table.demo th.left { text-align: left; }
table.demo td.reason { text-align: left; white-space: normal; max-width: 520px; }
td.wins { color: #1a7f37; font-weight: 600; } td.loses { color: #b42318; font-weight: 600; } td.even { color: #555; font-weight: 600; }
figure { margin: 8px 0 16px; } figcaption { font-size: 13px; color: #444; margin-bottom: 4px; }
svg { display: block; max-width: 100%; height: auto; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
svg text.lane, svg text.ytick { text-anchor: end; } svg text.tick, svg text.xtick, svg text.axis-name { text-anchor: middle; fill: #555; }
svg text.chart-title { font-size: 13px; font-weight: 600; }
svg rect.lane-bg { fill: #f6f6f6; } svg line.grid { stroke: #e2e2e2; stroke-width: 1; }
svg line.reference { stroke: #111; stroke-dasharray: 5 4; stroke-width: 1.2; } svg text.reference-label { fill: #111; }
rect.compute { fill: #4e79a7; } rect.transfer { fill: #f28e2b; } rect.collective { fill: #b07aa1; }
rect.idle { fill: #d9d9d9; } rect.critical { stroke: #111; stroke-width: 1.2; }
.line { fill: none; stroke-width: 2; } .point { stroke: #fff; stroke-width: 1; }
.fused { stroke: #111; } circle.fused { fill: #111; }
.split { stroke: #4e79a7; } circle.split { fill: #4e79a7; }
.microbatched { stroke: #f28e2b; } circle.microbatched { fill: #f28e2b; }
footer { margin-top: 32px; color: #666; font-size: 12px; }
)";

std::string td(const std::string& text, const std::string& css_class = "") {
  return css_class.empty() ? fmt::format("<td>{}</td>", escape_html(text))
                           : fmt::format(R"(<td class="{}">{}</td>)", css_class, escape_html(text));
}

std::string page_start(const std::string& title, const ReportContext& context) {
  std::string html = html_page_start(title, kStyle);
  html += fmt::format("<h1>{}</h1>", escape_html(title));
  html += fmt::format("<p class=\"context\">{} on {} &middot; splitscope {} ({}, {}) &middot; <code>{}</code></p>",
                      escape_html(context.date), escape_html(context.host), escape_html(context.version),
                      escape_html(context.git_revision), escape_html(context.build_type),
                      escape_html(quoted_command_line(context.command_line)));
  return html;
}

std::string where_text(const RunInfo& info) {
  std::string text = fmt::format("{} ({})", info.backend, info.device_mode);
  if (!info.machine_name.empty()) text += fmt::format(", machine {}", info.machine_name);
  if (!info.device_name.empty()) text += fmt::format(" ({})", info.device_name);
  return text;
}

std::string rows_html(const std::vector<DemoRow>& rows) {
  std::string html = R"(<table class="demo"><thead><tr><th class="left">way</th><th>devices</th><th>makespan</th>)" +
                     fmt::format("<th>vs {}</th>", against_fused(rows) ? "fused" : "single") +
                     "<th>compute</th><th>transfer</th><th>moved</th><th>idle</th>"
                     R"(<th class="left">verdict</th><th class="left">reason</th></tr></thead><tbody>)";
  for (const DemoRow& row : rows) {
    const bool timed = row.makespan.has_value();
    const bool baseline = row.decider == "baseline";
    const std::string verdict = row.verdict ? std::string(to_string(*row.verdict)) : "baseline";
    html += "<tr>" + td(row.title, "left") + td(std::to_string(row.devices)) +
            td(timed ? format_ms(row.makespan->median_ms) : "does not fit") +
            td(timed ? format_speedup(row.speedup) : "-") + td(timed ? format_ms(row.compute_ms) : "-") +
            td(baseline || !timed || row.moved_bytes == 0 ? "-" : format_ms(row.transfer_ms)) +
            td(baseline ? "-" : binary_bytes(double(row.moved_bytes))) +
            td(baseline || !timed ? "-" : format_share(row.idle_share)) + td(verdict, row.verdict ? verdict : "left") +
            td(row.reason, "reason") + "</tr>";
  }
  return html + "</tbody></table>";
}

RunInfo primary_info(const RnnDemoResult& result) {
  if (result.comparison.groups.empty() || result.comparison.primary().runs.empty()) return {};
  return result.comparison.primary().runs.front().summary.info;
}

std::vector<std::optional<double>> column(const SweepResult& result, std::optional<double> SweepPoint::*field) {
  std::vector<std::optional<double>> values;
  for (const SweepPoint& point : result.points) values.push_back(point.*field);
  return values;
}

}  // namespace

std::string shape_text(const RnnDemoShape& shape, const std::string& swept) {
  // The swept parameter by its letter: "lstm, 4 layers x H hidden, 64 steps, batch 64".
  auto value = [&](const char* name, const char* letter, int64_t v) {
    return swept == name ? std::string(letter) : std::to_string(v);
  };
  return fmt::format("{}, {} layers x {} hidden, {} steps, batch {}", shape.cell, value("layers", "L", shape.layers),
                     value("hidden", "H", shape.hidden), value("steps", "T", shape.steps),
                     value("batch", "B", shape.batch));
}

Json demo_json(const RnnDemoResult& result, const ReportContext& context) {
  Json json = header_json(context, result.settings, primary_info(result));
  if (!result.baseline_fused()) {
    const RunInfo info = primary_info(result);
    json["baseline"] = baseline_json(kSingleBaseline, kSingleBaselineMethod, info.measured, info.device_mode,
                                     result.rows.front().makespan);
  } else {
    json["baseline"] = baseline_json(result.fused.implementation, result.fused.method, result.fused.measured,
                                     result.fused.device_mode, makespan_stats(result.fused.timelines));
  }
  json["train"] = nullptr;
  if (result.trains()) {
    const RnnDemoSettings& s = result.settings;
    json["train"] = {{"steps", result.rows.front().makespan ? result.rows.front().makespan->repeats : 1},
                     {"schedule", std::string(to_string(s.schedule))},
                     {"optimizer", std::string(s.training->name())},
                     {"recompute", s.recompute}};
  }
  Json ways = Json::array();
  for (const DemoRow& row : result.rows) ways.push_back(row_json(row, !result.baseline_fused()));
  json["ways"] = ways;
  json["wavefront"] = result.wavefront.busy.empty() ? Json(nullptr) : wavefront_json(result.wavefront);
  json["conclusion"] = result.conclusion;
  Json runs = Json::array();
  for (const RunReport* run : result.comparison.all_runs()) runs.push_back(run_report_json(*run, nullptr));
  json["runs"] = runs;
  json["sweep"] = nullptr;
  return json;
}

Json sweep_json(const SweepResult& result, const ReportContext& context) {
  RnnDemoSettings first = result.base;
  if (!result.points.empty()) {
    first.shape = with_swept(result.base.shape, result.sweep.name, result.points.front().value);
    first.devices = result.points.front().devices;
    first.microbatches = result.points.front().microbatches;
  }
  Json json = header_json(context, first, result.info);
  json["shape"] = shape_json(result.base.shape);
  json["baseline"] = baseline_json(result.fused_implementation, result.fused_method, result.measured,
                                   result.measured ? "" : "simulated", std::nullopt);
  json["train"] = nullptr;  // sweeps run forward passes only
  json["ways"] = nullptr;
  json["wavefront"] = nullptr;
  json["conclusion"] = crossover_text(result);
  json["runs"] = nullptr;
  Json points = Json::array();
  for (const SweepPoint& point : result.points) {
    const auto best = point.best_speedup();
    points.push_back({{"value", point.value},
                      {"devices", point.devices},
                      {"microbatches", point.microbatches},
                      {"fused_ms", point.fused_ms},
                      {"split_ms", optional_number(point.split_ms)},
                      {"microbatched_ms", optional_number(point.microbatched_ms)},
                      {"split_speedup", optional_number(point.split_speedup)},
                      {"microbatched_speedup", optional_number(point.microbatched_speedup)},
                      {"best_speedup", optional_number(best)},
                      {"verdict", best ? Json(std::string(to_string(verdict_for(*best)))) : Json(nullptr)},
                      {"split_reason", point.split_reason}});
  }
  json["sweep"] = {{"name", result.sweep.name},
                   {"values", result.sweep.values},
                   {"points", points},
                   {"crossover", result.crossover ? Json(*result.crossover) : Json(nullptr)}};
  return json;
}

std::string demo_html(const RnnDemoResult& result, const ReportContext& context) {
  const RnnDemoSettings& s = result.settings;
  std::string html = page_start(
      fmt::format("splitscope demo rnn{}: {}", result.trains() ? " --train" : "", shape_text(s.shape)), context);
  const bool fused = result.baseline_fused();
  const std::string steps =
      result.trains() ? fmt::format(" Training steps ({}).", escape_html(std::string(s.training->name()))) : "";
  if (!fused) {
    html += fmt::format("<p>Run on {}.{} Baseline: {}: {}.</p>", escape_html(where_text(primary_info(result))), steps,
                        kSingleBaseline, kSingleBaselineMethod);
  } else {
    html += fmt::format("<p>Run on {}.{} Baseline: the fused single device, {}: {}.</p>",
                        escape_html(where_text(primary_info(result))), steps, escape_html(result.fused.implementation),
                        escape_html(result.fused.method));
  }
  html += fmt::format("<p class=\"conclusion\">Verdict: {}.</p>", escape_html(result.conclusion));
  html += fmt::format("<h2>Against the {} single device</h2>", fused ? "fused" : "cell-by-cell") +
          rows_html(result.rows);
  if (!result.trains()) {
    html += fmt::format("<h2>The wavefront of the layer split over {} devices</h2>", s.devices);
    html += "<p class=\"context\">One row per device, one column per time slice (the median cell's time, or several); "
            "# where a cell ran for more than half the slice, - where one ran for less.</p>";
    html += fmt::format("<pre class=\"wavefront\">{}</pre>", escape_html(render_wavefront(result.wavefront)));
  }
  html += "<h2>Timelines</h2>";
  for (const RunReport* run : result.comparison.all_runs()) {
    if (!run->summary.timed()) continue;
    html += fmt::format("<figure><figcaption>{} over {} device{}{}: makespan {}</figcaption>{}</figure>",
                        escape_html(run->summary.strategy), run->summary.devices,
                        run->summary.devices == 1 ? "" : "s",
                        run->summary.microbatches > 1 ? fmt::format(", {} micro-batches", run->summary.microbatches)
                                                      : "",
                        format_ms(run->summary.makespan->representative_ms), svg_timeline(*run));
  }
  html += fmt::format("<footer>Makespan: median over the timed {}. vs {}: the {} single device's median over this "
                      "median; wins at &ge; 1.05&times;, loses at &le; 0.95&times;. Compute: compute time summed over "
                      "devices; transfer: each transfer's time, summed; idle: share of device time (devices &times; "
                      "makespan).</footer>",
                      result.trains() ? "steps" : "repeats", fused ? "fused" : "single",
                      fused ? "fused" : "cell-by-cell");
  return html + "</body></html>\n";
}

std::string sweep_html(const SweepResult& result, const ReportContext& context) {
  const std::string& name = result.sweep.name;
  std::string html =
      page_start(fmt::format("splitscope demo rnn: sweep over {} ({})", name, shape_text(result.base.shape, name)),
                 context);
  html += fmt::format("<p>Run on {}. Baseline: the fused single device, {}: {}.</p>",
                      escape_html(where_text(result.info)), escape_html(result.fused_implementation),
                      escape_html(result.fused_method));
  html += fmt::format("<p class=\"conclusion\">{}.</p>", escape_html(crossover_text(result)));

  LineChart speedups;
  speedups.title = fmt::format("Speedup against the fused single device, by {}", name);
  speedups.x_name = name;
  speedups.y_name = "speedup";
  speedups.y_unit = "x";
  speedups.reference = 1.0;
  speedups.reference_label = "fused single device";
  LineChart times;
  times.title = fmt::format("Makespan (median), by {}", name);
  times.x_name = name;
  times.y_name = "ms";
  times.y_unit = " ms";
  times.log_y = true;
  std::vector<std::optional<double>> fused_ms;
  for (const SweepPoint& point : result.points) {
    speedups.x_labels.push_back(std::to_string(point.value));
    times.x_labels.push_back(std::to_string(point.value));
    fused_ms.emplace_back(point.fused_ms);
  }
  speedups.series = {{"layer split", "split", column(result, &SweepPoint::split_speedup)},
                     {"with micro-batches", "microbatched", column(result, &SweepPoint::microbatched_speedup)}};
  times.series = {{"fused, 1 device", "fused", fused_ms},
                  {"layer split", "split", column(result, &SweepPoint::split_ms)},
                  {"with micro-batches", "microbatched", column(result, &SweepPoint::microbatched_ms)}};
  html += "<figure>" + svg_line_chart(speedups) + "</figure><figure>" + svg_line_chart(times) + "</figure>";

  html += fmt::format(R"(<h2>Every {}</h2><table class="demo"><thead><tr><th>{}</th><th>devices</th>)", escape_html(name),
                      escape_html(name));
  html += "<th>fused 1 device</th><th>layer split</th><th>vs fused</th><th>micro-batched</th><th>vs fused</th>"
          R"(<th class="left">verdict</th><th class="left">why (layer split)</th></tr></thead><tbody>)";
  auto ms = [](const std::optional<double>& v) { return v ? format_ms(*v) : std::string("-"); };
  auto speedup = [](const std::optional<double>& v) { return v ? format_speedup(*v) : std::string("-"); };
  for (const SweepPoint& point : result.points) {
    const auto best = point.best_speedup();
    const std::string verdict = best ? std::string(to_string(verdict_for(*best))) : "-";
    html += "<tr>" + td(std::to_string(point.value)) + td(std::to_string(point.devices)) + td(format_ms(point.fused_ms)) +
            td(ms(point.split_ms)) + td(speedup(point.split_speedup)) +
            td(point.microbatches > 1 ? fmt::format("{} (M={})", ms(point.microbatched_ms), point.microbatches) : "-") +
            td(speedup(point.microbatched_speedup)) + td(verdict, best ? verdict : "left") +
            td(point.split_reason, "reason") + "</tr>";
  }
  html += "</tbody></table>";
  html += "<footer>Makespan: median over the timed repeats. vs fused: the fused single device's median over this "
          "median; a split wins at &ge; 1.05&times;. The crossover is the first value at which either split "
          "wins.</footer>";
  return html + "</body></html>\n";
}

}  // namespace splitscope
