#include "search/pareto_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>
#include <limits>

#include "report/svg_charts.hpp"
#include "report/text_table.hpp"
#include "report/units.hpp"
#include "search/search_report.hpp"

namespace splitscope {
namespace {

constexpr double kChartWidth = 960, kChartHeight = 480;
constexpr double kPlotLeft = 90, kPlotRight = 40, kPlotTop = 24, kPlotBottom = 56;

/// An axis over [low, high] (padded so that no dot sits on a frame line),
/// mapped to pixels [from, to], with ticks at round steps of `unit`s.
struct ParetoAxis {
  double low = 0;
  double high = 1;
  double from = 0;
  double to = 1;
  double unit = 1;  ///< 1000 for times in us (ticks in round ms), 1024 for bytes (round MiB, GiB)

  static ParetoAxis spanning(double smallest, double largest, double from, double to, double unit) {
    double pad = 0.06 * (largest - smallest);
    if (pad <= 0) pad = smallest > 0 ? 0.05 * smallest : 1.0;  // one plan, or all alike
    ParetoAxis axis{smallest - pad, largest + pad, from, to, unit};
    if (smallest >= 0 && axis.low < 0) axis.low = 0;  // no negative time or memory on the ticks
    return axis;
  }
  double pixel(double value) const { return from + (to - from) * (value - low) / (high - low); }

