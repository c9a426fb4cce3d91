#include "lessons/lessons_page.hpp"

#include <fmt/format.h>

#include <cmath>

#include "report/html_page.hpp"
#include "report/run_report.hpp"
#include "report/svg_bar_chart.hpp"
#include "report/svg_charts.hpp"
#include "report/svg_xy_chart.hpp"
#include "util/strings.hpp"

namespace splitscope {
namespace {

constexpr const char* kLessonsStyle = R"(
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #222; background: #fff; max-width: 1180px; }
h1 { font-size: 22px; margin: 0 0 4px; }
p.context { color: #555; font-size: 13px; margin: 0 0 12px; }
nav { font-size: 13px; columns: 2; margin: 8px 0 16px; }
nav div { break-inside: avoid; margin-bottom: 3px; }
nav a { color: #1f4e8c; text-decoration: none; }
section.lesson { border-top: 2px solid #ccc; padding: 10px 0 6px; }
section.lesson h2 { font-size: 17px; margin: 4px 0 6px; }
.verdict { display: inline-block; font-weight: 700; padding: 1px 8px; border-radius: 4px; color: #fff; }
.verdict.holds { background: #1a7f37; } .verdict.does-not-hold { background: #b42318; }
.verdict.uncertain { background: #8a6d00; }
p.why { margin: 6px 0; } p.setup, p.flip { font-size: 13px; color: #444; margin: 3px 0; }
p.flip b { color: #b42318; }
table.numbers { border-collapse: collapse; font-size: 12px; margin: 6px 0 10px 24px; float: right; max-width: 380px; }
section.lesson::after { content: ""; display: block; clear: both; }
table.numbers td { padding: 2px 10px 2px 0; border-bottom: 1px solid #eee; }
table.numbers td.value { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 8px 0 14px; } figcaption { font-size: 13px; color: #444; margin-bottom: 4px; }
svg { display: block; max-width: 100%; height: auto; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
svg text.lane { text-anchor: end; } svg text.tick { text-anchor: middle; fill: #777; }
svg rect.lane-bg { fill: #f6f6f6; } svg line.grid { stroke: #e2e2e2; stroke-width: 1; }
rect.compute { fill: #4e79a7; } rect.transfer { fill: #f28e2b; } rect.collective { fill: #b07aa1; }
rect.idle { fill: #d9d9d9; } rect.critical { stroke: #111; stroke-width: 1.2; }
.legend span { display: inline-block; margin-right: 16px; font-size: 12px; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -2px; }
)";

std::string verdict_class(LessonVerdict verdict) {
  switch (verdict) {
    case LessonVerdict::kHolds: return "holds";
    case LessonVerdict::kDoesNotHold: return "does-not-hold";
    case LessonVerdict::kUncertain: return "uncertain";
  }
  return "uncertain";
}

/// A lesson's own scalar numbers (and lists of them) as rows; lists of
/// objects are left to the pictures and the JSON.
std::string lesson_numbers_table(const nlohmann::ordered_json& numbers) {
  std::string rows;
  for (const auto& [key, value] : numbers.items()) {
    std::string text;
    if (value.is_number_integer()) {
      text = fmt::format("{}", value.get<int64_t>());
    } else if (value.is_number()) {
      text = fmt::format("{:.4g}", value.get<double>());
    } else if (value.is_string()) {
      text = value.get<std::string>();
    } else if (value.is_boolean()) {
      text = value.get<bool>() ? "yes" : "no";
    } else if (value.is_null()) {
      text = "none (diverged)";
    } else if (value.is_array() && !value.empty() && value.front().is_number()) {
      for (const auto& item : value) text += (text.empty() ? "" : ", ") + item.dump();
    } else {
      continue;
    }
    std::string name = key;
    for (char& c : name) c = c == '_' ? ' ' : c;
    rows += fmt::format(R"(<tr><td>{}</td><td class="value">{}</td></tr>)", escape_html(name), escape_html(text));
  }
  return rows.empty() ? "" : "<table class=\"numbers\">" + rows + "</table>\n";
}

std::string flip_figure(const FlipPoint& flip) {
  if (flip.curve.empty()) return "";
  XyChart chart;
  chart.title = fmt::format("{} against {}", flip.quantity, flip.parameter);
  chart.x_label = flip.unit.empty() ? flip.parameter : fmt::format("{} ({})", flip.parameter, flip.unit);
  chart.y_label = flip.quantity;
  chart.log_x = flip.log_scale;
  chart.x_range = std::make_pair(flip.low, flip.high);
  chart.series.push_back({flip.quantity, flip.curve});
  chart.threshold = flip.threshold;
  if (flip.threshold) chart.threshold_label = fmt::format("the verdict changes at {:.4g}", *flip.threshold);
  if (flip.value) {
    chart.marked_x = *flip.value;
    chart.marked_label = fmt::format("flips at {:.4g}", *flip.value);
  }
  return "<figure>" + svg_xy_chart(chart) + "</figure>\n";
}

std::string curve_figure(const LessonCurve& curve) {
  XyChart chart;
  chart.title = curve.title;
  chart.x_label = curve.x_label;
  chart.y_label = curve.y_label;
  chart.log_x = curve.log_x;
  chart.series.reserve(curve.series.size());
  for (size_t i = 0; i < curve.series.size(); ++i) {
    chart.series.push_back(LineSeries{curve.series[i].name, curve.series[i].points});
  }
  chart.threshold = curve.threshold;
  chart.threshold_label = curve.threshold_label;
  return "<figure>" + svg_xy_chart(chart) + "</figure>\n";
}

std::string bars_figure(const LessonBars& bars) {
  std::vector<std::pair<std::string, double>> values;
  for (const LessonBar& bar : bars.bars) values.emplace_back(bar.label, bar.value);
  return "<figure>" + svg_bar_chart(bars.title, bars.unit, values) + "</figure>\n";
}

std::string timeline_figure(const LessonTimeline& run) {
  RunReport report;
  report.plan = run.plan;
  report.timeline = run.timeline;
  report.summary = run.summary;
  return fmt::format("<figure><figcaption>{} (simulated timeline, {:.3f} ms; the critical path outlined)</figcaption>"
                     "{}</figure>\n",
                     escape_html(run.title), run.timeline.makespan_us() / 1e3, svg_timeline(report));
}

std::string lesson_panel(const LessonResult& result) {
  std::string html = fmt::format(R"(<section class="lesson" id="lesson-{0}" data-lesson="{0}" data-verdict="{1}">)"
                                 "\n<h2>{0}. {2}</h2>\n",
                                 result.number, escape_html(to_string(result.verdict)), escape_html(result.claim));
  html += fmt::format(R"(<p class="why"><span class="verdict {}">{}</span> {}</p>)"
                      "\n",
                      verdict_class(result.verdict), escape_html(to_string(result.verdict)), escape_html(result.why));
  html += fmt::format("<p class=\"setup\">setup: {}</p>\n", escape_html(result.setup));
  if (result.flip) html += fmt::format("<p class=\"flip\"><b>where it flips:</b> {}</p>\n", escape_html(flip_text(*result.flip)));
  if (result.measured) {
    html += fmt::format(R"(<p class="why">measured: <span class="verdict {}">{}</span> {}</p>)"
                        "\n<p class=\"setup\">measured setup: {}</p>\n",
                        verdict_class(result.measured->verdict), escape_html(to_string(result.measured->verdict)),
                        escape_html(result.measured->why), escape_html(result.measured->setup));
  }
  html += lesson_numbers_table(result.numbers);
  if (result.flip) html += flip_figure(*result.flip);
  for (const LessonCurve& curve : result.figures.curves) html += curve_figure(curve);
  for (const LessonBars& bars : result.figures.bars) html += bars_figure(bars);
  if (!result.figures.timelines.empty()) {
    html += "<div class=\"legend\"><span><i style=\"background:#4e79a7\"></i>compute</span>"
            "<span><i style=\"background:#f28e2b\"></i>transfer</span>"
            "<span><i style=\"background:#b07aa1\"></i>collective</span></div>\n";
  }
  for (const LessonTimeline& run : result.figures.timelines) html += timeline_figure(run);
  html += "</section>\n";
  return html;
}

}  // namespace

std::string lessons_page(const std::vector<LessonResult>& results, const std::string& machine) {
  std::string html =
      html_page_start("splitscope lessons", kLessonsStyle) + "<h1>The chapter, measured: splitscope lessons</h1>\n";
  int holds = 0;
  for (const LessonResult& result : results) holds += result.verdict == LessonVerdict::kHolds ? 1 : 0;
  html += fmt::format(
      "<p class=\"context\">{} run, {} {} here. Each ran on the simulator on {} (7 and 8 train for real "
      "on this machine's cpu backend); a flip is where the verdict changes, found by bisection, marked in red on "
      "its curve (docs/lessons.md).</p>\n<nav>",
      counted(static_cast<long long>(results.size()), "claim"), holds, holds == 1 ? "holds" : "hold",
      machine.empty() ? "each lesson's own machine" : escape_html(machine));
  for (const LessonResult& result : results) {
    html += fmt::format(R"(<div><a href="#lesson-{0}">{0}. {1}</a> <span class="verdict {2}">{3}</span></div>)",
                        result.number, escape_html(result.claim), verdict_class(result.verdict),
                        escape_html(to_string(result.verdict)));
  }
  html += "</nav>\n";
  for (const LessonResult& result : results) html += lesson_panel(result);
  html += "</body></html>\n";
  return html;
}

}  // namespace splitscope
