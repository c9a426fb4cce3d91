#pragma once
/// \file
/// Inline SVG pictures of one run, for the HTML page: its timeline (device
/// lanes with compute, transfer and collective spans; the critical path
/// outlined; every span's name and times in a hover title), and stacked bars
/// of compute / exposed transfer / idle per device.

#include <string>
#include <string_view>

#include "report/run_report.hpp"

namespace splitscope {

/// Text made safe inside HTML and SVG elements and attributes.
std::string escape_html(std::string_view text);

/// The run's timeline as `<svg class="timeline" ...>`, scaled so that the
/// makespan fills `width` pixels. Spans narrower than half a pixel that
/// follow each other on a lane are drawn as one mark, named by their count.
std::string svg_timeline(const RunReport& run, double width = 1100);

/// Per device, a bar of compute, exposed transfer and idle time (they add up
/// to the makespan), `width` pixels standing for `scale_ms` (pass the
/// longest makespan of the runs shown together, so bars compare across runs).
std::string svg_device_bars(const RunReport& run, double scale_ms, double width = 1100);

}  // namespace splitscope
