// The CPU executor on whole plans: the single-device run against the naive
// reference, hand-built multi-device plans against the single-device run, the
// timeline it records, the deadline, and what it reports about itself.

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/output_compare.hpp"
#include "hand_plan.hpp"
#include "naive_reference.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "timeline_checks.hpp"
#include "util/errors.hpp"
#include "util/npy.hpp"

namespace splitscope {
namespace executor_test {
namespace {

using testing_support::graph_from_json;
using testing_support::HandPlan;
using testing_support::naive_forward;
using testing_support::single_plan;
using testing_support::zoo_graph;

RunOptions quick_options(uint64_t seed = 3) {
  RunOptions options;
  options.warmup = 0;
  options.repeats = 1;
  options.seed = seed;
  return options;
}

HostTensor run_output(const Plan& plan, const RunOptions& options = quick_options()) {
  return CpuExecutor().run(plan, options).output;
}

void expect_matches(const HostTensor& output, const HostTensor& reference, double tolerance) {
  const OutputComparison comparison = compare_outputs(output, reference);
  EXPECT_LE(comparison.max_relative_error, tolerance) << comparison.describe();
  EXPECT_GT(comparison.max_abs_reference, 0.0);
}

TEST(CpuExecutor, SingleDeviceRunOfEveryZooNetworkMatchesTheNaiveReference) {
  for (const char* name : {"mlp-small", "cnn-small", "lstm-small", "gru-small"}) {
    SCOPED_TRACE(name);
    const auto graph = zoo_graph(name);
    expect_matches(run_output(single_plan(graph)), naive_forward(*graph, 3), 1e-5);
  }
}

TEST(CpuExecutor, EveryOpKindMatchesTheNaiveReference) {
  // Strided, padded, unbiased and grouped convolutions; max- and average-pooling with
  // stride != kernel; stand-alone activations; flatten; a dense layer without bias.
  const auto cnn = graph_from_json(R"({"batch": 3, "input": [4, 11, 9], "layers": [
      {"type": "conv2d", "filters": 6, "kernel": [3, 2], "stride": [2, 1], "padding": [1, 2]},
      {"type": "sigmoid"},
      {"type": "maxpool", "kernel": 3, "stride": 2},
      {"type": "conv2d", "filters": 4, "kernel": 1, "groups": 2, "bias": false, "activation": "tanh"},
      {"type": "avgpool", "kernel": 2, "stride": 1},
      {"type": "relu"},
      {"type": "flatten"},
      {"type": "dense", "units": 7, "bias": false, "activation": "sigmoid"},
      {"type": "softmax"}]})");
  expect_matches(run_output(single_plan(cnn)), naive_forward(*cnn, 3), 1e-5);
  // Recurrent layers returning sequences: stack ops (tanh and flatten need the whole
  // [T, H] tensor) and step slices (the LSTM after tanh needs it per step); a stacked
  // GRU and an LSTM without bias.
  const auto rnn = graph_from_json(R"({"batch": 2, "input": [4, 5], "layers": [
      {"type": "gru", "hidden": 6, "layers": 2},
      {"type": "tanh"},
      {"type": "lstm", "hidden": 3, "bias": false},
      {"type": "flatten"},
      {"type": "dense", "units": 5},
      {"type": "softmax"}]})");
  int stacks = 0, step_slices = 0;
  for (NodeId id = 0; id < rnn->num_nodes(); ++id) {
    stacks += rnn->node(id).kind == OpKind::kStack;
    step_slices += rnn->node(id).kind == OpKind::kStepSlice;
  }
  EXPECT_EQ(stacks, 2);       // before tanh, before flatten
  EXPECT_EQ(step_slices, 4);  // one per step, into the LSTM
  expect_matches(run_output(single_plan(rnn)), naive_forward(*rnn, 3), 1e-5);
}

TEST(CpuExecutor, SeedFixesWeightsAndInputs) {
  const auto graph = zoo_graph("mlp-small");
  const Plan plan = single_plan(graph);
  const HostTensor a = run_output(plan, quick_options(5));
  const HostTensor b = run_output(plan, quick_options(5));
  const HostTensor c = run_output(plan, quick_options(6));
  EXPECT_EQ(a.data, b.data);
  EXPECT_GT(compare_outputs(c, a).max_relative_error, 1e-2);
}

