// IntervalSet: union, intersection and lengths of busy time.

#include <gtest/gtest.h>

#include "report/intervals.hpp"

namespace splitscope {
namespace intervals_test {
namespace {

TEST(IntervalSet, UnionMergesOverlapsAndTouchingIntervals) {
  // [5, 15) overlaps [0, 10); [15, 18) touches it; [20, 25) stands apart; [30, 30) is empty.
  const IntervalSet set({{20, 25}, {0, 10}, {5, 15}, {15, 18}, {30, 30}});
  EXPECT_EQ(set.intervals(), (std::vector<Interval>{{0, 18}, {20, 25}}));
  EXPECT_DOUBLE_EQ(set.length(), 18 + 5);
}

TEST(IntervalSet, IntersectionKeepsOnlyCommonTime) {
  const IntervalSet a({{0, 10}, {20, 30}});
  const IntervalSet b({{5, 25}, {28, 40}});
  // Common: [5, 10) + [20, 25) + [28, 30) = 5 + 5 + 2.
  const IntervalSet both = IntervalSet::intersect(a, b);
  EXPECT_EQ(both.intervals(), (std::vector<Interval>{{5, 10}, {20, 25}, {28, 30}}));
  EXPECT_DOUBLE_EQ(both.length(), 12);
  // Union: [0, 40) minus nothing = 40; inclusion-exclusion: 20 + 32 - 12.
  EXPECT_DOUBLE_EQ(IntervalSet::unite(a, b).length(), 40);
}

TEST(IntervalSet, OverlapIsTheIntersectionsLength) {
  const IntervalSet set({{0, 10}, {20, 30}, {40, 50}});
  EXPECT_DOUBLE_EQ(set.overlap({5, 45}), 5 + 10 + 5);
  EXPECT_DOUBLE_EQ(set.overlap({10, 20}), 0);   // between two, touching both
  EXPECT_DOUBLE_EQ(set.overlap({25, 26}), 1);   // inside one
  EXPECT_DOUBLE_EQ(set.overlap({-5, 100}), 30);  // around all
  EXPECT_DOUBLE_EQ(set.overlap({60, 70}), 0);   // past the end
  EXPECT_DOUBLE_EQ(IntervalSet().overlap({0, 1}), 0);
}

TEST(IntervalSet, AddKeepsTheSetDisjoint) {
  IntervalSet set;
  set.add({10, 20});
  set.add({0, 5});
  set.add({4, 12});
  EXPECT_EQ(set.intervals(), (std::vector<Interval>{{0, 20}}));
  EXPECT_DOUBLE_EQ(IntervalSet::intersect(set, IntervalSet()).length(), 0);
}

}  // namespace
}  // namespace intervals_test
}  // namespace splitscope
