#pragma once
/// \file
/// A small inline-SVG line chart for the HTML page of `demo rnn --sweep`:
/// one line per series over categorical x values, a linear or logarithmic
/// y axis, an optional reference line (speedup 1: the fused single device),
/// a legend, and every point's value in a hover title.

#include <optional>
#include <string>
#include <vector>

namespace splitscope {

struct ChartSeries {
  std::string name;       ///< legend text
  std::string css_class;  ///< colours the line and points (the page's style sheet)
  std::vector<std::optional<double>> values;  ///< one per x value; empty where none
};

struct LineChart {
  std::string title;
  std::string x_name;                  ///< "hidden"
  std::vector<std::string> x_labels;   ///< evenly spaced, in order
  std::string y_name;                  ///< "speedup against the fused single device"
  std::string y_unit;                  ///< appended to tick labels and hover values: "x", " ms"
  bool log_y = false;                  ///< for times that span decades
  std::vector<ChartSeries> series;
  std::optional<double> reference;     ///< a dashed horizontal line
  std::string reference_label;
};

/// The chart as `<svg class="chart" ...>`, `width` x `height` pixels.
std::string svg_line_chart(const LineChart& chart, double width = 760, double height = 320);

}  // namespace splitscope
