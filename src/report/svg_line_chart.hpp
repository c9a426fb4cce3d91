#pragma once
/// \file
/// An inline SVG chart of y against x for one or more named series (lines
/// with a dot at each point): a parameter-server run's loss against wall time.

#include <string>
#include <utility>
#include <vector>

namespace splitscope {

struct LineSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  ///< (x, y), x ascending
};

/// `<svg class="line-chart" ...>`: both axes from 0 to the largest value
/// (y from the smallest, when every y is above zero and they span less
/// than half the largest: a loss that falls from 2.3 to 2.2 stays visible).
std::string svg_line_chart(const std::vector<LineSeries>& series, const std::string& x_label,
                           const std::string& y_label);

}  // namespace splitscope
