#pragma once
/// \file
/// The HTML report (`compare --html`): one self-contained page (inline CSS
/// and SVG, no script, no link to anything) with, per group of runs, the
/// comparison table, stacked bars of compute / transfer / idle per device
/// (one bar chart per run, on a common scale so lengths compare), and one
/// timeline per run (device lanes, compute and copy spans in distinct
/// colours, the critical path outlined, hover titles).

#include <string>

#include "report/comparison.hpp"

namespace splitscope {

std::string html_report(const Comparison& comparison);

}  // namespace splitscope