// A small fully connected net: 0 input [12], 1 fc1 (10, relu), 2 fc2 (6, tanh), 3 fc3 (4), 4 probs.
constexpr const char* kDenseNet = R"({"batch": 8, "input": [12], "layers": [
    {"type": "dense", "units": 10, "activation": "relu", "name": "fc1"},
    {"type": "dense", "units": 6, "activation": "tanh", "name": "fc2"},
    {"type": "dense", "units": 4, "name": "fc3"},
    {"type": "softmax", "name": "probs"}]})";

Slice slice(Range batch, Range out, Range reduce) { return {batch, out, reduce}; }

/// Every layer split by output units over 2 devices, all-gathers between them,
/// a concat before the softmax, and the softmax itself split, reading a transfer.
Plan vertical_dense_plan() {
  const auto graph = graph_from_json(kDenseNet);
  HandPlan p(graph, "vertical", 2);
  const Range rows{0, 8};
  const int in0 = p.input(0, 0, rows), in1 = p.input(0, 1, rows);
  const int a0 = p.compute(1, 0, slice(rows, {0, 5}, {0, 12}), {in0})[0];
  const int a1 = p.compute(1, 1, slice(rows, {5, 10}, {0, 12}), {in1})[0];
  const auto fc1 = p.gather({a0, a1}, true);
  const int b0 = p.compute(2, 0, slice(rows, {0, 3}, {0, 10}), {fc1[0]})[0];
  const int b1 = p.compute(2, 1, slice(rows, {3, 6}, {0, 10}), {fc1[1]})[0];
  const auto fc2 = p.gather({b0, b1}, true);
  const int c0 = p.compute(3, 0, slice(rows, {0, 2}, {0, 6}), {fc2[0]})[0];
  const int c1 = p.compute(3, 1, slice(rows, {2, 4}, {0, 6}), {fc2[1]})[0];
  const int fc3 = p.gather({c0, c1}, false, 0)[0];
  const int fc3_on_1 = p.transfer(fc3, 1);
  const int probs0 = p.compute(4, 0, slice(rows, {0, 1}, {0, 4}), {fc3})[0];
  const int probs1 = p.compute(4, 1, slice(rows, {1, 4}, {0, 4}), {fc3_on_1})[0];
  p.set_outputs({probs1, probs0});
  return p.plan();
}

/// fc1 split by columns, fc2 by rows (partial sums, all-reduced, then tanh in an
/// epilogue on each device), the rest whole on device 1.
Plan tensor_dense_plan() {
  const auto graph = graph_from_json(kDenseNet);
  HandPlan p(graph, "tensor", 2);
  const Range rows{0, 8};
  const int in0 = p.input(0, 0, rows), in1 = p.input(0, 1, rows);
  const int a0 = p.compute(1, 0, slice(rows, {0, 5}, {0, 12}), {in0})[0];
  const int a1 = p.compute(1, 1, slice(rows, {5, 10}, {0, 12}), {in1})[0];
  const int s0 = p.compute(2, 0, slice(rows, {0, 6}, {0, 5}), {a0})[0];
  const int s1 = p.compute(2, 1, slice(rows, {0, 6}, {5, 10}), {a1})[0];
  const auto sums = p.all_reduce({s0, s1});
  p.epilogue(sums[0]);
  const int fc2 = p.epilogue(sums[1]);
  const int fc3 = p.compute(3, 1, slice(rows, {0, 4}, {0, 6}), {fc2})[0];
  p.set_outputs({p.compute(4, 1, slice(rows, {0, 4}, {0, 4}), {fc3})[0]});
  return p.plan();
}

/// Two stages (fc1, fc2 | fc3, probs) over micro-batches of 3, 3 and 2 rows.
Plan pipeline_dense_plan() {
  const auto graph = graph_from_json(kDenseNet);
  HandPlan p(graph, "pipeline", 2, 3);
  std::vector<int> outputs;
  const std::vector<Range> micro{{0, 3}, {3, 6}, {6, 8}};
  for (int m = 0; m < 3; ++m) {
    const Range rows = micro[static_cast<size_t>(m)];
    const int in = p.input(0, 0, rows, m);
    const int a = p.compute(1, 0, slice(rows, {0, 10}, {0, 12}), {in}, m)[0];
    const int b = p.compute(2, 0, slice(rows, {0, 6}, {0, 10}), {a}, m)[0];
    const int b_on_1 = p.transfer(b, 1);
    const int c = p.compute(3, 1, slice(rows, {0, 4}, {0, 6}), {b_on_1}, m)[0];
    outputs.push_back(p.compute(4, 1, slice(rows, {0, 4}, {0, 4}), {c}, m)[0]);
  }
  p.set_outputs(outputs);
  return p.plan();
}

