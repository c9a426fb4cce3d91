#include "search/search_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "report/html_page.hpp"
#include "report/html_report.hpp"
#include "report/svg_charts.hpp"
#include "report/text_table.hpp"
#include "report/units.hpp"
#include "search/pareto_chart.hpp"
#include "search/search_report.hpp"

namespace splitscope {
namespace {

/// The chart's and the bars' colours; the tables come from html_page_style().
constexpr const char* kSearchPageStyle = R"(
svg.pareto circle.plan { fill: #4e79a7; fill-opacity: 0.75; }
svg.pareto circle.plan.named { fill: #f28e2b; fill-opacity: 0.9; }
svg.pareto polyline.front { fill: none; stroke: #1a7f37; stroke-width: 1.5; }
svg.pareto circle.best { fill: none; stroke: #b42318; stroke-width: 2.5; }
svg.pareto circle.best-named { fill: none; stroke: #7a4a00; stroke-width: 2; stroke-dasharray: 3 2; }
svg.pareto text.best-label { font-weight: 600; fill: #b42318; font-size: 12px; }
svg.pareto text.best-named-label { fill: #7a4a00; font-size: 12px; }
svg.pareto line.memory-limit { stroke: #b42318; stroke-width: 1.5; stroke-dasharray: 6 4; }
svg.pareto text.memory-limit-label { fill: #b42318; }
svg.pareto text.best-label, svg.pareto text.best-named-label, svg.pareto text.memory-limit-label {
  paint-order: stroke; stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }
p.why { font-size: 15px; max-width: 900px; }
)";

std::string search_page_cell(const std::string& text, bool left = false) {
  return left ? fmt::format(R"(<td class="strategy">{}</td>)", escape_html(text))
              : fmt::format("<td>{}</td>", escape_html(text));
}

std::string search_page_ms(double us) { return format_ms(us / 1000); }

/// The columns of the text output's tables.
std::string search_page_plan_table(const std::vector<PricedPlan>& plans, size_t count) {
  std::string html = R"(<table class="compare"><thead><tr><th>#</th><th class="left">plan</th><th>devices</th>)"
                     "<th>makespan</th><th>samples/s</th><th>compute</th><th>transfer</th><th>idle</th>"
                     "<th>peak memory</th></tr></thead><tbody>";
  for (size_t i = 0; i < std::min(count, plans.size()); ++i) {
    const PricedPlan& plan = plans[i];
    html += "<tr>" + search_page_cell(std::to_string(i + 1)) + search_page_cell(plan_label(plan), true) +
            search_page_cell(std::to_string(plan.spec.devices)) + search_page_cell(search_page_ms(plan.makespan_us)) +
            search_page_cell(si_count(plan.samples_per_second)) + search_page_cell(search_page_ms(plan.compute_us)) +
            search_page_cell(search_page_ms(plan.transfer_us)) + search_page_cell(search_page_ms(plan.idle_us)) +
            search_page_cell(binary_bytes(double(plan.peak_memory_max))) + "</tr>";
  }
  return html + "</tbody></table>";
}

/// The best plan beside the best named strategy, term by term.
std::string search_breakdown_table(const PricedPlan& best, const PricedPlan* named) {
  const bool beside = named != nullptr && named != &best;
  std::string html = R"(<table class="compare"><thead><tr><th class="left"></th><th>best</th>)";
  if (beside) html += "<th>best named</th>";
  html += "</tr></thead><tbody>";
  const auto row = [&](const std::string& what, const auto& value_of) {
    html += "<tr>" + search_page_cell(what, true) + search_page_cell(value_of(best));
    if (beside) html += search_page_cell(value_of(*named));
    html += "</tr>";
  };
  row("plan", [](const PricedPlan& p) { return plan_label(p, false); });
  row("makespan", [](const PricedPlan& p) { return search_page_ms(p.makespan_us); });
  row("samples/s", [](const PricedPlan& p) { return si_count(p.samples_per_second); });
  row("compute (busiest device)", [](const PricedPlan& p) { return search_page_ms(p.compute_us); });
  row("transfers on its copy lanes", [](const PricedPlan& p) { return search_page_ms(p.transfer_us); });
  row("idle: bubble and exposed transfers", [](const PricedPlan& p) { return search_page_ms(p.idle_us); });
  row("peak memory (fullest device)", [](const PricedPlan& p) { return binary_bytes(double(p.peak_memory_max)); });
  return html + "</tbody></table>";
}

/// Per plan, the busiest device's step as compute then idle (they add up to
/// the makespan), and under it what its copy lanes carried (overlapping
/// them); one scale for both plans.
std::string search_step_bars(const std::vector<const PricedPlan*>& plans) {
  constexpr double kWidth = 960, kLeft = 220, kRight = 20, kBar = 18, kCopyBar = 8, kRowHeight = 46;
  double scale_us = 0;
  for (const PricedPlan* plan : plans) scale_us = std::max({scale_us, plan->makespan_us, plan->transfer_us});
  if (scale_us <= 0) scale_us = 1;
  const double plot = kWidth - kLeft - kRight;
  const double height = kRowHeight * static_cast<double>(plans.size()) + 8;
  std::string svg = fmt::format(
      R"(<svg class="step-bars" xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}">)"
      "\n",
      kWidth, height);
  for (size_t i = 0; i < plans.size(); ++i) {
    const PricedPlan& plan = *plans[i];
    const double top = 6 + kRowHeight * static_cast<double>(i);
    const double compute = plot * plan.compute_us / scale_us;
    const double idle = plot * plan.idle_us / scale_us;
    svg += fmt::format(R"(<text class="lane" x="{}" y="{:.1f}">{}</text>)"
                       "\n",
                       kLeft - 8, top + 13, escape_html(plan_label(plan)));
    svg += fmt::format(R"(<rect class="compute" x="{}" y="{:.1f}" width="{:.1f}" height="{}"><title>compute {}</title></rect>)"
                       "\n",
                       kLeft, top, compute, kBar, escape_html(search_page_ms(plan.compute_us)));
    svg += fmt::format(R"(<rect class="idle" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{}"><title>idle {}</title></rect>)"
                       "\n",
                       kLeft + compute, top, idle, kBar, escape_html(search_page_ms(plan.idle_us)));
    svg += fmt::format(R"(<rect class="transfer" x="{}" y="{:.1f}" width="{:.1f}" height="{}"><title>transfers {}</title></rect>)"
                       "\n",
                       kLeft, top + kBar + 3, plot * plan.transfer_us / scale_us, kCopyBar,
                       escape_html(search_page_ms(plan.transfer_us)));
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)"
                       "\n",
                       std::min(kLeft + compute + idle + 6, kWidth - 90), top + 13,
                       escape_html(search_page_ms(plan.makespan_us)));
  }
  return svg + "</svg>\n";
}

/// One bar per device: the plan's peak memory there.
std::string search_memory_bars(const PricedPlan& plan) {
  constexpr double kWidth = 960, kHeight = 200, kLeft = 90, kRight = 20, kTop = 12, kBottom = 30;
  const auto& peaks = plan.peak_memory_bytes;
  double top_bytes = 1;
  for (int64_t peak : peaks) top_bytes = std::max(top_bytes, double(peak));
  const double plot_width = kWidth - kLeft - kRight, plot_height = kHeight - kTop - kBottom;
  const double slot = plot_width / static_cast<double>(std::max<size_t>(peaks.size(), 1));
  std::string svg = fmt::format(
      R"(<svg class="memory-bars" xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}">)"
      "\n",
      kWidth, kHeight);
  for (int tick = 0; tick <= 2; ++tick) {
    const double bytes = top_bytes * tick / 2;
    const double y = kTop + plot_height * (1 - bytes / top_bytes);
    svg += fmt::format(R"(<line class="grid" x1="{0}" y1="{1:.1f}" x2="{2}" y2="{1:.1f}"/>)"
                       "\n",
                       kLeft, y, kWidth - kRight);
    svg += fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end">{}</text>)"
                       "\n",
                       kLeft - 6, y + 4, escape_html(binary_bytes(bytes)));
  }
  // Device numbers under at most about 16 bars, so that they stay legible.
  const size_t label_every = std::max<size_t>(1, (peaks.size() + 15) / 16);
  for (size_t d = 0; d < peaks.size(); ++d) {
    const double height = plot_height * double(peaks[d]) / top_bytes;
    const double x = kLeft + slot * static_cast<double>(d);
    svg += fmt::format(
        R"(<rect class="compute" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"><title>device {}: {}</title></rect>)"
        "\n",
        x + slot * 0.1, kTop + plot_height - height, slot * 0.8, height, d, escape_html(binary_bytes(double(peaks[d]))));
    if (d % label_every == 0) {
      svg += fmt::format(R"(<text class="tick" x="{:.1f}" y="{}">{}</text>)"
                         "\n",
                         x + slot / 2, kHeight - kBottom + 14, d);
    }
  }
  svg += fmt::format(R"(<text class="tick" x="{}" y="{}">device</text>)"
                     "\n",
                     kLeft + plot_width / 2, kHeight - 2);
  return svg + "</svg>\n";
}

std::string search_best_section(const SearchResult& result) {
  const PricedPlan* best = result.best();
  if (best == nullptr) return "<h2>No plan fits in the memory limit</h2>";
  const PricedPlan* named = result.best_named();
  std::string html = fmt::format("<h2>Best plan: {}</h2>", escape_html(plan_label(*best)));
  html += fmt::format(R"(<p class="why">{}.</p>)", escape_html(why_it_wins(*best, named)));
  html += search_breakdown_table(*best, named);
  std::vector<const PricedPlan*> bars{best};
  if (named != nullptr && named != best) bars.push_back(named);
  html += "<h3>The busiest device's step</h3><p class=\"context\">Compute and then idle time (the pipeline bubble, "
          "exposed transfers; together the makespan); the thin bar under them is what the device's copy lanes "
          "carried, overlapping both. One scale for both plans.</p>";
  html += "<div class=\"legend\"><span><i style=\"background:#4e79a7\"></i>compute</span>"
          "<span><i style=\"background:#d9d9d9\"></i>idle</span>"
          "<span><i style=\"background:#f28e2b\"></i>transfers</span></div>";
  html += search_step_bars(bars);
  html += fmt::format("<h3>Peak memory per device</h3><p class=\"context\">{}: weights, gradients, optimizer state "
                      "and the activations alive at once, on each of its {} devices.</p>",
                      escape_html(plan_label(*best, false)), best->peak_memory_bytes.size());
  html += search_memory_bars(*best);
  return html;
}

}  // namespace

std::string search_html(const SearchProblem& problem, const SearchResult& result, int top,
                        const ReportContext& context, bool memory_limit_given) {
  const std::string title = fmt::format("splitscope search: {} on {} devices of {}{}", problem.graph->name(),
                                        problem.devices, problem.machine.name,
                                        problem.graph->is_training() ? " (training)" : "");
  std::string html = html_page_start(title, std::string(html_page_style()) + kSearchPageStyle);
  html += fmt::format("<h1>{}</h1>", escape_html(title));
  html += html_context_line(context);
  html += fmt::format(
      "<p>Batch {}, objective {}, memory limit {}. Priced {} plan(s) by the simulator ({} refused), {} pipeline "
      "cut(s) by the estimate, in {:.2f} s{}.</p>",
      problem.graph->batch(), escape_html(std::string(to_string(problem.objective))),
      escape_html(binary_bytes(double(problem.memory_limit_bytes))), result.simulated, result.refused.size(),
      result.estimated, result.seconds, escape_html(budget_note(problem, result)));
  if (!result.left_out.empty()) {
    html += "<p>Named strategies left out (they do not apply here; compare leaves them out too):</p><ul>";
    for (const LeftOutStrategy& left : result.left_out) {
      html += fmt::format("<li><b>{}</b>: {}</li>", escape_html(left.strategy), escape_html(left.reason));
    }
    html += "</ul>";
  }

  html += "<h2>Predicted step time against peak memory</h2>";
  html += fmt::format(
      "<p class=\"context\">Every plan that fits, priced by the simulator ({}): one dot each, named strategies in "
      "orange. The line joins the Pareto front, the plans no other is both faster and smaller than. Hover a dot "
      "for its plan.</p>",
      result.ranked.size());
  html += "<div class=\"legend\"><span><i style=\"background:#4e79a7\"></i>searched plan</span>"
          "<span><i style=\"background:#f28e2b\"></i>named strategy</span>"
          "<span><i style=\"background:#1a7f37\"></i>Pareto front</span>"
          "<span><i style=\"background:#fff;border:2px solid #b42318\"></i>best</span>"
          "<span><i style=\"background:#fff;border:2px dashed #7a4a00\"></i>best named</span>";
  if (memory_limit_given) html += "<span><i style=\"background:#b42318\"></i>memory limit</span>";
  html += "</div>";
  html += svg_pareto_chart(result, memory_limit_given ? std::optional<int64_t>(problem.memory_limit_bytes)
                                                      : std::nullopt);

  html += search_best_section(result);
  html += fmt::format("<h2>Top {}</h2>", std::min<size_t>(static_cast<size_t>(top), result.ranked.size()));
  html += search_page_plan_table(result.ranked, static_cast<size_t>(top));
  html += "<h2>Pareto front</h2>";
  html += search_page_plan_table(result.pareto, result.pareto.size());
  html += "<footer>A plan is written as its strategy, xR for R data-parallel replicas, its micro-batches, 1f1b, "
          "recompute and for a layer split its stage cuts (the first layer of each stage); (named) marks a named "
          "strategy as compare runs it. Compute, transfer and idle are the simulated step on the device that "
          "computes longest; peak memory is the fullest device's. docs/search.md says what the search tries and "
          "what it can miss.</footer>";
  html += "</body></html>\n";
  return html;
}

}  // namespace splitscope
