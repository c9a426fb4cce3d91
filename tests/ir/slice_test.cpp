// Slices of an op: their costs tile the op's own exactly.

#include <gtest/gtest.h>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/ops/conv2d_rules.hpp"
#include "ir/slice.hpp"

namespace splitscope {
namespace slice_test {
namespace {

Graph lower_text(const std::string& text) { return lower(parse_model_text(text, "slice.json")); }

TEST(Range, SplitEvenlyGivesTheRemainderToTheFirst) {
  const auto ranges = split_evenly(10, 4);
  ASSERT_EQ(ranges.size(), 4u);
  EXPECT_EQ(ranges[0], (Range{0, 3}));
  EXPECT_EQ(ranges[1], (Range{3, 6}));
  EXPECT_EQ(ranges[2], (Range{6, 8}));
  EXPECT_EQ(ranges[3], (Range{8, 10}));
}

TEST(Range, SplitAlignedKeepsGroupsWhole) {
  const auto ranges = split_aligned(12, 2, 4);  // 3 granules of 4 over 2 parts
  EXPECT_EQ(ranges[0], (Range{0, 8}));
  EXPECT_EQ(ranges[1], (Range{8, 12}));
}

TEST(Slice, DenseOutputAndReductionSlicesSumToTheOp) {
  const Graph graph = lower_text(R"({"batch": 6, "input": [10], "layers": [
      {"type": "dense", "units": 7}]})");
  const NodeId dense = 1;
  int64_t flops = 0;
  int64_t params = 0;
  for (const Range& rows : split_evenly(6, 2)) {
    for (const Range& out : split_evenly(7, 3)) {
      for (const Range& reduce : split_evenly(10, 4)) {
        const SliceCost cost = slice_cost(graph, dense, Slice{rows, out, reduce, {}});
        // 2·rows·k·outs
        EXPECT_EQ(cost.flops, 2 * rows.size() * reduce.size() * out.size());
        flops += cost.flops;
        params += cost.param_count;
      }
    }
  }
  EXPECT_EQ(flops, graph.node(dense).flops);
  // Each weight is in one (out, reduce) block; row slices repeat the weights (2 of them).
  EXPECT_EQ(params, 2 * graph.node(dense).param_count);
}

TEST(Slice, PartialOnlyForAReductionSlice) {
  const Graph graph = lower_text(R"({"batch": 2, "input": [10], "layers": [
      {"type": "dense", "units": 4}]})");
  const OpNode& node = graph.node(1);
  EXPECT_FALSE(full_slice(node, {0, 2}).is_partial(node));
  EXPECT_TRUE((Slice{{0, 2}, {0, 4}, {0, 5}, {}}).is_partial(node));
}

TEST(Slice, GroupedConvReadsOnlyItsGroupsChannels) {
  const Graph graph = lower_text(R"({"batch": 2, "input": [8, 6, 6], "layers": [
      {"type": "conv2d", "filters": 12, "kernel": 3, "groups": 4}]})");
  const OpNode& conv = graph.node(1);
  // 3 filters and 2 input channels per group.
  EXPECT_EQ(conv_input_channels(conv, {0, 3}), (Range{0, 2}));
  EXPECT_EQ(conv_input_channels(conv, {3, 9}), (Range{2, 6}));
  EXPECT_EQ(conv_input_channels(conv, {4, 5}), (Range{2, 4}));
  int64_t flops = 0;
  for (const Range& out : split_aligned(12, 2, 3)) {
    flops += slice_cost(graph, 1, Slice{{0, 2}, out, {0, 8}, {}}).flops;
  }
  EXPECT_EQ(flops, graph.node(1).flops);
}

TEST(Slice, CellSliceByHiddenUnits) {
  const Graph graph = lower_text(R"({"batch": 3, "input": [2, 5], "layers": [
      {"type": "lstm", "hidden": 8}]})");
  const NodeId cell_t1 = 3;  // 2 inputs, cell t0, cell t1
  ASSERT_EQ(graph.node(cell_t1).step, 1);
  // A slice of 2 of 8 units: 2·4·2·(5+8)·3 = 624 FLOPs, 4·2·13 + 4·2 = 112 parameters.
  const SliceCost cost = slice_cost(graph, cell_t1, Slice{{0, 3}, {2, 4}, {0, 5}, {}});
  EXPECT_EQ(cost.flops, 624);
  EXPECT_EQ(cost.param_count, 112);
  // Reads x (3·5), all of h (3·8), its slice of c (3·2) and its weights; writes h and c slices.
  EXPECT_EQ(cost.bytes_read, 4 * (15 + 24 + 6 + 112));
  EXPECT_EQ(cost.bytes_written, 4 * (6 + 6));
  const SliceCost full = slice_cost(graph, cell_t1, full_slice(graph.node(cell_t1), {0, 3}));
  EXPECT_EQ(full.flops, graph.node(cell_t1).flops);
  EXPECT_EQ(full.bytes_read, graph.node(cell_t1).bytes_read);
  EXPECT_EQ(full.bytes_written, graph.node(cell_t1).bytes_written);
}

}  // namespace
}  // namespace slice_test
}  // namespace splitscope
