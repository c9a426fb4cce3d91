#include "report/svg_xy_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <vector>

#include "report/chart_ticks.hpp"
#include "report/svg_charts.hpp"

namespace splitscope {
namespace {

constexpr double kXyLeft = 70;    // y tick labels
constexpr double kXyRight = 230;  // legend
constexpr double kXyTop = 26;     // title
constexpr double kXyBottom = 46;  // x ticks and name

/// Ticks for an axis from `low` to `high`: the powers of ten on a log axis
/// (with 2 and 5 between where there are few), five even steps otherwise.
std::vector<double> xy_ticks(double low, double high, bool log) {
  std::vector<double> ticks;
  if (log) {
    const double first = std::pow(10.0, std::ceil(std::log10(low) - 1e-9));
    const bool few = high / low < 1000;
    for (double decade = first / 10; decade <= high * (1 + 1e-9); decade *= 10) {
      for (double factor : {1.0, 2.0, 5.0}) {
        if (factor != 1.0 && !few) continue;
        const double tick = decade * factor;
        if (tick >= low * (1 - 1e-9) && tick <= high * (1 + 1e-9)) ticks.push_back(tick);
      }
    }
    return ticks;
  }
  const double step = nice_tick_step(high - low, 5);
  for (double tick = std::ceil(low / step - 1e-9) * step; tick <= high * (1 + 1e-9) + 1e-12; tick += step) {
    ticks.push_back(std::abs(tick) < step * 1e-9 ? 0.0 : tick);
  }
  return ticks;
}

double xy_fraction(double value, double low, double high, bool log) {
  if (log) return (std::log10(value) - std::log10(low)) / std::max(std::log10(high) - std::log10(low), 1e-300);
  return (value - low) / std::max(high - low, 1e-300);
}

}  // namespace

double xy_chart_pixel(double x, double low, double high, bool log, double left, double width) {
  return left + width * xy_fraction(x, low, high, log);
}

std::string svg_xy_chart(const XyChart& chart, double width, double height) {
  double x_low = std::numeric_limits<double>::infinity(), x_high = -x_low;
  double y_low = x_low, y_high = -x_low;
  for (const LineSeries& line : chart.series) {
    for (const auto& [x, y] : line.points) {
      x_low = std::min(x_low, x);
      x_high = std::max(x_high, x);
      if (!std::isfinite(y)) continue;
      y_low = std::min(y_low, y);
      y_high = std::max(y_high, y);
    }
  }
  if (chart.x_range) std::tie(x_low, x_high) = *chart.x_range;
  if (chart.threshold) {
    y_low = std::min(y_low, *chart.threshold);
    y_high = std::max(y_high, *chart.threshold);
  }
  if (!(x_low < x_high)) {
    x_low = std::isfinite(x_low) ? x_low - 1 : 0;
    x_high = x_low + 2;
  }
  const bool log_x = chart.log_x && x_low > 0;
  if (!std::isfinite(y_low)) y_low = 0, y_high = 1;
  const bool log_y = y_low > 0 && y_high / y_low > 50;
  if (log_y) {
    y_low = std::pow(10.0, std::floor(std::log10(y_low)));
    y_high = std::pow(10.0, std::ceil(std::log10(y_high)));
  } else {
    y_low = std::min(0.0, y_low);
    y_high = y_high > y_low ? y_high + 0.08 * (y_high - y_low) : y_low + 1;
  }
  const double plot_width = width - kXyLeft - kXyRight;
  const double plot_height = height - kXyTop - kXyBottom;
  const auto x_of = [&](double x) { return xy_chart_pixel(x, x_low, x_high, log_x, kXyLeft, plot_width); };
  const auto y_of = [&](double y) { return kXyTop + plot_height * (1 - xy_fraction(y, y_low, y_high, log_y)); };

  std::string svg = fmt::format(
      R"(<svg class="xy-chart" xmlns="http://www.w3.org/2000/svg" width="{0:.0f}" height="{1:.0f}" )"
      R"(viewBox="0 0 {0:.0f} {1:.0f}" data-x-low="{2}" data-x-high="{3}" data-log-x="{4}" )"
      R"(data-plot-left="{5}" data-plot-width="{6}">)"
      "\n",
      width, height, x_low, x_high, log_x ? 1 : 0, kXyLeft, plot_width);
  svg += fmt::format(R"(<text x="{}" y="16" font-size="13" font-weight="600">{}</text>)"
                     "\n",
                     kXyLeft, escape_html(chart.title));
  for (double tick : xy_ticks(y_low, y_high, log_y)) {
    const double y = y_of(tick);
    svg += fmt::format(R"(<line class="grid" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", kXyLeft, y,
                       kXyLeft + plot_width, y);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{:.4g}</text>)"
                       "\n",
                       kXyLeft - 6, y + 4, tick);
  }
  for (double tick : xy_ticks(x_low, x_high, log_x)) {
    const double x = x_of(tick);
    svg += fmt::format(R"(<line class="grid" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"/>)", x, kXyTop,
                       kXyTop + plot_height);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{:.4g}</text>)"
                       "\n",
                       x, kXyTop + plot_height + 16, tick);
  }
  svg += fmt::format(R"(<rect x="{}" y="{}" width="{:.1f}" height="{:.1f}" fill="none" stroke="#444"/>)"
                     "\n",
                     kXyLeft, kXyTop, plot_width, plot_height);
  svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="12">{}{}</text>)"
                     "\n",
                     kXyLeft + plot_width / 2, height - 8, escape_html(chart.x_label), log_x ? " (log scale)" : "");
  svg += fmt::format(R"svg(<text font-size="12" transform="translate(14 {:.1f}) rotate(-90)" text-anchor="middle">)svg"
                     "{}{}</text>\n",
                     kXyTop + plot_height / 2, escape_html(chart.y_label), log_y ? " (log)" : "");
  if (chart.threshold) {
    const double y = y_of(*chart.threshold);
    svg += fmt::format(R"(<line class="threshold" data-y="{}" x1="{}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" )"
                       R"(stroke="#777" stroke-dasharray="5 4"/>)",
                       *chart.threshold, kXyLeft, y, kXyLeft + plot_width, y);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" fill="#555">{}</text>)"
                       "\n",
                       kXyLeft + 4, y - 4, escape_html(chart.threshold_label));
  }
  static constexpr const char* kXyColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const LineSeries& line = chart.series[s];
    const char* colour = kXyColours[s % std::size(kXyColours)];
    std::string path;
    const auto flush = [&] {
      if (!path.empty()) {
        svg += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="1.6"/>)"
                           "\n",
                           path, colour);
      }
      path.clear();
    };
    for (const auto& [x, y] : line.points) {
      if (!std::isfinite(y) || (log_y && y <= 0) || (log_x && x <= 0)) {
        flush();
        continue;
      }
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", x_of(x), y_of(y));
      svg += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="2.6" fill="{}"><title>{}: {:.4g}, {:.4g}</title>)"
                         "</circle>",
                         x_of(x), y_of(y), colour, escape_html(line.name), x, y);
    }
    flush();
    svg += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}" stroke="{3}" stroke-width="2"/>)"
                       R"(<text x="{4:.1f}" y="{5:.1f}">{6}</text>)"
                       "\n",
                       kXyLeft + plot_width + 10, kXyTop + 10 + 16 * double(s), kXyLeft + plot_width + 28, colour,
                       kXyLeft + plot_width + 32, kXyTop + 14 + 16 * double(s), escape_html(line.name));
  }
  if (chart.marked_x) {
    const double x = x_of(*chart.marked_x);
    svg += fmt::format(R"(<line class="mark" data-x="{}" x1="{:.2f}" y1="{}" x2="{:.2f}" y2="{:.1f}" )"
                       R"(stroke="#b42318" stroke-width="2"/>)",
                       *chart.marked_x, x, kXyTop, x, kXyTop + plot_height);
    const bool right_half = x > kXyLeft + plot_width / 2;
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" fill="#b42318" font-weight="600" text-anchor="{}">{}</text>)"
                       "\n",
                       right_half ? x - 5 : x + 5, kXyTop + 14, right_half ? "end" : "start",
                       escape_html(chart.marked_label));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace splitscope
