#include "report/svg_line_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <limits>

#include "report/svg_charts.hpp"

namespace splitscope {

std::string svg_line_chart(const std::vector<LineSeries>& series, const std::string& x_label,
                           const std::string& y_label) {
  constexpr double kWidth = 760, kHeight = 320, kLeft = 70, kRight = 150, kTop = 16, kBottom = 48;
  double x_max = 0, y_max = 0, y_min = std::numeric_limits<double>::infinity();
  for (const LineSeries& line : series) {
    for (const auto& [x, y] : line.points) {
      x_max = std::max(x_max, x);
      y_max = std::max(y_max, y);
      y_min = std::min(y_min, y);
    }
  }
  if (x_max <= 0) x_max = 1;
  if (y_max <= 0) y_max = 1;
  const double y_floor = (y_min > 0 && y_max - y_min < 0.5 * y_max) ? y_min - 0.05 * (y_max - y_min) : 0.0;
  const double plot_width = kWidth - kLeft - kRight;
  const double plot_height = kHeight - kTop - kBottom;
  const auto x_of = [&](double x) { return kLeft + plot_width * x / x_max; };
  const auto y_of = [&](double y) {
    return kTop + plot_height * (1 - (y - y_floor) / std::max(y_max - y_floor, 1e-300));
  };
  static constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  std::string svg = fmt::format(
      "<svg class=\"line-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\">\n",
      kWidth, kHeight);
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#444\"/>\n", kLeft, kTop,
                     kTop + plot_height);
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#444\"/>\n", kLeft, kTop + plot_height,
                     kLeft + plot_width);
  for (int tick = 0; tick <= 4; ++tick) {
    const double y = y_floor + (y_max - y_floor) * tick / 4;
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"11\">{:.4g}</text>\n", kLeft - 6,
                       y_of(y) + 4, y);
    const double x = x_max * tick / 4;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\">{:.4g}</text>\n", x_of(x),
                       kTop + plot_height + 16, x);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>\n",
                     kLeft + plot_width / 2, kHeight - 10, escape_html(x_label));
  svg += fmt::format("<text x=\"14\" y=\"{0}\" font-size=\"12\" transform=\"rotate(-90 14 {0})\">{1}</text>\n",
                     kTop + plot_height / 2, escape_html(y_label));
  for (size_t s = 0; s < series.size(); ++s) {
    const char* colour = kColours[s % std::size(kColours)];
    std::string path;
    for (const auto& [x, y] : series[s].points) {
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", x_of(x), y_of(y));
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"><title>{}: {:.4g}, {:.4g}</title>"
                         "</circle>\n",
                         x_of(x), y_of(y), colour, escape_html(series[s].name), x, y);
    }
    svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"/>\n", path, colour);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"{}\">{}</text>\n", kLeft + plot_width + 10,
                       kTop + 14 + 16 * static_cast<double>(s), colour, escape_html(series[s].name));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace splitscope
