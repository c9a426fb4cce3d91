#pragma once
/// \file
/// One thread's sgemm rate as a function of the product's shape, from a grid
/// of timed shapes (`calibrate --backend cpu`, DeviceSpec::gemm_rates): a
/// 16-row product runs far below a square one's rate, and one number per op
/// kind cannot say so (issue 14: the cpu convolutions of resnet50 ran at 35
/// to 160 GFLOP/s by shape). The rate between grid points is interpolated
/// trilinearly in log2 of m, n and k on log2 of the rate, so the curve gives
/// back exactly the rates it was built from; outside the grid each
/// dimension is held at its nearest edge (a product larger than the largest
/// timed runs at the largest's rate: past a few hundred in every dimension
/// OpenBLAS's blocked kernels are at their plateau).
///
/// A grid may be timed on several thread counts (the kernels' gemm() split
/// over a device's threads), alone and with other devices busy beside it; a
/// curve is the grid of one thread count and one number of devices running.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace splitscope {

/// One timed shape: C[m, n] = A[m, k] · B[k, n], row-major fp32, split over `threads`.
struct GemmRatePoint {
  int64_t m = 0, n = 0, k = 0;
  double gflops = 0;  ///< 2·m·n·k / seconds, in 1e9 FLOP/s
  int threads = 1;
  /// Devices running a product of this shape at once, its own included: 1
  /// alone, more with the other devices of a pool busy beside it.
  int running = 1;
  bool operator==(const GemmRatePoint&) const = default;
};

/// Why `points` is not a set of grids a curve can be built from ("" when it
/// is): every m, n, k, thread count and running count must be positive,
/// every rate positive, and for each (threads, running) every combination of
/// its distinct m, n and k values present exactly once.
std::string gemm_grid_problem(const std::vector<GemmRatePoint>& points);

class GemmRateCurve {
 public:
  /// The grid of `threads` and `running` in `points`, which must pass
  /// gemm_grid_problem() and hold that grid (std::logic_error otherwise).
  GemmRateCurve(const std::vector<GemmRatePoint>& points, int threads, int running);
  /// The grid of the fewest threads in `points`, alone (the fewest running).
  explicit GemmRateCurve(const std::vector<GemmRatePoint>& points);

  /// The threads its grid was timed on.
  int threads() const { return threads_; }
  /// The devices that were running at once when it was timed.
  int running() const { return running_; }

  /// FLOP/s of one product of this shape (each dimension at least 1).
  double flops_per_second(int64_t m, int64_t n, int64_t k) const;
  /// Seconds of one product of this shape: 2·m·n·k over the rate; 0 when any dimension is 0.
  double seconds(int64_t m, int64_t n, int64_t k) const;

 private:
  struct Axis {
    std::vector<double> log2_values;  ///< ascending
    /// The cell holding `log2_value`: the lower index and the weight of the
    /// upper one, clamped at the edges.
    std::pair<size_t, double> locate(double log2_value) const;
  };
  double log2_rate_at(size_t i, size_t j, size_t l) const;

  int threads_ = 1;
  int running_ = 1;
  Axis m_, n_, k_;
  std::vector<double> log2_rates_;  ///< [m][n][k]
};

}  // namespace splitscope
