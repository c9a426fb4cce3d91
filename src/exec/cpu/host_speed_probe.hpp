#pragma once
/// \file
/// How fast this host computes now, timed as `calibrate --backend cpu`
/// times its one-thread sgemm grid: `validate` compares it with the grid
/// the machine file holds, before and after its measured runs, so that a
/// user can tell the simulator's error from the host's drift since its
/// calibration (a shared VM's speed moves by 10-20% over minutes:
/// reports/cpu-amd-epyc-2-threads/2026-12-02/).

#include <cstdint>
#include <vector>

namespace splitscope {

struct SgemmShape {
  int64_t m = 0, n = 0, k = 0;
};

/// The shapes probed: points of every calibration's full grid (m a power
/// of two, n and k powers of four), a 64-row layer, a square mid-sized
/// product and a 16-row one streaming 16 MiB of weights.
std::vector<SgemmShape> host_speed_shapes();

/// Seconds a call of a one-thread sgemm of `shape` takes now, as the
/// kernels call it, on a thread pinned to the first CPU the process may use
/// (device 0's, where calibrate times its one-thread grid): after a warm-up
/// call, the median of 5 samples of back-to-back calls at least 200 µs long.
double time_one_thread_sgemm(const SgemmShape& shape);

}  // namespace splitscope
