// The sweep's line chart: where points land, gaps, the log axis, escaping.

#include <gtest/gtest.h>

#include "demo/sweep_chart.hpp"

namespace splitscope {
namespace sweep_chart_test {
namespace {

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(SweepChart, PointsLandOnTheLinearScale) {
  LineChart chart;
  chart.title = "speedup <by hidden>";
  chart.x_name = "hidden";
  chart.x_labels = {"256", "512"};
  chart.y_unit = "x";
  chart.series = {{"layer split", "split", {1.0, 2.0}}};
  chart.reference = 1.0;
  chart.reference_label = "fused";
  const std::string svg = svg_line_chart(chart, 760, 320);
  // Plot area: x from 64 to 760 - 190 = 570 (506 px), y from 28 to 320 - 44 = 276 (248 px).
  // y axis 0 .. 2.5: the top 2.0 · 1.1 = 2.2 rounded up to a tick step of 0.5.
  // 1.0 -> 28 + 248 · (1 - 0.4) = 176.8; 2.0 -> 28 + 248 · (1 - 0.8) = 77.6.
  EXPECT_NE(svg.find(R"(cx="64.0" cy="176.8")"), std::string::npos) << svg;
  EXPECT_NE(svg.find(R"(cx="570.0" cy="77.6")"), std::string::npos) << svg;
  EXPECT_NE(svg.find(R"(<line class="reference" x1="64.0" y1="176.8")"), std::string::npos) << svg;
  EXPECT_NE(svg.find(R"(points="64.0,176.8 570.0,77.6")"), std::string::npos) << svg;
  EXPECT_NE(svg.find("layer split at hidden=512: 2x"), std::string::npos) << svg;
  EXPECT_NE(svg.find("speedup &lt;by hidden&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("<by hidden>"), std::string::npos);
  // Ticks 0, 0.5, ..., 2.5.
  EXPECT_EQ(count(svg, "class=\"ytick\""), 6u);
}

TEST(SweepChart, MissingValuesBreakTheLine) {
  LineChart chart;
  chart.x_labels = {"1", "2", "3", "4"};
  chart.series = {{"s", "split", {1.0, std::nullopt, 3.0, 4.0}}};
  const std::string svg = svg_line_chart(chart);
  EXPECT_EQ(count(svg, "<polyline"), 2u);
  EXPECT_EQ(count(svg, "<circle"), 3u);
}

TEST(SweepChart, LogAxisSpansWholeDecades) {
  LineChart chart;
  chart.x_labels = {"a", "b"};
  chart.y_unit = " ms";
  chart.log_y = true;
  chart.series = {{"t", "fused", {0.5, 50.0}}};
  const std::string svg = svg_line_chart(chart, 760, 320);
  // 0.1 .. 100: four decade ticks; 0.5 sits log10(5)/3 of the way up, 50 at (1 + log10(5)) / 3 + 1/3.
  EXPECT_EQ(count(svg, "class=\"ytick\""), 4u);
  EXPECT_NE(svg.find(">0.1 ms<"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">100 ms<"), std::string::npos) << svg;
  // y(0.5) = 28 + 248 · (1 - (log10 0.5 + 1) / 3) = 28 + 248 · 0.76700 = 218.2
  EXPECT_NE(svg.find(R"(cy="218.2")"), std::string::npos) << svg;

  chart.series = {{"t", "fused", {5.0, 500.0}}};
  const std::string wider = svg_line_chart(chart);
  EXPECT_NE(wider.find(">1000 ms<"), std::string::npos) << wider;  // not "1e+03 ms"
}

}  // namespace
}  // namespace sweep_chart_test
}  // namespace splitscope
