// Makespan statistics over repeats: median, spread, p95, the representative repeat.

#include <gtest/gtest.h>

#include "report/makespan_stats.hpp"
#include "report_test_support.hpp"

namespace splitscope {
namespace makespan_stats_test {
namespace {

using testing::compute_span;

Timeline lasting(double us) { return Timeline{{compute_span(0, 0, 0, us)}}; }

TEST(MakespanStats, EvenCountAveragesTheMiddleTwo) {
  // 3, 1, 2, 10 ms -> sorted 1, 2, 3, 10.
  const MakespanStats stats = makespan_stats({lasting(3000), lasting(1000), lasting(2000), lasting(10000)});
  EXPECT_EQ(stats.repeats, 4);
  EXPECT_DOUBLE_EQ(stats.median_ms, 2.5);  // (2 + 3) / 2
  EXPECT_DOUBLE_EQ(stats.min_ms, 1);
  EXPECT_DOUBLE_EQ(stats.max_ms, 10);
  EXPECT_DOUBLE_EQ(stats.p95_ms, 10);  // nearest rank ceil(0.95 * 4) = 4th
  EXPECT_DOUBLE_EQ(stats.mean_ms, 4);  // 16 / 4
  // Repeats 0 (3 ms) and 2 (2 ms) are both 0.5 ms from the median: the earlier one stands for the run.
  EXPECT_EQ(stats.representative, 0);
  EXPECT_DOUBLE_EQ(stats.representative_ms, 3);
  EXPECT_DOUBLE_EQ(stats.spread(), 3.0);  // max(10 - 2.5, 2.5 - 1) / 2.5
}

TEST(MakespanStats, OddCountTakesTheMiddleRepeat) {
  const MakespanStats stats = makespan_stats({lasting(5000), lasting(4000), lasting(4400)});
  EXPECT_DOUBLE_EQ(stats.median_ms, 4.4);
  EXPECT_EQ(stats.representative, 2);
  EXPECT_DOUBLE_EQ(stats.p95_ms, 5);                 // ceil(2.85) = 3rd of 3
  EXPECT_NEAR(stats.spread(), 0.6 / 4.4, 1e-12);     // max(5 - 4.4, 4.4 - 4) / 4.4
}

TEST(MakespanStats, OneRepeatHasNoSpread) {
  const MakespanStats stats = makespan_stats({lasting(1234)});
  EXPECT_DOUBLE_EQ(stats.median_ms, 1.234);
  EXPECT_DOUBLE_EQ(stats.p95_ms, 1.234);
  EXPECT_DOUBLE_EQ(stats.spread(), 0);
}

}  // namespace
}  // namespace makespan_stats_test
}  // namespace splitscope