/// A grouped CNN over 3 devices: conv1's middle slice straddles its two groups; conv2's
/// slices read an all-gather; pooling and flatten stay on each device's own channels.
Plan vertical_grouped_cnn_plan() {
  // 0 input [4, 6, 6]; 1 conv1 (6 filters, 2 groups) [6, 6, 6]; 2 conv2 (4, 2 groups, stride 2) [4, 3, 3];
  // 3 pool [4, 2, 2]; 4 flatten [16]; 5 dense [5]; 6 softmax.
  const auto graph = graph_from_json(R"({"batch": 3, "input": [4, 6, 6], "layers": [
      {"type": "conv2d", "filters": 6, "kernel": 3, "padding": 1, "groups": 2, "activation": "relu"},
      {"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1, "stride": 2, "groups": 2, "activation": "relu"},
      {"type": "maxpool", "kernel": 2, "stride": 1},
      {"type": "flatten"},
      {"type": "dense", "units": 5},
      {"type": "softmax"}]})");
  HandPlan p(graph, "vertical", 3);
  const Range rows{0, 3};
  const std::vector<Range> conv1{{0, 2}, {2, 4}, {4, 6}};
  const std::vector<Range> conv2{{0, 1}, {1, 3}, {3, 4}};
  std::vector<int> conv1_parts, flat_parts;
  for (int d = 0; d < 3; ++d) {
    const int in = p.input(0, d, rows);
    conv1_parts.push_back(p.compute(1, d, slice(rows, conv1[static_cast<size_t>(d)], {0, 4}), {in})[0]);
  }
  const auto whole_conv1 = p.gather(conv1_parts, true);
  for (int d = 0; d < 3; ++d) {
    const Range mine = conv2[static_cast<size_t>(d)];
    const int c2 = p.compute(2, d, slice(rows, mine, {0, 6}), {whole_conv1[static_cast<size_t>(d)]})[0];
    const int pooled = p.compute(3, d, slice(rows, mine, {0, 4}), {c2})[0];
    flat_parts.push_back(p.compute(4, d, slice(rows, {mine.begin * 4, mine.end * 4}, {0, 4}), {pooled})[0]);
  }
  const int flat = p.gather(flat_parts, false, 0)[0];
  const int logits = p.compute(5, 0, slice(rows, {0, 5}, {0, 16}), {flat})[0];
  p.set_outputs({p.compute(6, 0, slice(rows, {0, 5}, {0, 5}), {logits})[0]});
  return p.plan();
}

/// An LSTM split by hidden units over 2 devices: each step all-gathers h, keeps its own c.
Plan vertical_lstm_plan() {
  // 0..2 step inputs [4]; 3..5 cells t0..t2 (hidden 6); 6 dense [3].
  const auto graph = graph_from_json(R"({"batch": 2, "input": [3, 4], "layers": [
      {"type": "lstm", "hidden": 6, "return_sequences": false},
      {"type": "dense", "units": 3}]})");
  HandPlan p(graph, "vertical", 2);
  const Range rows{0, 2};
  const std::vector<Range> units{{0, 4}, {4, 6}};  // uneven on purpose
  std::vector<int> h_whole(2, -1), c_own(2, -1);
  std::vector<int> h_parts;
  for (NodeId t = 0; t < 3; ++t) {
    h_parts.clear();
    for (int d = 0; d < 2; ++d) {
      const int x = p.input(t, d, rows);
      const auto out = p.compute(3 + t, d, slice(rows, units[static_cast<size_t>(d)], {0, 4}),
                                 {x, h_whole[static_cast<size_t>(d)], c_own[static_cast<size_t>(d)]});
      h_parts.push_back(out[0]);
      c_own[static_cast<size_t>(d)] = out[1];
    }
    if (t < 2) {
      const auto gathered = p.gather(h_parts, true);
      h_whole = gathered;
    }
  }
  const int h_last = p.gather(h_parts, false, 1)[0];
  p.set_outputs({p.compute(6, 1, slice(rows, {0, 3}, {0, 6}), {h_last})[0]});
  return p.plan();
}

