#pragma once
/// \file
/// The HTML report (`compare --html`): one self-contained page (inline CSS
/// and SVG, no script, no link to anything) with, per group of runs, the
/// comparison table, stacked bars of compute / transfer / idle per device
/// (one bar chart per run, on a common scale so lengths compare), and one
/// timeline per run (device lanes, compute and copy spans in distinct
/// colours, the critical path outlined, hover titles).

#include <string>
#include <string_view>

#include "report/comparison.hpp"
#include "report/report_context.hpp"

namespace splitscope {

/// The page's CSS (tables, figures, legends), for the other pages drawn in
/// its style (`search --html`).
std::string_view html_page_style();

/// "DATE on HOST · splitscope VERSION (REVISION, BUILD) · COMMAND LINE", the
/// line under a page's title that says how to make it again.
std::string html_context_line(const ReportContext& context);

std::string html_report(const Comparison& comparison);

}  // namespace splitscope
