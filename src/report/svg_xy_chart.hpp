#pragma once
/// \file
/// An inline SVG chart of y against a numeric x, on linear or logarithmic
/// axes, for pages that show where something changes (`lessons --html`): one
/// or more lines, a dashed horizontal threshold, and a marked x (a vertical
/// line: where a verdict flips). The axis and the mark carry their values as
/// data attributes, so a test can hold the drawing to the numbers.

#include <optional>
#include <string>
#include <utility>

#include "report/svg_line_chart.hpp"

namespace splitscope {

struct XyChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  /// The x axis's span; none: the points' own.
  std::optional<std::pair<double, double>> x_range;
  std::vector<LineSeries> series;  ///< a non-finite y is a gap in its line
  std::optional<double> threshold;
  std::string threshold_label;
  std::optional<double> marked_x;
  std::string marked_label;
};

/// `<svg class="xy-chart" data-x-low data-x-high data-log-x data-plot-left
/// data-plot-width ...>`, the mark a `<line class="mark" data-x=...>`. y is
/// on a log axis where every y is positive and they span more than 50x.
std::string svg_xy_chart(const XyChart& chart, double width = 760, double height = 300);

/// The pixel x of `x` on a chart axis from `low` to `high` drawn from `left`
/// over `width` pixels (what svg_xy_chart() draws with; tests invert it).
double xy_chart_pixel(double x, double low, double high, bool log, double left, double width);

}  // namespace splitscope
