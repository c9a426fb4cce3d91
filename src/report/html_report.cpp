#include "report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/html_page.hpp"
#include "report/memory_timeline.hpp"
#include "report/svg_charts.hpp"
#include "report/svg_line_chart.hpp"
#include "report/text_table.hpp"
#include "report/units.hpp"

namespace splitscope {
namespace {

constexpr const char* kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ccc; }
h3 { font-size: 15px; margin: 18px 0 6px; }
p.context { color: #666; font-size: 12px; margin: 0 0 12px; }
table.compare { border-collapse: collapse; font-size: 13px; }
table.compare th, table.compare td { padding: 4px 8px; border-bottom: 1px solid #e4e4e4; text-align: right; white-space: nowrap; }
table.compare th { background: #f3f3f3; }
table.compare td.strategy, table.compare td.reason, table.compare th.left { text-align: left; }
table.compare td.reason { white-space: normal; max-width: 520px; }
table.compare td.wins, table.compare td.loses, table.compare td.even { text-align: left; font-weight: 600; }
td.wins { color: #1a7f37; } td.loses { color: #b42318; } td.even { color: #555; }
figure { margin: 8px 0 16px; } figcaption { font-size: 13px; color: #444; margin-bottom: 4px; }
svg { display: block; max-width: 100%; height: auto; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
svg text.lane { text-anchor: end; } svg text.tick { text-anchor: middle; fill: #777; }
svg rect.lane-bg { fill: #f6f6f6; } svg line.grid { stroke: #ddd; stroke-width: 1; }
rect.compute { fill: #4e79a7; } rect.transfer { fill: #f28e2b; } rect.collective { fill: #b07aa1; }
rect.idle { fill: #d9d9d9; } rect.critical { stroke: #111; stroke-width: 1.2; }
.legend span { display: inline-block; margin-right: 16px; font-size: 12px; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -2px; }
footer { margin-top: 32px; color: #666; font-size: 12px; max-width: 900px; }
)";

std::string cell(const std::string& text, const std::string& css_class = "") {
  return css_class.empty() ? fmt::format("<td>{}</td>", escape_html(text))
                           : fmt::format(R"(<td class="{}">{}</td>)", css_class, escape_html(text));
}

std::string group_heading(const RunGroup& group) {
  if (!group.measured) return fmt::format("Predicted on {} (simulated)", group.machine);
  return group.machine.empty() ? fmt::format("Measured on {}", group.backend)
                               : fmt::format("Measured on {} ({})", group.backend, group.machine);
}

std::string makespan_text(const RunSummary& s) {
  if (!s.fits()) return "does not fit";
  if (!s.timed()) return "-";
  if (s.makespan->repeats < 2) return format_ms(s.makespan->median_ms);
  return fmt::format("{} \u00b1{:.0f}%", format_ms(s.makespan->median_ms), s.makespan->spread() * 100.0);
}

std::string prediction_text(const RunGroup& group, const std::string& strategy) {
  for (const RunReport& run : group.runs) {
    if (run.summary.strategy != strategy) continue;
    std::string text = makespan_text(run.summary);
    if (run.judgement.speedup) text += fmt::format(", {}", format_speedup(*run.judgement.speedup));
    if (run.judgement.verdict) text += fmt::format(" {}", to_string(*run.judgement.verdict));
    return text;
  }
  return "-";
}

std::string table_html(const Comparison& comparison, size_t index) {
  const RunGroup& group = comparison.groups[index];
  std::string html = R"(<table class="compare"><thead><tr><th class="left">strategy</th><th>devices</th>)"
                     "<th>makespan</th><th>speedup</th><th>compute</th><th>transfer</th><th>idle</th>"
                     "<th>moved</th><th>peak mem/device</th>";
  std::vector<const RunGroup*> beside;
  if (index == 0) {
    for (size_t g = 1; g < comparison.groups.size(); ++g) {
      beside.push_back(&comparison.groups[g]);
      html += fmt::format("<th>{}</th>", escape_html(comparison.groups[g].measured
                                                         ? comparison.groups[g].backend
                                                         : "predicted " + comparison.groups[g].machine));
    }
  }
  html += R"(<th class="left">verdict</th><th class="left">reason</th></tr></thead><tbody>)";
  for (const RunReport& run : group.runs) {
    const RunSummary& s = run.summary;
    const Judgement& j = run.judgement;
    const bool timed = s.timed();
    html += "<tr>" + cell(s.strategy, "strategy") + cell(std::to_string(s.devices)) + cell(makespan_text(s)) +
            cell(j.speedup ? format_speedup(*j.speedup) : "-") + cell(timed ? format_share(s.shares.compute) : "-") +
            cell(timed ? format_share(s.shares.transfer) : "-") + cell(timed ? format_share(s.shares.idle) : "-") +
            cell(binary_bytes(double(s.transfers.bytes))) + cell(binary_bytes(double(s.max_memory_peak_bytes())));
    for (const RunGroup* other : beside) html += cell(prediction_text(*other, s.strategy));
    const std::string verdict = j.verdict ? std::string(to_string(*j.verdict)) : "-";
    html += cell(verdict, j.verdict ? verdict : "") + cell(j.reason, "reason") + "</tr>";
  }
  html += "</tbody></table>";
  return html;
}

/// Parameter-server runs: the loss against wall time, one line per run.
std::string loss_curves_html(const RunGroup& group) {
  std::vector<LineSeries> series;
  for (const RunReport& run : group.runs) {
    const auto& ps = run.summary.info.parameter_server;
    if (!ps || ps->loss_curve.empty()) continue;
    LineSeries line{fmt::format("{} ({} workers)", ps->mode, ps->workers), {{0.0, ps->loss_curve.front().second}}};
    for (const auto& [time_us, loss] : ps->loss_curve) line.points.emplace_back(time_us / 1000.0, loss);
    series.push_back(std::move(line));
  }
  if (series.empty()) return {};
  return "<h3>Loss against wall time</h3><p class=\"context\">Parameter servers: each step window's end and the "
         "mean loss of the worker steps that ended in it (the first point is the first step's loss, at 0).</p>" +
         svg_line_chart(series, "wall time (ms)", "loss");
}

/// Training runs: the bytes in use on each device over the representative step.
std::string memory_charts_html(const RunGroup& group) {
  std::string html;
  for (const RunReport& run : group.runs) {
    if (!run.summary.timed() || run.plan == nullptr || !run.plan->graph->is_training()) continue;
    const auto devices = memory_over_time(*run.plan, run.timeline);
    std::vector<LineSeries> series;
    for (size_t d = 0; d < devices.size(); ++d) {
      LineSeries line{fmt::format("device {}", d), {}};
      for (const MemoryPoint& point : devices[d]) {
        // A step function: hold the level until the next change.
        if (!line.points.empty()) line.points.emplace_back(point.time_us / 1000.0, line.points.back().second);
        line.points.emplace_back(point.time_us / 1000.0, static_cast<double>(point.bytes) / (1 << 20));
      }
      series.push_back(std::move(line));
    }
    html += fmt::format("<figure><figcaption>{}</figcaption>{}</figure>", escape_html(run.summary.strategy),
                        svg_line_chart(series, "time in the step (ms)", "memory in use (MiB)"));
  }
  if (html.empty()) return {};
  return "<h3>Memory per device over the step</h3><p class=\"context\">Weights, gradient buffers and optimizer "
         "state throughout, plus each activation from the start of the op writing it to the end of the last op "
         "reading it: a pipeline's stash grows through its forwards and drains through its backwards (1F1B keeps "
         "at most N micro-batches on the first stage).</p>" +
         html;
}

std::string group_html(const Comparison& comparison, size_t index) {
  const RunGroup& group = comparison.groups[index];
  std::string html = fmt::format("<section class=\"group\"><h2>{}</h2>", escape_html(group_heading(group)));
  html += table_html(comparison, index);
  html += group.best ? fmt::format("<p>Best: <b>{}</b>.</p>", escape_html(*group.best))
                     : std::string("<p>No strategy fits.</p>");

  double scale_ms = 0;
  for (const RunReport& run : group.runs) {
    if (run.summary.timed()) scale_ms = std::max(scale_ms, run.summary.makespan->representative_ms);
  }
  html += "<h3>Compute, transfer and idle time per device</h3>";
  html += "<p class=\"context\">One bar per device, on one scale for every run of this table: the longest bar is "
          "the slowest run's makespan.</p>";
  for (const RunReport& run : group.runs) {
    if (!run.summary.timed()) continue;
    html += fmt::format("<figure><figcaption>{}: makespan {}</figcaption>{}</figure>",
                        escape_html(run.summary.strategy), format_ms(run.summary.makespan->representative_ms),
                        svg_device_bars(run, scale_ms));
  }
  html += "<h3>Timelines</h3>";
  for (const RunReport& run : group.runs) {
    if (!run.summary.timed()) {
      html += fmt::format("<p>{}: not run ({}).</p>", escape_html(run.summary.strategy),
                          escape_html(run.judgement.reason));
      continue;
    }
    if (run.timeline.spans.empty()) {
      // Drawn from a saved JSON report (report/saved_report.hpp), which keeps no spans.
      html += fmt::format("<p>{}: representative repeat {} of {}, makespan {}; no timeline: a JSON report keeps no "
                          "spans (the command's own --html draws it; its --trace opens in Perfetto).</p>",
                          escape_html(run.summary.strategy), run.summary.makespan->representative + 1,
                          run.summary.makespan->repeats, format_ms(run.summary.makespan->representative_ms));
      continue;
    }
    html += fmt::format(
        "<figure><figcaption>{}: representative repeat {} of {}, makespan {}; {}</figcaption>{}</figure>",
        escape_html(run.summary.strategy), run.summary.makespan->representative + 1, run.summary.makespan->repeats,
        format_ms(run.summary.makespan->representative_ms),
        escape_html(run.judgement.verdict ? std::string(to_string(*run.judgement.verdict)) + ": " + run.judgement.reason
                                          : run.judgement.reason),
        svg_timeline(run));
  }
  html += memory_charts_html(group);
  html += loss_curves_html(group);
  html += "</section>";
  return html;
}

}  // namespace

std::string_view html_page_style() { return kStyle; }

std::string html_context_line(const ReportContext& context) {
  return fmt::format("<p class=\"context\">{} on {} &middot; splitscope {} ({}, {}) &middot; <code>{}</code></p>",
                     escape_html(context.date), escape_html(context.host), escape_html(context.version),
                     escape_html(context.git_revision), escape_html(context.build_type),
                     escape_html(quoted_command_line(context.command_line)));
}

std::string html_report(const Comparison& comparison) {
  std::string model;
  int64_t batch = 0;
  for (const RunReport* run : comparison.all_runs()) {
    model = run->summary.model;
    batch = run->summary.batch;
    break;
  }
  const ReportContext& context = comparison.context;
  std::string html = html_page_start("splitscope: " + model, kStyle);
  html += fmt::format("<h1>splitscope: {} (batch {})</h1>", escape_html(model), batch);
  html += html_context_line(context);
  html += "<div class=\"legend\"><span><i style=\"background:#4e79a7\"></i>compute</span>"
          "<span><i style=\"background:#f28e2b\"></i>transfer</span>"
          "<span><i style=\"background:#b07aa1\"></i>collective</span>"
          "<span><i style=\"background:#d9d9d9\"></i>idle</span>"
          "<span><i style=\"background:#fff;border:1.5px solid #111\"></i>critical path</span></div>";
  for (size_t g = 0; g < comparison.groups.size(); ++g) html += group_html(comparison, g);
  html += "<footer>Makespan: median over the timed repeats, &plusmn; the larger distance to the min or max. "
          "Compute / transfer / idle: shares of device time (devices &times; makespan); transfer counts only time "
          "a device moves data without computing. Speedup: the single-device median over this median; wins at "
          "&ge; 1.05&times;, loses at &le; 0.95&times;. Timelines show the repeat closest to the median; hover a "
          "span for its name and times.</footer>";
  html += "</body></html>\n";
  return html;
}

}  // namespace splitscope
