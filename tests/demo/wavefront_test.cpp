// The wavefront read off a timeline where cell (l, t) runs in slice l + t.

#include <gtest/gtest.h>

#include "demo/rnn_demo_model.hpp"
#include "demo/wavefront.hpp"
#include "ir/lower.hpp"
#include "partitioners/partitioner.hpp"

namespace splitscope {
namespace wavefront_test {
namespace {

/// L layers on L devices, T steps, every cell taking `t` µs, free links:
/// cell (l, t) runs on device l during [(l + t)·t, (l + t + 1)·t).
Timeline ideal_timeline(const Plan& plan, double t) {
  Timeline timeline;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCompute) continue;
    const OpNode& node = plan.graph->node(op.node);
    Span span;
    span.device = op.device;
    span.op = op.id;
    span.start_us = (node.sublayer + node.step) * t;
    span.end_us = span.start_us + t;
    timeline.spans.push_back(span);
  }
  return timeline;
}

TEST(Wavefront, FillSteadyDrainOfAThreeLayerStack) {
  RnnDemoShape shape;
  shape.layers = 3;
  shape.steps = 5;
  shape.hidden = 4;
  shape.batch = 2;
  const auto graph = std::make_shared<const Graph>(lower(rnn_demo_model(shape)));
  PartitionOptions options;
  options.devices = 3;
  const Plan plan = make_partitioner("horizontal")->partition(graph, options);
  const Wavefront wave = analyse_wavefront(plan, ideal_timeline(plan, 10.0));
  EXPECT_DOUBLE_EQ(wave.slice_us, 10.0);
  // (T + L - 1) slices = 7: 1, 2 busy during fill, 3 for T - L + 1 = 3 slices, then 2, 1.
  EXPECT_EQ(wave.busy_devices, (std::vector<int>{1, 2, 3, 3, 3, 2, 1}));
  EXPECT_EQ(wave.fill_slices, 2);
  EXPECT_EQ(wave.drain_slices, 2);
  EXPECT_EQ(wave.peak_busy, 3);
  EXPECT_DOUBLE_EQ(wave.steady_occupancy, 1.0);
  EXPECT_DOUBLE_EQ(wave.makespan_us, 70.0);
  EXPECT_DOUBLE_EQ(wave.compute_us, 15 * 10.0);
  EXPECT_TRUE(wave.busy[0][0]);
  EXPECT_FALSE(wave.busy[2][1]);
  EXPECT_TRUE(wave.busy[2][2]);
  const std::string picture = render_wavefront(wave);
  EXPECT_NE(picture.find("device  0 |#####..|"), std::string::npos) << picture;
  EXPECT_NE(picture.find("device  2 |..#####|"), std::string::npos) << picture;
  EXPECT_NE(picture.find("   busy   |1233321|"), std::string::npos) << picture;
}

TEST(Wavefront, WideRunsUseCoarserSlices) {
  RnnDemoShape shape;
  shape.layers = 2;
  shape.steps = 300;
  shape.hidden = 4;
  shape.batch = 1;
  const auto graph = std::make_shared<const Graph>(lower(rnn_demo_model(shape)));
  PartitionOptions options;
  options.devices = 2;
  const Plan plan = make_partitioner("horizontal")->partition(graph, options);
  const Wavefront wave = analyse_wavefront(plan, ideal_timeline(plan, 1.0), 100);
  // 301 cell times in at most 100 columns: slices of 4 cell times, 76 columns.
  EXPECT_DOUBLE_EQ(wave.slice_us, 4.0);
  EXPECT_EQ(wave.busy_devices.size(), 76u);
  EXPECT_EQ(wave.peak_busy, 2);
}


TEST(Wavefront, PartlyBusySlicesAreMarkedApart) {
  // Two devices; device 0 runs cells of 10 µs at [0, 10) and [10, 14) (a short
  // one), device 1 one cell at [2, 12): the median cell is 10 µs.
  RnnDemoShape shape;
  shape.layers = 2;
  shape.steps = 2;
  shape.hidden = 4;
  shape.batch = 1;
  const auto graph = std::make_shared<const Graph>(lower(rnn_demo_model(shape)));
  PartitionOptions options;
  options.devices = 2;
  const Plan plan = make_partitioner("horizontal")->partition(graph, options);
  Timeline timeline;
  const double times[][2] = {{0, 10}, {10, 14}, {2, 12}};
  int next = 0;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCompute || next == 3) continue;
    Span span;
    span.device = next < 2 ? 0 : 1;
    span.op = op.id;
    span.start_us = times[next][0];
    span.end_us = times[next][1];
    timeline.spans.push_back(span);
    ++next;
  }
  const Wavefront wave = analyse_wavefront(plan, timeline);
  EXPECT_DOUBLE_EQ(wave.slice_us, 10.0);
  // Slice 1 = [10, 20): device 0 covers 4 µs (partial), device 1 covers 2 µs (20%: partial).
  EXPECT_EQ(wave.busy_devices, (std::vector<int>{2, 0}));
  EXPECT_TRUE(wave.partial[0][1]);
  EXPECT_TRUE(wave.partial[1][1]);
  // Phases from the spans: device 1 starts last, at 2 µs; device 1 is done first, at 12 µs.
  // In [2, 12) device 0 computes 8 + 2 µs and device 1 10 µs: 20 / (2 · 10) = 100%.
  EXPECT_DOUBLE_EQ(wave.fill_us, 2.0);
  EXPECT_DOUBLE_EQ(wave.steady_us, 10.0);
  EXPECT_DOUBLE_EQ(wave.drain_us, 2.0);
  EXPECT_DOUBLE_EQ(wave.steady_occupancy, 1.0);
  EXPECT_EQ(wave.fill_slices, 0);
  EXPECT_EQ(wave.drain_slices, 0);
  const std::string picture = render_wavefront(wave);
  EXPECT_NE(picture.find("device  0 |#-|"), std::string::npos) << picture;
  EXPECT_NE(picture.find("device  1 |#-|"), std::string::npos) << picture;
  EXPECT_NE(picture.find("devices busy in each slice: 2, 0"), std::string::npos) << picture;
  EXPECT_EQ(picture.find('\x1b'), std::string::npos);
  EXPECT_NE(render_wavefront(wave, true).find("\x1b[32m#\x1b[0m"), std::string::npos);
}

