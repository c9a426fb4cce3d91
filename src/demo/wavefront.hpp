#pragma once
/// \file
/// The time-step wavefront of a layer-split RNN, read off a Timeline: which
/// devices ran a cell in each time slice, how many were busy, how long the
/// pipe took to fill and drain, and how busy it was in between.

#include <string>
#include <vector>

#include "partitioners/plan.hpp"
#include "timeline/timeline.hpp"

namespace splitscope {

struct Wavefront {
  double slice_us = 0;  ///< width of one time slice (one cell's median time)
  /// busy[d][k]: device d ran a cell for more than half of slice k.
  std::vector<std::vector<bool>> busy;
  /// How many devices were busy in each slice.
  std::vector<int> busy_devices;
  int fill_slices = 0;   ///< slices before the busiest count is first reached
  int drain_slices = 0;  ///< slices after it is last held
  int peak_busy = 0;     ///< the most devices busy at once
  /// Mean busy devices / devices over the slices between fill and drain.
  double steady_occupancy = 0;
  double compute_us = 0;   ///< sum of cell compute spans
  double transfer_us = 0;  ///< sum of transfer and collective spans
  double makespan_us = 0;
};

/// Analyses the cell spans of `timeline` (a run of `plan`). `max_slices`
/// bounds the columns: wider runs use slices of several cell times.
Wavefront analyse_wavefront(const Plan& plan, const Timeline& timeline, int max_slices = 100);

/// The picture: one row per device, one column per slice, '#' where a cell
/// ran, then the busy-device counts and the phases, in plain text.
std::string render_wavefront(const Wavefront& wavefront);

}  // namespace splitscope
