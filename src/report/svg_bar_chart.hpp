#pragma once
/// \file
/// An inline SVG chart of labelled horizontal bars of one unit, from zero,
/// each with its value written beside it: the runs a page compares side by side.

#include <string>
#include <utility>
#include <vector>

namespace splitscope {

/// `<svg class="bar-chart" ...>`; `bars` as (label, value), drawn in order.
std::string svg_bar_chart(const std::string& title, const std::string& unit,
                          const std::vector<std::pair<std::string, double>>& bars, double width = 760);

}  // namespace splitscope
