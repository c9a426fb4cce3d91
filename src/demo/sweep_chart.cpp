#include "demo/sweep_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "report/chart_ticks.hpp"
#include "report/svg_charts.hpp"

namespace splitscope {
namespace {

constexpr double kLeft = 64;     // y tick labels
constexpr double kRight = 190;   // legend
constexpr double kTop = 28;      // title
constexpr double kBottom = 44;   // x labels and name

/// 0.5 -> "0.5", 1000 -> "1000" (not "1e+03"), 1234.5 -> "1.23e+03".
std::string number(double value) {
  if (value >= 1 && value < 1e7 && value == std::floor(value)) return fmt::format("{:.0f}", value);
  return fmt::format("{:.3g}", value);
}

struct YAxis {
  double low = 0;
  double high = 1;
  bool log = false;
  double fraction(double value) const {  // 0 at low, 1 at high
    if (log) return (std::log10(value) - std::log10(low)) / (std::log10(high) - std::log10(low));
    return (value - low) / (high - low);
  }
  std::vector<double> ticks() const {
    std::vector<double> out;
    if (log) {
      for (double t = low; t <= high * (1 + 1e-9); t *= 10) out.push_back(t);
      return out;
    }
    const double step = nice_tick_step(high - low, 5);
    for (double t = low; t <= high * (1 + 1e-9); t += step) out.push_back(t);
    return out;
  }
};

YAxis y_axis(const LineChart& chart) {
  double low = std::numeric_limits<double>::max();
  double high = std::numeric_limits<double>::lowest();
  auto see = [&](double v) {
    if (chart.log_y && v <= 0) return;
    low = std::min(low, v);
    high = std::max(high, v);
  };
  for (const ChartSeries& series : chart.series) {
    for (const auto& v : series.values) {
      if (v) see(*v);
    }
  }
  if (chart.reference) see(*chart.reference);
  YAxis axis;
  axis.log = chart.log_y;
  if (low > high) return axis;  // nothing to draw
  if (chart.log_y) {
    axis.low = std::pow(10.0, std::floor(std::log10(low)));
    axis.high = std::pow(10.0, std::ceil(std::log10(high)));
    if (axis.high <= axis.low) axis.high = axis.low * 10;
  } else {
    axis.low = 0;
    const double top = high * 1.1;
    const double step = nice_tick_step(top, 5);
    axis.high = std::ceil(top / step) * step;
    if (axis.high <= 0) axis.high = 1;
  }
  return axis;
}

}  // namespace

std::string svg_line_chart(const LineChart& chart, double width, double height) {
  const YAxis axis = y_axis(chart);
  const double plot_w = width - kLeft - kRight;
  const double plot_h = height - kTop - kBottom;
  const size_t n = chart.x_labels.size();
  auto x_of = [&](size_t i) { return kLeft + (n <= 1 ? plot_w / 2 : plot_w * static_cast<double>(i) / double(n - 1)); };
  auto y_of = [&](double v) { return kTop + plot_h * (1 - axis.fraction(v)); };

  std::string svg = fmt::format(
      R"(<svg class="chart" role="img" viewBox="0 0 {0:.0f} {1:.0f}" width="{0:.0f}" height="{1:.0f}">)", width,
      height);
  svg += fmt::format("<title>{}</title>", escape_html(chart.title));
  svg += fmt::format(R"(<text class="chart-title" x="{:.1f}" y="16">{}</text>)", kLeft, escape_html(chart.title));
  for (double t : axis.ticks()) {
    const double y = y_of(t);
    svg += fmt::format(R"(<line class="grid" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", kLeft, y,
                       kLeft + plot_w, y);
    svg += fmt::format(R"(<text class="ytick" x="{:.1f}" y="{:.1f}">{}{}</text>)", kLeft - 6, y + 4, number(t),
                       escape_html(chart.y_unit));
  }
  for (size_t i = 0; i < n; ++i) {
    svg += fmt::format(R"(<text class="xtick" x="{:.1f}" y="{:.1f}">{}</text>)", x_of(i), kTop + plot_h + 16,
                       escape_html(chart.x_labels[i]));
  }
  svg += fmt::format(R"(<text class="axis-name" x="{:.1f}" y="{:.1f}">{}</text>)", kLeft + plot_w / 2,
                     height - 8, escape_html(chart.x_name));
  if (chart.reference) {
    const double y = y_of(*chart.reference);
    svg += fmt::format(R"(<line class="reference" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", kLeft, y,
                       kLeft + plot_w, y);
    svg += fmt::format(R"(<text class="reference-label" x="{:.1f}" y="{:.1f}">{}</text>)", kLeft + 4, y - 4,
                       escape_html(chart.reference_label));
  }
  double legend_y = kTop + 10;
  for (const ChartSeries& series : chart.series) {
    std::string points;
    std::string marks;
    for (size_t i = 0; i < series.values.size() && i < n; ++i) {
      if (!series.values[i] || (axis.log && *series.values[i] <= 0)) {
        if (!points.empty()) {
          svg += fmt::format(R"(<polyline class="line {}" points="{}"/>)", series.css_class, points);
          points.clear();
        }
        continue;
      }
      const double x = x_of(i);
      const double y = y_of(*series.values[i]);
      points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", x, y);
      marks += fmt::format(R"(<circle class="point {}" cx="{:.1f}" cy="{:.1f}" r="3.5"><title>{} at {}={}: {}{}</title></circle>)",
                           series.css_class, x, y, escape_html(series.name), escape_html(chart.x_name),
                           escape_html(chart.x_labels[i]), number(*series.values[i]), escape_html(chart.y_unit));
    }
    if (!points.empty()) svg += fmt::format(R"(<polyline class="line {}" points="{}"/>)", series.css_class, points);
    svg += marks;
    svg += fmt::format(R"(<line class="line {}" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", series.css_class,
                       width - kRight + 16, legend_y, width - kRight + 36, legend_y);
    svg += fmt::format(R"(<text class="legend" x="{:.1f}" y="{:.1f}">{}</text>)", width - kRight + 42, legend_y + 4,
                       escape_html(series.name));
    legend_y += 18;
  }
  svg += fmt::format(R"svg(<text class="axis-name" transform="translate(14 {:.1f}) rotate(-90)">{}</text>)svg",
                     kTop + plot_h / 2, escape_html(chart.y_name));
  svg += "</svg>";
  return svg;
}

}  // namespace splitscope