TEST(Wavefront, NoSteadyStateWhenTheStackIsTallerThanTheSequence) {
  // 3 layers, 1 step: the cells run one after the other, device 0 is done
  // (at 10 µs) before device 2 starts (at 20 µs).
  RnnDemoShape shape;
  shape.layers = 3;
  shape.steps = 1;
  shape.hidden = 4;
  shape.batch = 1;
  const auto graph = std::make_shared<const Graph>(lower(rnn_demo_model(shape)));
  PartitionOptions options;
  options.devices = 3;
  const Plan plan = make_partitioner("horizontal")->partition(graph, options);
  const Wavefront wave = analyse_wavefront(plan, ideal_timeline(plan, 10.0));
  EXPECT_EQ(wave.busy_devices, (std::vector<int>{1, 1, 1}));
  EXPECT_DOUBLE_EQ(wave.steady_us, 0.0);
  EXPECT_DOUBLE_EQ(wave.steady_occupancy, 0.0);
  EXPECT_NE(render_wavefront(wave).find("no steady state"), std::string::npos) << render_wavefront(wave);
}

TEST(Wavefront, BusyCountsFoldRuns) {
  EXPECT_EQ(busy_counts_text({1, 2, 3, 4, 4, 4, 3, 2, 1}), "1, 2, 3, 4 (x3), 3, 2, 1");
  EXPECT_EQ(busy_counts_text({0, 0}), "0 (x2)");
  EXPECT_EQ(busy_counts_text({}), "");
}

}  // namespace
}  // namespace wavefront_test
}  // namespace splitscope
