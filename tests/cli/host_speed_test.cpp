// validate's host probe (cli/host_speed.hpp): the ratio of calibrated to
// present times, on a hand-made grid.

#include "cli/host_speed.hpp"

#include <gtest/gtest.h>

namespace splitscope::cli {
namespace host_speed_test {
namespace {

/// A full one-thread grid at 100 GFLOP/s everywhere, so that a shape's
/// calibrated time is 2·m·n·k / 1e11 s wherever it falls.
std::vector<GemmRatePoint> flat_grid(int threads = 1) {
  std::vector<GemmRatePoint> grid;
  for (int64_t m : {16, 64, 256}) {
    for (int64_t n : {256, 1024, 4096}) {
      for (int64_t k : {256, 1024}) grid.push_back({m, n, k, 100, threads, 1});
    }
  }
  return grid;
}

double calibrated_seconds(const SgemmShape& s) { return 2.0 * static_cast<double>(s.m * s.n * s.k) / 1e11; }

TEST(HostSpeed, IsTheMedianOfCalibratedOverPresentTimes) {
  const SgemmShape a{64, 1024, 1024};
  const SgemmShape b{256, 256, 256};
  const SgemmShape c{16, 4096, 1024};
  // Now 1.25x, 1x and 2x the calibrated times: ratios 0.8, 1 and 0.5, median 0.8.
  const auto speed = host_speed_ratio(
      flat_grid(), {{a, 1.25 * calibrated_seconds(a)}, {b, calibrated_seconds(b)}, {c, 2 * calibrated_seconds(c)}});
  ASSERT_TRUE(speed.has_value());
  EXPECT_NEAR(*speed, 0.8, 1e-12);
}

TEST(HostSpeed, NeedsAOneThreadGridTimedAlone) {
  const SgemmShape a{64, 1024, 1024};
  EXPECT_FALSE(host_speed_ratio(flat_grid(2), {{a, 1e-3}}).has_value());
  EXPECT_FALSE(host_speed_ratio({}, {{a, 1e-3}}).has_value());
  EXPECT_FALSE(host_speed_ratio(flat_grid(), {}).has_value());
  // Nothing is timed where there is nothing to compare with.
  EXPECT_FALSE(host_speed_now(flat_grid(2)).has_value());
}

TEST(HostSpeed, ProbesShapesOfEveryFullGrid) {
  // calibrate's full grid: m powers of two to 2048, n powers of four to 1024 and 2048, 4096, k to 2048.
  for (const SgemmShape& s : host_speed_shapes()) {
    EXPECT_EQ(s.m & (s.m - 1), 0) << s.m;
    for (int64_t v : {s.n, s.k}) EXPECT_TRUE(v == 1 || v == 4 || v == 16 || v == 64 || v == 256 || v == 1024 ||
                                             v == 2048 || v == 4096) << v;
    EXPECT_LE(s.k, 2048);
  }
}

}  // namespace
}  // namespace host_speed_test
}  // namespace splitscope::cli
