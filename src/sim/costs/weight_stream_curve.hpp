#pragma once
/// \file
/// How long a cpu product waits for weights that are not in the caches, by
/// its rows (DeviceSpec::weight_stream, timed by `calibrate --backend cpu`).
/// A product of few rows is as slow as its weights arrive; more rows compute
/// on each byte as it arrives, and a product's time grows with its rows at
/// the rate the calibration timed: on the 2-thread Intel Xeon VM
/// (2026-12-07), two threads took 33 ms over a (8, 8192, 8192) product's
/// 256 MiB of weights and 45 ms over a (64, 8192, 8192) one, where the
/// larger of the grid's 33 ms and the 8-row stream's 33 ms had priced mlp's
/// 64-row layers, measured at 42 ms.

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/costs/cpu_pass_rates.hpp"

namespace splitscope {

class WeightStreamCurve {
 public:
  /// No rate: the weights come from the caches.
  WeightStreamCurve() = default;
  /// The rates timed on `threads` with `running` devices streaming, else on
  /// `threads` alone; no rate where neither was timed.
  static WeightStreamCurve of(const std::vector<WeightStreamRate>& rates, int threads, int running);

  bool empty() const { return points_.empty(); }
  /// Seconds a product of `rows` rows takes per byte of its weights:
  /// linear in rows between the row counts timed, the nearest one's outside
  /// them (past the largest, a product computes longer than its weights take
  /// to arrive, and the grid's price is the larger).
  double seconds_per_byte(int64_t rows) const;

 private:
  std::vector<std::pair<int64_t, double>> points_;  ///< (rows, seconds per byte), rows ascending
};

}  // namespace splitscope