struct HandPlanCase {
  const char* name;
  Plan (*make)();
};

void PrintTo(const HandPlanCase& c, std::ostream* out) { *out << c.name; }

class HandPlanTest : public testing::TestWithParam<HandPlanCase> {};

TEST_P(HandPlanTest, ComputesWhatTheSingleDeviceRunComputes) {
  const Plan plan = GetParam().make();
  EXPECT_EQ(plan_problems(plan), std::vector<std::string>{});  // built by hand, as a partitioner would
  const HostTensor reference = run_output(single_plan(plan.graph));
  expect_matches(run_output(plan), reference, 1e-5);
  expect_matches(reference, naive_forward(*plan.graph, 3), 1e-5);
}

TEST_P(HandPlanTest, TimelineFollowsThePlan) {
  const Plan plan = GetParam().make();
  RunOptions options = quick_options();
  options.repeats = 2;
  options.inter_op_threads = 0;
  options.intra_op_threads = 2;
  const RunResult result = CpuExecutor().run(plan, options);
  ASSERT_EQ(result.timelines.size(), 2u);
  for (const Timeline& timeline : result.timelines) testing_support::expect_timeline_follows_plan(plan, timeline);
}

INSTANTIATE_TEST_SUITE_P(Plans, HandPlanTest,
                         testing::Values(HandPlanCase{"vertical_dense", vertical_dense_plan},
                                         HandPlanCase{"tensor_dense", tensor_dense_plan},
                                         HandPlanCase{"pipeline_dense", pipeline_dense_plan},
                                         HandPlanCase{"vertical_grouped_cnn", vertical_grouped_cnn_plan},
                                         HandPlanCase{"vertical_lstm", vertical_lstm_plan}),
                         [](const testing::TestParamInfo<HandPlanCase>& info) { return info.param.name; });

TEST(CpuExecutor, AllReduceGivesEveryDeviceTheSameSum) {
  // Both epilogues of the tensor plan hold fc2's activations; the outputs of a plan
  // that reads each one must agree to the bit (both devices sum in participant order).
  Plan plan = tensor_dense_plan();
  int first_epilogue = -1, second_epilogue = -1;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kEpilogue) continue;
    (first_epilogue < 0 ? first_epilogue : second_epilogue) = op.outputs[0];
  }
  ASSERT_GE(second_epilogue, 0);
  // Make fc2 itself the output: first from device 0's copy, then from device 1's.
  auto graph = std::make_shared<Graph>(*plan.graph);
  graph->set_output({2, 0});
  plan.graph = graph;
  std::vector<HostTensor> outputs;
  for (int value : {first_epilogue, second_epilogue}) {
    plan.outputs = {value};
    outputs.push_back(run_output(plan));
  }
  EXPECT_EQ(outputs[0].data, outputs[1].data);
  EXPECT_EQ(outputs[0].shape, (std::vector<int64_t>{8, 6}));
}

TEST(CpuExecutor, OutputSavedAsNpyLoadsAsFloat32OfTheRightShape) {
  const auto graph = zoo_graph("cnn-small");
  const HostTensor output = run_output(single_plan(graph));
  EXPECT_EQ(output.shape, (std::vector<int64_t>{4, 10}));  // batch 4, 10 classes
  const std::string bytes = encode_npy(output.shape, output.data);
  EXPECT_NE(bytes.find("'descr': '<f4'"), std::string::npos);
  const NpyArray loaded = decode_npy(bytes, "out.npy");
  EXPECT_EQ(loaded.shape, output.shape);
  EXPECT_EQ(loaded.data, output.data);
  // Each row is a softmax: it sums to 1.
  for (int64_t r = 0; r < 4; ++r) {
    double sum = 0;
    for (int64_t j = 0; j < 10; ++j) sum += loaded.data[static_cast<size_t>(r * 10 + j)];
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST(CpuExecutor, DeadlineEndsTheRunNamingTheOpAndReturnsNothing) {
  // One dense layer of 2·256·1024·1024 = 537 MFLOP, far longer than the 1 ms deadline.
  const auto graph = graph_from_json(R"({"batch": 256, "input": [1024], "layers": [
      {"type": "dense", "units": 1024, "name": "big_layer"}]})");
  RunOptions options = quick_options();
  options.timeout_ms = 1.0;
  options.intra_op_threads = 1;
  try {
    CpuExecutor().run(single_plan(graph), options);
    FAIL() << "the deadline did not fire";
  } catch (const RunError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("deadline of 1 ms"), std::string::npos) << message;
    EXPECT_NE(message.find("big_layer"), std::string::npos) << message;
  }
}

