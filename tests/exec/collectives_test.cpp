// Transfers and collectives as copies and sums between channel blocks.

#include <gtest/gtest.h>

#include <vector>

#include "exec/cpu/collectives.hpp"

namespace splitscope {
namespace collectives_test {
namespace {

/// Block of 2 rows × channels [c0, c1) × inner 2 whose element (r, c, i) is 100·r + 10·c + i.
std::vector<float> numbered(Range channels) {
  std::vector<float> v;
  for (int r = 0; r < 2; ++r) {
    for (int64_t c = channels.begin; c < channels.end; ++c) {
      for (int i = 0; i < 2; ++i) v.push_back(static_cast<float>(100 * r + 10 * c + i));
    }
  }
  return v;
}

TEST(Collectives, GatherPlacesEachPartAtItsChannels) {
  // Channels [0, 2) on one device and [2, 5) on another -> [0, 5), given in either order.
  const auto low = numbered({0, 2});
  const auto high = numbered({2, 5});
  for (bool reversed : {false, true}) {
    std::vector<float> whole(2 * 5 * 2, -1.0f);
    std::vector<ConstChannelBlock> parts{{low.data(), 2, {0, 2}, 2}, {high.data(), 2, {2, 5}, 2}};
    if (reversed) std::swap(parts[0], parts[1]);
    gather_channels(parts, {whole.data(), 2, {0, 5}, 2});
    EXPECT_EQ(whole, numbered({0, 5}));
  }
}

TEST(Collectives, GatherRefusesPartsThatDoNotTile) {
  const auto part = numbered({0, 2});
  std::vector<float> whole(2 * 5 * 2);
  EXPECT_THROW(gather_channels({{part.data(), 2, {0, 2}, 2}}, {whole.data(), 2, {0, 5}, 2}), std::logic_error);
  EXPECT_THROW(gather_channels({{part.data(), 2, {4, 6}, 2}}, {whole.data(), 2, {0, 5}, 2}), std::logic_error);
}

TEST(Collectives, CopyMovesTheCommonChannels) {
  // [1, 4) into a block of [2, 6): channels 2 and 3 arrive, 4 and 5 stay as they were.
  const auto from = numbered({1, 4});
  std::vector<float> to(2 * 4 * 2, -1.0f);
  copy_channels({from.data(), 2, {1, 4}, 2}, {to.data(), 2, {2, 6}, 2});
  const std::vector<float> want{20, 21, 30, 31, -1, -1, -1, -1, 120, 121, 130, 131, -1, -1, -1, -1};
  EXPECT_EQ(to, want);
  // Equal ranges: a transfer.
  std::vector<float> copy(from.size());
  copy_channels({from.data(), 2, {1, 4}, 2}, {copy.data(), 2, {1, 4}, 2});
  EXPECT_EQ(copy, from);
  EXPECT_THROW(copy_channels({from.data(), 1, {1, 4}, 2}, {copy.data(), 2, {1, 4}, 2}), std::logic_error);
}

TEST(Collectives, SumAddsThePartialSums) {
  const std::vector<float> a{1, 2, 3, 4}, b{10, 20, 30, 40}, c{0.5f, 0.25f, 0.125f, 0};
  std::vector<float> sum(4);
  sum_blocks({{a.data(), 2, {0, 2}, 1}, {b.data(), 2, {0, 2}, 1}, {c.data(), 2, {0, 2}, 1}}, {sum.data(), 2, {0, 2}, 1});
  EXPECT_EQ(sum, (std::vector<float>{11.5f, 22.25f, 33.125f, 44}));
  EXPECT_THROW(sum_blocks({{a.data(), 2, {0, 2}, 1}, {b.data(), 1, {0, 4}, 1}}, {sum.data(), 2, {0, 2}, 1}),
               std::logic_error);
}

}  // namespace
}  // namespace collectives_test
}  // namespace splitscope
