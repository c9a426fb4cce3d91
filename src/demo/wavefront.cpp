#include "demo/wavefront.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "report/units.hpp"
#include "util/median.hpp"

namespace splitscope {
namespace {

bool is_cell_span(const Plan& plan, const Span& span) {
  if (span.kind != SpanKind::kCompute || span.op < 0) return false;
  return is_cell(plan.graph->node(plan.op(span.op).node).kind);
}

// ANSI escapes, for a terminal only.
constexpr const char* kGreen = "\x1b[32m";
constexpr const char* kYellow = "\x1b[33m";
constexpr const char* kDim = "\x1b[2m";
constexpr const char* kReset = "\x1b[0m";

/// Less of a slice than this is no mark at all: a sliver, such as a cell
/// that a transfer's latency pushed a hair past the slice's end.
constexpr double kPartialShare = 0.1;

/// Fill: until the last device starts its first cell. Drain: after the
/// first device to finish ends its last. Steady state: in between. Read off
/// the spans, not the slices, so that a noisy measured run (a device busy
/// for less than half a slice) does not move the phases.
void find_phases(const Plan& plan, const Timeline& timeline, Wavefront& wave) {
  const double none = -1;
  std::vector<double> first_start(static_cast<size_t>(plan.devices), none);
  std::vector<double> last_end(static_cast<size_t>(plan.devices), none);
  for (const Span& span : timeline.spans) {
    if (!is_cell_span(plan, span)) continue;
    double& first = first_start.at(static_cast<size_t>(span.device));
    double& last = last_end.at(static_cast<size_t>(span.device));
    first = first == none ? span.start_us : std::min(first, span.start_us);
    last = std::max(last, span.end_us);
  }
  double fill_end = 0;
  double drain_begin = wave.makespan_us;
  int working = 0;
  for (size_t d = 0; d < first_start.size(); ++d) {
    if (first_start[d] == none) continue;  // a device with no cells takes no part in the wavefront
    fill_end = std::max(fill_end, first_start[d]);
    drain_begin = std::min(drain_begin, last_end[d]);
    ++working;
  }
  const int slices = static_cast<int>(wave.busy_devices.size());
  wave.fill_us = fill_end;
  wave.drain_us = std::max(0.0, wave.makespan_us - drain_begin);
  wave.steady_us = std::max(0.0, drain_begin - fill_end);
  wave.fill_slices = std::min(slices, static_cast<int>(std::floor(fill_end / wave.slice_us + 1e-9)));
  wave.drain_slices =
      std::max(0, slices - static_cast<int>(std::ceil(std::max(drain_begin, fill_end) / wave.slice_us - 1e-9)));
  if (wave.steady_us <= 0 || working == 0) return;
  double computing = 0;  // a device runs one cell at a time, so its cell spans do not overlap
  for (const Span& span : timeline.spans) {
    if (!is_cell_span(plan, span)) continue;
    computing += std::max(0.0, std::min(span.end_us, drain_begin) - std::max(span.start_us, fill_end));
  }
  wave.steady_occupancy = computing / (wave.steady_us * working);
}

}  // namespace

Wavefront analyse_wavefront(const Plan& plan, const Timeline& timeline, int max_slices) {
  Wavefront wave;
  wave.makespan_us = timeline.makespan_us();
  std::vector<double> durations;
  for (const Span& span : timeline.spans) {
    if (is_cell_span(plan, span)) {
      durations.push_back(span.duration_us());
      wave.compute_us += span.duration_us();
    } else if (span.kind != SpanKind::kCompute) {
      wave.transfer_us += span.duration_us();
    }
  }
  wave.slice_us = median(durations);
  if (wave.slice_us <= 0 || wave.makespan_us <= 0) return wave;
  int slices = static_cast<int>(std::ceil(wave.makespan_us / wave.slice_us - 1e-9));
  if (slices > max_slices) {
    const int factor = (slices + max_slices - 1) / max_slices;
    wave.slice_us *= factor;
    wave.cells_per_slice = factor;
    slices = static_cast<int>(std::ceil(wave.makespan_us / wave.slice_us - 1e-9));
  }
  // Busy time of each device in each slice, from its cell spans.
  std::vector<std::vector<double>> covered(static_cast<size_t>(plan.devices),
                                           std::vector<double>(static_cast<size_t>(slices), 0.0));
  for (const Span& span : timeline.spans) {
    if (!is_cell_span(plan, span)) continue;
    auto& row = covered.at(static_cast<size_t>(span.device));
    const int first = std::max(0, static_cast<int>(std::floor(span.start_us / wave.slice_us)));
    const int last = std::min(slices - 1, static_cast<int>(std::floor(span.end_us / wave.slice_us)));
    for (int k = first; k <= last; ++k) {
      const double begin = std::max(span.start_us, k * wave.slice_us);
      const double end = std::min(span.end_us, (k + 1) * wave.slice_us);
      if (end > begin) row[static_cast<size_t>(k)] += end - begin;
    }
  }
  wave.busy.assign(static_cast<size_t>(plan.devices), std::vector<bool>(static_cast<size_t>(slices), false));
  wave.partial = wave.busy;
  wave.busy_devices.assign(static_cast<size_t>(slices), 0);
  for (size_t d = 0; d < covered.size(); ++d) {
    for (int k = 0; k < slices; ++k) {
      const double time = covered[d][static_cast<size_t>(k)];
      if (time > 0.5 * wave.slice_us) {
        wave.busy[d][static_cast<size_t>(k)] = true;
        wave.busy_devices[static_cast<size_t>(k)] += 1;
      } else if (time > kPartialShare * wave.slice_us) {
        wave.partial[d][static_cast<size_t>(k)] = true;
      }
    }
  }
  wave.peak_busy = *std::max_element(wave.busy_devices.begin(), wave.busy_devices.end());
  find_phases(plan, timeline, wave);
  return wave;
}

std::string busy_counts_text(const std::vector<int>& busy_devices) {
  std::string text;
  for (size_t k = 0; k < busy_devices.size();) {
    size_t run = 1;
    while (k + run < busy_devices.size() && busy_devices[k + run] == busy_devices[k]) ++run;
    if (!text.empty()) text += ", ";
    text += run == 1 ? fmt::format("{}", busy_devices[k]) : fmt::format("{} (x{})", busy_devices[k], run);
    k += run;
  }
  return text;
}

std::string render_wavefront(const Wavefront& wave, bool colour) {
  if (wave.busy.empty() || wave.busy_devices.empty()) return "no recurrent cells ran\n";
  const size_t slices = wave.busy_devices.size();
  const std::string busy_mark = colour ? std::string(kGreen) + "#" + kReset : "#";
  const std::string partial_mark = colour ? std::string(kYellow) + "-" + kReset : "-";
  const std::string idle_mark = colour ? std::string(kDim) + "." + kReset : ".";
  const std::string width =
      wave.cells_per_slice == 1 ? std::string("one cell") : fmt::format("{} cell times", wave.cells_per_slice);
  std::string text = fmt::format("time slice = {} ({}); '#' = a cell running for most of the slice, '-' = for "
                                 "part of it\n\n",
                                 format_ms(wave.slice_us / 1e3), width);
  for (size_t d = 0; d < wave.busy.size(); ++d) {
    text += fmt::format("device {:>2} |", d);
    for (size_t k = 0; k < slices; ++k) {
      text += wave.busy[d][k] ? busy_mark : wave.partial[d][k] ? partial_mark : idle_mark;
    }
    text += "|\n";
  }
  text += "   busy   |";
  for (int count : wave.busy_devices) text += count < 10 ? static_cast<char>('0' + count) : '+';
  text += "|\n\n";
  text += fmt::format("devices busy in each slice: {}\n", busy_counts_text(wave.busy_devices));
  text += fmt::format("fill: {} ({} slice{}) until every device has started; drain: {} ({} slice{}) after the "
                      "first device is done\n",
                      format_ms(wave.fill_us / 1e3), wave.fill_slices, wave.fill_slices == 1 ? "" : "s",
                      format_ms(wave.drain_us / 1e3), wave.drain_slices, wave.drain_slices == 1 ? "" : "s");
  if (wave.steady_us > 0) {
    text += fmt::format("steady state: {} in between, devices computing {:.0f}% of it; at most {} busy in one slice\n",
                        format_ms(wave.steady_us / 1e3), wave.steady_occupancy * 100, wave.peak_busy);
  } else {
    text += fmt::format("no steady state: the first device is done before the last one starts; at most {} busy in "
                        "one slice\n",
                        wave.peak_busy);
  }
  text += fmt::format("cells computed for {} in all (summed over devices), transfers took {} ({} of the compute "
                      "time); makespan {}\n",
                      format_ms(wave.compute_us / 1e3), format_ms(wave.transfer_us / 1e3),
                      format_share(wave.compute_us > 0 ? wave.transfer_us / wave.compute_us : 0),
                      format_ms(wave.makespan_us / 1e3));
  return text;
}

}  // namespace splitscope