  /// Four to seven ticks, at multiples of 1, 2, 2.5 or 5 times a power of
  /// ten of the largest power of `unit` below the span (so that byte ticks
  /// fall on whole MiB or quarter GiB).
  std::vector<double> ticks() const {
    const double span = high - low;
    double scale = 1;
    while (scale * unit <= span) scale *= unit;
    const double rough = span / scale / 6;
    const double decade = std::pow(10.0, std::floor(std::log10(rough)));
    double step = decade;
    for (double nice : {1.0, 2.0, 2.5, 5.0, 10.0}) {
      step = nice * decade;
      if (step >= rough) break;
    }
    step *= scale;
    std::vector<double> values;
    for (double value = std::ceil(low / step) * step; value <= high; value += step) values.push_back(value);
    return values;
  }
};

/// A plan's numbers as attributes: what `--json` prints for it.
std::string pareto_data_attributes(const PricedPlan& plan) {
  return fmt::format(R"(data-plan="{}" data-makespan-us="{}" data-peak-memory-bytes="{}")",
                     escape_html(plan_label(plan)), plan.makespan_us, plan.peak_memory_max);
}

/// A ring and a label at `plan`'s dot. The best's label goes above the
/// ring (below it when that leaves the plot), the best named's beside it, so
/// that the two stay apart when the rings are near each other.
std::string pareto_marker(const PricedPlan& plan, const ParetoAxis& x, const ParetoAxis& y, const char* css_class,
                          const std::string& text, bool beside) {
  const double cx = x.pixel(plan.makespan_us);
  const double cy = y.pixel(double(plan.peak_memory_max));
  // Right of the ring, or left of it past the middle of the plot.
  const bool left = cx > (x.from + x.to) / 2;
  const double label_y = beside ? cy + 4 : (cy - 13 < y.to + 12 ? cy + 24 : cy - 13);
  std::string svg = fmt::format(
      R"(<circle class="{}" cx="{:.1f}" cy="{:.1f}" r="9" {}><title>{}</title></circle>)"
      "\n",
      css_class, cx, cy, pareto_data_attributes(plan), escape_html(text));
  svg += fmt::format(R"(<text class="{}-label" x="{:.1f}" y="{:.1f}" text-anchor="{}">{}</text>)"
                     "\n",
                     css_class, left ? cx - 14 : cx + 14, label_y, left ? "end" : "start", escape_html(text));
  return svg;
}

}  // namespace

std::string svg_pareto_chart(const SearchResult& result, std::optional<int64_t> memory_limit_bytes) {
  double time_low = std::numeric_limits<double>::infinity(), time_high = 0;
  double memory_low = std::numeric_limits<double>::infinity(), memory_high = 0;
  for (const PricedPlan& plan : result.ranked) {
    time_low = std::min(time_low, plan.makespan_us);
    time_high = std::max(time_high, plan.makespan_us);
    memory_low = std::min(memory_low, double(plan.peak_memory_max));
    memory_high = std::max(memory_high, double(plan.peak_memory_max));
  }
  if (memory_limit_bytes) {
    memory_low = std::min(memory_low, double(*memory_limit_bytes));
    memory_high = std::max(memory_high, double(*memory_limit_bytes));
  }
  if (result.ranked.empty() && !memory_limit_bytes) memory_low = 0, memory_high = 1;
  if (result.ranked.empty()) time_low = 0, time_high = 1;
  const double plot_right = kChartWidth - kPlotRight, plot_bottom = kChartHeight - kPlotBottom;
  const ParetoAxis x = ParetoAxis::spanning(time_low, time_high, kPlotLeft, plot_right, 1000);
  const ParetoAxis y = ParetoAxis::spanning(memory_low, memory_high, plot_bottom, kPlotTop, 1024);

  std::string svg = fmt::format(
      R"(<svg class="pareto" xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}">)"
      "\n",
      kChartWidth, kChartHeight);
  for (const double value : x.ticks()) {
    const double tx = x.pixel(value);
    svg += fmt::format(R"(<line class="grid" x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}"/>)"
                       "\n",
                       tx, kPlotTop, plot_bottom);
    svg += fmt::format(R"(<text class="tick" x="{:.1f}" y="{}">{}</text>)"
                       "\n",
                       tx, plot_bottom + 16, escape_html(format_ms(value / 1000)));
  }
  for (const double value : y.ticks()) {
    const double ty = y.pixel(value);
    svg += fmt::format(R"(<line class="grid" x1="{0}" y1="{1:.1f}" x2="{2}" y2="{1:.1f}"/>)"
                       "\n",
                       kPlotLeft, ty, plot_right);
    svg += fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end">{}</text>)"
                       "\n",
                       kPlotLeft - 6, ty + 4, escape_html(binary_bytes(value)));
  }
  svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#444"/>)"
                     "\n",
                     kPlotLeft, kPlotTop, plot_right - kPlotLeft, plot_bottom - kPlotTop);
  svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" font-size="13">predicted step time</text>)"
                     "\n",
                     (kPlotLeft + plot_right) / 2, kChartHeight - 14);
  svg += fmt::format(
      R"svg(<text x="16" y="{0}" font-size="13" text-anchor="middle" transform="rotate(-90 16 {0})">peak memory on the fullest device</text>)svg"
      "\n",
      (kPlotTop + plot_bottom) / 2);

  if (memory_limit_bytes) {
    const double ly = y.pixel(double(*memory_limit_bytes));
    svg += fmt::format(
        R"(<line class="memory-limit" x1="{0}" y1="{1:.1f}" x2="{2}" y2="{1:.1f}" data-memory-limit-bytes="{3}"/>)"
        "\n",
        kPlotLeft, ly, plot_right, *memory_limit_bytes);
    svg += fmt::format(R"(<text class="memory-limit-label" x="{}" y="{:.1f}" text-anchor="end">memory limit {}</text>)"
                       "\n",
                       plot_right - 4, ly - 5, escape_html(binary_bytes(double(*memory_limit_bytes))));
  }

  std::string front;
  for (const PricedPlan& plan : result.pareto) {
    front += fmt::format("{}{:.1f},{:.1f}", front.empty() ? "" : " ", x.pixel(plan.makespan_us),
                         y.pixel(double(plan.peak_memory_max)));
  }
  if (!front.empty()) svg += fmt::format("<polyline class=\"front\" points=\"{}\"/>\n", front);

  for (const PricedPlan& plan : result.ranked) {
    svg += fmt::format(
        R"(<circle class="plan{}" cx="{:.1f}" cy="{:.1f}" r="4" {}><title>{}: {}, {}</title></circle>)"
        "\n",
        plan.named ? " named" : "", x.pixel(plan.makespan_us), y.pixel(double(plan.peak_memory_max)),
        pareto_data_attributes(plan), escape_html(plan_label(plan)), escape_html(format_ms(plan.makespan_us / 1000)),
        escape_html(binary_bytes(double(plan.peak_memory_max))));
  }

  const PricedPlan* best = result.best();
  const PricedPlan* named = result.best_named();
  if (named != nullptr && named != best) {
    svg += pareto_marker(*named, x, y, "best-named", "best named: " + plan_label(*named, false), true);
  }
  if (best != nullptr) {
    const std::string text = best == named ? "best: " + plan_label(*best, false) + ", the best named strategy"
                                           : "best: " + plan_label(*best);
    svg += pareto_marker(*best, x, y, "best", text, false);
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace splitscope
