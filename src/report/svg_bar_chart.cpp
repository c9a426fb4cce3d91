#include "report/svg_bar_chart.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/svg_charts.hpp"

namespace splitscope {

std::string svg_bar_chart(const std::string& title, const std::string& unit,
                          const std::vector<std::pair<std::string, double>>& bars, double width) {
  constexpr double kBarLabelWidth = 230, kBarValueWidth = 110, kBarTitle = 24, kBarRow = 22, kBarThickness = 15;
  double largest = 0;
  for (const auto& [label, value] : bars) largest = std::max(largest, value);
  if (largest <= 0) largest = 1;
  const double height = kBarTitle + kBarRow * static_cast<double>(bars.size()) + 6;
  const double plot_width = width - kBarLabelWidth - kBarValueWidth;
  std::string svg = fmt::format(
      R"(<svg class="bar-chart" xmlns="http://www.w3.org/2000/svg" width="{0:.0f}" height="{1:.0f}" )"
      R"(viewBox="0 0 {0:.0f} {1:.0f}">)"
      "\n",
      width, height);
  svg += fmt::format(R"(<text x="0" y="16" font-size="13" font-weight="600">{}</text>)"
                     "\n",
                     escape_html(title));
  for (size_t i = 0; i < bars.size(); ++i) {
    const auto& [label, value] = bars[i];
    const double y = kBarTitle + kBarRow * static_cast<double>(i);
    const double length = std::max(0.0, value) / largest * plot_width;
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", kBarLabelWidth - 8, y + 12,
                       escape_html(label));
    svg += fmt::format(R"(<rect class="bar" data-value="{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{}" )"
                       R"(fill="#4e79a7"/>)",
                       value, kBarLabelWidth, y, length, kBarThickness);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{:.4g} {}</text>)"
                       "\n",
                       kBarLabelWidth + length + 6, y + 12, value, escape_html(unit));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace splitscope
