#pragma once
/// \file
/// The time-step wavefront of a layer-split RNN, read off a Timeline: which
/// devices ran a cell in each time slice, how many were busy, how long the
/// pipe took to fill and drain, and how busy it was in between.

#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "timeline/timeline.hpp"

namespace splitscope {

struct Wavefront {
  double slice_us = 0;  ///< width of one time slice (one cell's median time, or several)
  int cells_per_slice = 1;  ///< cell times per slice: more than 1 when a run is too wide to draw a column per cell
  /// busy[d][k]: device d ran a cell for more than half of slice k.
  std::vector<std::vector<bool>> busy;
  /// partial[d][k]: device d ran a cell for a tenth to a half of slice k
  /// (not busy). A measured run on shared cores shows many of these.
  std::vector<std::vector<bool>> partial;
  /// How many devices were busy in each slice.
  std::vector<int> busy_devices;
  int peak_busy = 0;  ///< the most devices busy in one slice
  /// The phases, from the cell spans themselves: the fill lasts until the
  /// last device starts its first cell, the drain from when the first device
  /// to finish ends its last cell, the steady state in between (none when
  /// the first device is done before the last starts). In a run with cells
  /// of equal time t and free links over L devices: fill (L-1)·t, drain
  /// (L-1)·t, steady (T-L+1)·t.
  double fill_us = 0;
  double drain_us = 0;
  double steady_us = 0;
  int fill_slices = 0;   ///< whole slices before the fill ends
  int drain_slices = 0;  ///< whole slices after the drain begins
  /// Share of device time in the steady state that devices spend computing
  /// cells (1 = every device busy throughout); 0 without a steady state.
  double steady_occupancy = 0;
  double compute_us = 0;   ///< sum of cell compute spans
  double transfer_us = 0;  ///< sum of transfer and collective spans
  double makespan_us = 0;
};

/// Analyses the cell spans of `timeline` (a run of `plan`). `max_slices`
/// bounds the columns: wider runs use slices of several cell times.
Wavefront analyse_wavefront(const Plan& plan, const Timeline& timeline, int max_slices = 100);

/// The picture: one row per device, one column per slice, '#' where a cell
/// ran for most of the slice and '-' where one ran for part of it, then the
/// busy-device counts ('#' only) and the phases, in plain text; with
/// `colour` (for a terminal), busy slices green and idle ones dim, through
/// ANSI escapes, the text otherwise the same.
std::string render_wavefront(const Wavefront& wavefront, bool colour = false);

/// The busy-device counts, runs of one count folded: "1, 2, 3, 4 (x29), 3, 2, 1".
std::string busy_counts_text(const std::vector<int>& busy_devices);

}  // namespace splitscope