TEST(CpuExecutor, DescribesWhatItRanOn) {
  const Plan plan = vertical_dense_plan();
  RunOptions options = quick_options();
  options.inter_op_threads = 5;  // more than the 2 devices: capped
  options.intra_op_threads = 1;
  const RunResult result = CpuExecutor().run(plan, options);
  EXPECT_EQ(result.info.backend, "cpu");
  EXPECT_TRUE(result.info.measured);
  EXPECT_EQ(result.info.device_mode, "cpu threads");
  EXPECT_FALSE(result.info.device_name.empty());
  ASSERT_EQ(result.info.device_memory_bytes.size(), 2u);
  EXPECT_GT(result.info.device_memory_bytes[0], int64_t{1} << 28);
  std::map<std::string, std::string> facts(result.info.facts.begin(), result.info.facts.end());
  EXPECT_EQ(facts["inter-op threads"].rfind("2 (capped", 0), 0u) << facts["inter-op threads"];
  EXPECT_EQ(facts["intra-op threads"], "1");
  EXPECT_NE(facts["blas"].find("OpenBLAS"), std::string::npos);
  EXPECT_EQ(CpuExecutor().name(), "cpu");
}

TEST(CpuExecutor, RefusesImpossibleOptions) {
  const Plan plan = single_plan(zoo_graph("mlp-small"));
  RunOptions options = quick_options();
  options.repeats = 0;
  EXPECT_THROW(CpuExecutor().run(plan, options), InputError);
  options = quick_options();
  options.inter_op_threads = -1;
  EXPECT_THROW(CpuExecutor().run(plan, options), InputError);
  options = quick_options();
  options.timeout_ms = 0.0;
  EXPECT_THROW(CpuExecutor().run(plan, options), InputError);
}

TEST(CpuExecutor, RefusesAPlanThatBreaksItsOwnRules) {
  Plan plan = vertical_dense_plan();
  // fc2's slice on device 0 reads the all-gathered fc1; point it at device 0's own fc1 slice
  // ([0, 5) of the 10 units it needs) instead.
  for (PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCompute && op.node == 2 && op.device == 0) op.inputs[0] = 2;
  }
  ASSERT_EQ(plan.value(2).channels, (Range{0, 5}));
  try {
    CpuExecutor().run(plan, quick_options());
    FAIL() << "no error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("needs rows [0, 8) channels [0, 10)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace executor_test
}  // namespace splitscope

namespace splitscope {
namespace executor_test {
namespace {

// --straggler D:MS: device D's first op of each run sleeps MS first, inside
// its own span; the numbers do not change.
TEST(CpuExecutor, AStragglerHoldsItsDeviceBackEveryRun) {
  const auto graph = testing_support::zoo_graph("mlp-small");
  PartitionOptions partitioning;
  partitioning.devices = 2;
  const Plan plan = make_partitioner("pipeline")->partition(graph, partitioning);
  RunOptions options;
  options.warmup = 0;
  options.repeats = 2;
  const RunResult plain = CpuExecutor().run(plan, options);
  options.straggler = StragglerDelay{1, 30};
  const RunResult held = CpuExecutor().run(plan, options);
  EXPECT_EQ(held.output.data, plain.output.data);
  ASSERT_EQ(held.timelines.size(), 2u);
  for (const Timeline& timeline : held.timelines) {
    EXPECT_GE(timeline.makespan_us(), 30000.0);
    double longest_on_1 = 0;
    for (const Span& span : timeline.spans) {
      if (span.device == 1 && span.kind == SpanKind::kCompute) longest_on_1 = std::max(longest_on_1, span.duration_us());
    }
    EXPECT_GE(longest_on_1, 30000.0) << "the delay is inside device 1's first op";
  }
  // mlp-small's pipeline takes well under a millisecond here without the delay.
  EXPECT_LT(plain.timelines.front().makespan_us(), 30000.0);
}

}  // namespace
}  // namespace executor_test
}  // namespace splitscope
