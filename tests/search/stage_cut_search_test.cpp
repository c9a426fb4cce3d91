// The stage-cut programme against every cut, on small sequences.

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "search/stage_cut_search.hpp"
#include "util/splitmix.hpp"

namespace splitscope {
namespace {

/// Every way to cut `n` units into `stages` non-empty contiguous stages.
void every_sequence_cut(size_t n, size_t stages, std::vector<int>& starts, std::vector<std::vector<int>>& cuts) {
  if (starts.size() == stages) {
    cuts.push_back(starts);
    return;
  }
  // The first stage starts at 0; each later one after the previous, leaving a unit for every stage after it.
  const int from = starts.empty() ? 0 : starts.back() + 1;
  const int last = starts.empty() ? 0 : static_cast<int>(n - (stages - starts.size()));
  for (int start = from; start <= last; ++start) {
    starts.push_back(start);
    every_sequence_cut(n, stages, starts, cuts);
    starts.pop_back();
  }
}

TEST(StageCutSearch, AStageTimeIsItsComputeAndWhatCrossesItsTwoCuts) {
  StageCosts costs{.unit_seconds = {1, 2, 3, 4}, .cut_bytes_per_row = {10, 20, 30}, .rows = 2};
  // Units 1..2 (2 + 3 s), receiving 10 B/row and sending 30 B/row, 2 rows, at 40 B/s: 2 s more.
  EXPECT_DOUBLE_EQ(stage_seconds(costs, 1, 3, 40), 7.0);
  EXPECT_DOUBLE_EQ(stage_seconds(costs, 0, 4, 40), 10.0);  // one stage sends nothing
}

TEST(StageCutSearch, MovesACutToWhereLittleCrosses) {
  // Balanced compute would cut at 2 (2 + 2 s each side); 100 B/row cross there,
  // 0 after unit 0: at 1 B/s the cut 0 | 1 2 3 (1 s | 3 s) is the faster one.
  StageCosts costs{.unit_seconds = {1, 1, 1, 1}, .cut_bytes_per_row = {0, 100, 100}, .rows = 1};
  EXPECT_EQ(best_stage_cuts(costs, 2, 1.0), (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(slowest_stage_seconds(costs, {0, 1}, 1.0), 3.0);
  // With free links it balances compute.
  EXPECT_EQ(best_stage_cuts(costs, 2, 1e30), (std::vector<int>{0, 2}));
}

TEST(StageCutSearch, FindsTheBestOfEveryCutOnRandomSequences) {
  uint64_t counter = 7;
  const auto draw = [&counter] { return splitmix64(counter++); };
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 1 + draw() % 10;
    const size_t stages = 1 + draw() % n;
    StageCosts costs;
    costs.rows = 1 + static_cast<int64_t>(draw() % 4);
    for (size_t i = 0; i < n; ++i) costs.unit_seconds.push_back(static_cast<double>(draw() % 100));
    for (size_t i = 0; i + 1 < n; ++i) costs.cut_bytes_per_row.push_back(static_cast<double>(draw() % 50));
    std::vector<int> starts;
    std::vector<std::vector<int>> cuts;
    every_sequence_cut(n, stages, starts, cuts);
    double best = std::numeric_limits<double>::infinity();
    for (const auto& cut : cuts) best = std::min(best, slowest_stage_seconds(costs, cut, 10.0));
    const std::vector<int> found = best_stage_cuts(costs, static_cast<int>(stages), 10.0);
    ASSERT_EQ(found.size(), stages);
    EXPECT_EQ(found.front(), 0);
    EXPECT_DOUBLE_EQ(slowest_stage_seconds(costs, found, 10.0), best) << "trial " << trial << ", " << n << " units";
  }
}

}  // namespace
}  // namespace splitscope
