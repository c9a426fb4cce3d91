// What the plan compiler emits for each kind of op: streams, waits, copies,
// weight slices, spans, checked against hand-worked expectations.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <variant>

#include "exec/cuda/calibration.hpp"
#include "exec/cuda/plan_compiler.hpp"
#include "ir/op_signature.hpp"
#include "ir/params.hpp"
#include "plan/collective_schedule.hpp"
#include "partitioners/partitioner.hpp"
#include "program_interpreter.hpp"
#include "reference_network.hpp"

namespace splitscope::testing {
namespace plan_compiler_test {
namespace {

using gpu::BufferKind;
using gpu::CompileOptions;
using gpu::DeviceProgram;
using gpu::StreamLane;

const PlanOp& first_op(const Plan& plan, OpRole role, CollectiveKind kind = CollectiveKind::kAllGather) {
  for (const PlanOp& op : plan.ops) {
    if (op.role == role && (role != OpRole::kCollective || op.collective == kind)) return op;
  }
  throw std::logic_error("no such op in the plan");
}

std::vector<int> spans_of(const DeviceProgram& program, int op) {
  std::vector<int> spans;
  for (size_t s = 0; s < program.spans.size(); ++s) {
    if (program.spans[s].op == op) spans.push_back(static_cast<int>(s));
  }
  return spans;
}

/// The last step writing value `id`'s buffer.
int writer_of(const DeviceProgram& program, int value) {
  const int buffer = program.value_buffer[static_cast<size_t>(value)];
  int last = -1;
  for (size_t i = 0; i < program.steps.size(); ++i) {
    const auto& writes = program.steps[i].writes;
    if (std::find(writes.begin(), writes.end(), buffer) != writes.end()) last = static_cast<int>(i);
  }
  return last;
}

bool waits_for(const gpu::Step& step, int other) {
  return std::find(step.waits.begin(), step.waits.end(), other) != step.waits.end();
}

TEST(PlanCompiler, HostLinkTransferIsTwoHopsThroughPinnedMemory) {
  const Plan plan = make_plan(zoo_graph("mlp-small"), "horizontal", 2);
  const DeviceProgram program = gpu::compile_plan(plan, CompileOptions{LinkMode::kHost});
  const PlanOp& transfer = first_op(plan, OpRole::kTransfer);
  const auto spans = spans_of(program, transfer.id);
  ASSERT_EQ(spans.size(), 1u);
  const gpu::SpanSpec& span = program.spans[static_cast<size_t>(spans[0])];
  EXPECT_EQ(span.device, transfer.device);
  EXPECT_EQ(span.lane, Lane::kCopyIn);
  EXPECT_EQ(span.kind, SpanKind::kTransfer);
  // mlp-small moves a [8 rows][64 units] float32 activation: 8·64·4 = 2048 bytes.
  EXPECT_EQ(span.bytes, 2048);
  EXPECT_EQ(span.bytes, plan.value(transfer.inputs[0]).bytes);
  ASSERT_EQ(span.steps.size(), 2u);
  const gpu::Step& down = program.steps[static_cast<size_t>(span.steps[0])];
  const gpu::Step& up = program.steps[static_cast<size_t>(span.steps[1])];
  EXPECT_EQ(down.stream, (gpu::StreamId{transfer.src_device, StreamLane::kCopyOut}));
  EXPECT_EQ(up.stream, (gpu::StreamId{transfer.device, StreamLane::kCopyIn}));
  const auto& down_copy = std::get<gpu::CopyStep>(down.action);
  const auto& up_copy = std::get<gpu::CopyStep>(up.action);
  const gpu::BufferSpec& staging = program.buffers[static_cast<size_t>(down_copy.dst.buffer)];
  EXPECT_EQ(staging.kind, BufferKind::kStaging);
  EXPECT_EQ(staging.device, -1);
  EXPECT_EQ(staging.elements, 8 * 64);
  EXPECT_EQ(up_copy.src.buffer, down_copy.dst.buffer);
  EXPECT_TRUE(waits_for(up, span.steps[0])) << "the upload must wait for the download";
  EXPECT_TRUE(waits_for(down, writer_of(program, transfer.inputs[0]))) << "the download must wait for the producer";
}

TEST(PlanCompiler, DeviceLinkTransferIsOnePeerCopyThatItsConsumerWaitsFor) {
  const Plan plan = make_plan(zoo_graph("mlp-small"), "horizontal", 2);
  const DeviceProgram program = gpu::compile_plan(plan, CompileOptions{LinkMode::kDevice});
  const PlanOp& transfer = first_op(plan, OpRole::kTransfer);
  const gpu::SpanSpec& span = program.spans[static_cast<size_t>(spans_of(program, transfer.id).at(0))];
  ASSERT_EQ(span.steps.size(), 1u);
  const gpu::Step& copy = program.steps[static_cast<size_t>(span.steps[0])];
  EXPECT_EQ(copy.stream, (gpu::StreamId{transfer.device, StreamLane::kCopyIn}));
  const auto& action = std::get<gpu::CopyStep>(copy.action);
  EXPECT_EQ(action.width * action.height, 8 * 64);
  EXPECT_EQ(program.buffers[static_cast<size_t>(action.src.buffer)].device, transfer.src_device);
  EXPECT_EQ(program.buffers[static_cast<size_t>(action.dst.buffer)].device, transfer.device);
  EXPECT_TRUE(waits_for(copy, writer_of(program, transfer.inputs[0])));
  // The op reading the transferred value waits for the copy (another stream).
  const int moved = transfer.outputs[0];
  for (const PlanOp& op : plan.ops) {
    if (std::find(op.inputs.begin(), op.inputs.end(), moved) == op.inputs.end()) continue;
    const gpu::SpanSpec& reader = program.spans[static_cast<size_t>(spans_of(program, op.id).at(0))];
    EXPECT_TRUE(waits_for(program.steps[static_cast<size_t>(reader.steps[0])], span.steps[0]));
  }
}

// The ring the plan names (collective_schedule.hpp): on each of N devices,
// 2(N-1) copies into its copy-in stream; the N-1 reduce-scatter ones land
// in a receive buffer that a sum kernel adds to the device's own chunk.
TEST(PlanCompiler, AllReduceRunsTheRingThePlanNames) {
  const Plan plan = make_plan(zoo_graph("mlp-small"), "tensor", 3);
  const DeviceProgram program = gpu::compile_plan(plan, CompileOptions{LinkMode::kDevice});
  const PlanOp& reduce = first_op(plan, OpRole::kCollective, CollectiveKind::kAllReduce);
  ASSERT_EQ(reduce.algorithm, CollectiveAlgorithm::kRing);
  const size_t n = reduce.participants.size();
  ASSERT_EQ(n, 3u);
  const CollectiveSchedule schedule = collective_schedule(plan, reduce);
  const auto spans = spans_of(program, reduce.id);
  ASSERT_EQ(spans.size(), n);
  int64_t bytes = 0;
  for (size_t d = 0; d < n; ++d) {
    const gpu::SpanSpec& span = program.spans[static_cast<size_t>(spans[d])];
    EXPECT_EQ(span.device, reduce.participants[d]);
    EXPECT_EQ(span.kind, SpanKind::kCollective);
    EXPECT_EQ(span.lane, Lane::kCopyIn);
    EXPECT_EQ(span.bytes, schedule.deliveries[d].bytes_received);
    bytes += span.bytes;
    const int own = program.value_buffer[static_cast<size_t>(reduce.inputs[d])];
    const int out = program.value_buffer[static_cast<size_t>(reduce.outputs[d])];
    size_t copies = 0;
    size_t sums = 0;
    for (int s : span.steps) {
      const gpu::Step& step = program.steps[static_cast<size_t>(s)];
      EXPECT_EQ(step.stream, (gpu::StreamId{span.device, StreamLane::kCopyIn}));
      if (std::holds_alternative<gpu::CopyStep>(step.action)) {
        ++copies;
        continue;
      }
      const auto& sum = std::get<gpu::SumStep>(step.action);
      ++sums;
      ASSERT_EQ(sum.inputs.size(), 2u);
      EXPECT_EQ(sum.inputs[0].buffer, own) << "the device's own chunk";
      EXPECT_EQ(sum.inputs[0].offset, sum.y.offset) << "the same chunk of the output";
      EXPECT_EQ(program.buffers[static_cast<size_t>(sum.inputs[1].buffer)].kind, BufferKind::kReceive);
      EXPECT_EQ(sum.y.buffer, out);
    }
    EXPECT_EQ(copies, 2 * (n - 1));
    EXPECT_EQ(sums, n - 1);
  }
  // Each device receives 2(N-1)/N of the tensor: bytes_moved in all.
  EXPECT_EQ(bytes, reduce.bytes_moved);
  EXPECT_EQ(bytes, 2 * static_cast<int64_t>(n - 1) * plan.value(reduce.inputs[0]).bytes);
}

TEST(PlanCompiler, PartialProductsAddTheBiasOnceAndLeaveTheActivationToTheEpilogue) {
  const Plan plan = make_plan(zoo_graph("mlp-small"), "tensor", 2);
  const DeviceProgram program = gpu::compile_plan(plan, CompileOptions{});
  int partials = 0;
  int epilogues = 0;
  for (const PlanOp& op : plan.ops) {
    const gpu::SpanSpec& span = program.spans[static_cast<size_t>(spans_of(program, op.id).at(0))];
    if (op.role == OpRole::kEpilogue) {
      ++epilogues;
      const auto& map = std::get<gpu::MapStep>(program.steps[static_cast<size_t>(span.steps.at(0))].action);
      EXPECT_EQ(map.activation, plan.graph->node(op.node).attrs.activation);
      continue;
    }
    if (op.role != OpRole::kCompute || !op.slice.is_partial(plan.graph->node(op.node))) continue;
    ++partials;
    const bool first_rows = op.slice.reduce.begin == 0;
    ASSERT_EQ(span.steps.size(), first_rows ? 2u : 1u) << "a product, plus the bias where the reduction starts";
    if (first_rows) {
      const auto& bias = std::get<gpu::BiasActivationStep>(program.steps[static_cast<size_t>(span.steps[1])].action);
      EXPECT_TRUE(bias.bias.valid());
      EXPECT_EQ(bias.activation, Activation::kNone);
    }
  }
  EXPECT_GT(partials, 0);
  EXPECT_GT(epilogues, 0);
}

TEST(PlanCompiler, DenseSliceIsOneProductOverItsWeightBlock) {
  const Plan plan = make_plan(zoo_graph("mlp-small"), "vertical", 2);
  const DeviceProgram program = gpu::compile_plan(plan, CompileOptions{});
  // fc1 on device 1: units [32, 64) of 64, all 64 inputs, batch 8.
  const PlanOp* fc1 = nullptr;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCompute && plan.graph->node(op.node).name == "fc1" && op.device == 1) fc1 = &op;
  }
  ASSERT_NE(fc1, nullptr);
  ASSERT_EQ(fc1->slice.out, (Range{32, 64}));
  const gpu::SpanSpec& span = program.spans[static_cast<size_t>(spans_of(program, fc1->id).at(0))];
  const auto& product = std::get<gpu::MatMulStep>(program.steps[static_cast<size_t>(span.steps[0])].action);
  EXPECT_EQ(product.rows, 8);
  EXPECT_EQ(product.cols, 32);
  EXPECT_EQ(product.inner, 64);
  EXPECT_EQ(product.x_stride, 64);
  EXPECT_EQ(product.w_stride, 32);
  EXPECT_EQ(product.y_stride, 32);
  EXPECT_FALSE(product.accumulate);
  const gpu::WeightGather& w = *program.buffers[static_cast<size_t>(product.w.buffer)].weight;
  EXPECT_EQ(w.rows, (Range{0, 64}));
  EXPECT_EQ(w.row_length, 64);
  ASSERT_EQ(w.column_blocks.size(), 1u);
  EXPECT_EQ(w.column_blocks[0], (Range{32, 64}));
  const auto& bias = std::get<gpu::BiasActivationStep>(program.steps[static_cast<size_t>(span.steps[1])].action);
  EXPECT_EQ(bias.activation, Activation::kRelu);
  EXPECT_EQ(program.buffers[static_cast<size_t>(bias.bias.buffer)].weight->column_blocks[0], (Range{32, 64}));
}

TEST(PlanCompiler, RecurrentWeightsAreMaterialisedOncePerStackedLayer) {
  const Plan plan = make_plan(zoo_graph("lstm-small"), "single", 1);
  const DeviceProgram program = gpu::compile_plan(plan, CompileOptions{});
  int weights = 0;
  int scratch = 0;
  for (const gpu::BufferSpec& buffer : program.buffers) {
    weights += buffer.kind == BufferKind::kWeight;
    if (buffer.kind == BufferKind::kScratch) {
      ++scratch;
      // One cell's gate products: 4 rows x 4 gates x 16 units.
      EXPECT_EQ(buffer.elements, 4 * 4 * 16);
    }
  }
  // 4 stacked layers x (Wx, Wh, b) + the classifier's W and b; not per step.
  EXPECT_EQ(weights, 4 * 3 + 2);
  EXPECT_EQ(scratch, 1);
}

TEST(PlanCompiler, CellSliceGathersItsUnitsOfEveryGate) {
  const Plan plan = make_plan(zoo_graph("lstm-small"), "vertical", 2);
  const DeviceProgram program = gpu::compile_plan(plan, CompileOptions{});
  const PlanOp* cell = nullptr;
  for (const PlanOp& op : plan.ops) {
    const OpNode& node = plan.graph->node(op.node);
    if (op.role == OpRole::kCompute && node.kind == OpKind::kLstmCell && node.sublayer == 0 && node.step == 1 &&
        op.device == 1) {
      cell = &op;
    }
  }
  ASSERT_NE(cell, nullptr);
  ASSERT_EQ(cell->slice.out, (Range{8, 16}));
  const gpu::SpanSpec& span = program.spans[static_cast<size_t>(spans_of(program, cell->id).at(0))];
  ASSERT_EQ(span.steps.size(), 3u);  // x·Wx, += h·Wh, the element-wise cell
  const auto& input_product = std::get<gpu::MatMulStep>(program.steps[static_cast<size_t>(span.steps[0])].action);
  const auto& hidden_product = std::get<gpu::MatMulStep>(program.steps[static_cast<size_t>(span.steps[1])].action);
  EXPECT_EQ(input_product.cols, 4 * 8);
  EXPECT_EQ(input_product.inner, 8);   // the network's 8 input features
  EXPECT_EQ(hidden_product.inner, 16); // all of h_{t-1}
  EXPECT_TRUE(hidden_product.accumulate);
  const gpu::WeightGather& wx = *program.buffers[static_cast<size_t>(input_product.w.buffer)].weight;
  EXPECT_EQ(wx.row_length, 64);  // 4 gates x 16 units
  const std::vector<Range> expected{{8, 16}, {24, 32}, {40, 48}, {56, 64}};
  EXPECT_EQ(wx.column_blocks, expected);
  const auto& math = std::get<gpu::LstmCellStep>(program.steps[static_cast<size_t>(span.steps[2])].action);
  EXPECT_EQ(math.units, 8);
  EXPECT_TRUE(math.c_prev.valid());
}

TEST(PlanCompiler, ConvSliceAcrossGroupsRunsOneConvolutionPerGroup) {
  const auto graph = graph_from_text(R"({"batch": 2, "input": [4, 6, 6], "layers": [
      {"type": "conv2d", "filters": 8, "kernel": 3, "padding": 1, "groups": 2, "activation": "relu"}]})");
  const NodeId conv = 1;
  gpu::OpSample straddling{graph, conv, full_slice(graph->node(conv), {0, 2}), ""};
  straddling.slice.out = {2, 6};  // filters 2..3 of group 0 and 4..5 of group 1
  const Plan plan = gpu::single_op_plan(straddling);
  const DeviceProgram program = gpu::compile_plan(plan, CompileOptions{});
  std::vector<gpu::ConvStep> convs;
  for (const gpu::Step& step : program.steps) {
    if (const auto* c = std::get_if<gpu::ConvStep>(&step.action)) convs.push_back(*c);
  }
  ASSERT_EQ(convs.size(), 2u);
  const int64_t plane = 6 * 6;
  const int64_t per_filter = 2 * 3 * 3;  // 2 input channels per group, 3x3
  for (size_t g = 0; g < 2; ++g) {
    EXPECT_EQ(convs[g].geometry.groups, 1);
    EXPECT_EQ(convs[g].geometry.in_channels, 2);
    EXPECT_EQ(convs[g].geometry.filters, 2);
    EXPECT_EQ(convs[g].x.offset, static_cast<int64_t>(g) * 2 * plane);  // channels 0-1, then 2-3
    EXPECT_EQ(convs[g].filter.offset, static_cast<int64_t>(g) * 2 * per_filter);
    EXPECT_EQ(convs[g].y.offset, static_cast<int64_t>(g) * 2 * plane);
    EXPECT_EQ(convs[g].x_sample_stride, 4 * plane);
    EXPECT_EQ(convs[g].y_sample_stride, 4 * plane);
  }
  // And it computes the reference's channels 2..5.
  const HostTensor reference = reference_output(*graph, 3);
  const Interpretation run = interpret(plan, program, 3);
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t e = 2 * plane; e < 6 * plane; ++e) {
      const size_t at = static_cast<size_t>(b * 8 * plane + e);
      EXPECT_NEAR(run.output.data[at], reference.data[at], 1e-5);
    }
  }
  // Whole groups stay one grouped call.
  gpu::OpSample whole{graph, conv, full_slice(graph->node(conv), {0, 2}), ""};
  const DeviceProgram grouped = gpu::compile_plan(gpu::single_op_plan(whole), CompileOptions{});
  const auto& single = std::get<gpu::ConvStep>(grouped.steps.at(0).action);
  EXPECT_EQ(single.geometry.groups, 2);
  EXPECT_EQ(single.geometry.in_channels, 4);
  EXPECT_EQ(single.geometry.filters, 8);
}

TEST(PlanCompiler, PartialDenseSliceReadsItsReductionColumnsOfAWiderValue) {
  // x [2][6] held whole; the slice sums inputs [2, 5) into units [1, 3):
  // y[b][j] = Σ_{i=2..4} x[b][i] · W[i][1 + j], no bias (the reduction does not start at 0).
  const auto graph = graph_from_text(R"({"batch": 2, "input": [6], "layers": [
      {"type": "dense", "units": 4, "activation": "relu"}]})");
  gpu::OpSample sample{graph, 1, full_slice(graph->node(1), {0, 2}), ""};
  sample.slice.out = {1, 3};
  sample.slice.reduce = {2, 5};
  Plan plan = gpu::single_op_plan(sample);
  Value& x = plan.values[static_cast<size_t>(plan.inputs.at(0))];
  ASSERT_EQ(x.channels, (Range{2, 5}));
  x.channels = {0, 6};
  x.bytes = 2 * 6 * 4;
  const Interpretation run = interpret(plan, gpu::compile_plan(plan, CompileOptions{}), 12);
  const auto tensors = param_tensors(*graph, 1);
  const int key = graph->node(1).param_key;
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t j = 0; j < 2; ++j) {
      double sum = 0;
      for (int64_t i = 2; i < 5; ++i) {
        sum += double(input_value(12, b * 6 + i)) * param_value(12, key, kWeight, i * 4 + 1 + j, tensors[kWeight].scale);
      }
      EXPECT_NEAR(run.output.data[static_cast<size_t>(b * 4 + 1 + j)], sum, 1e-6) << "row " << b << " unit " << j;
    }
  }
}

TEST(PlanCompiler, LstmCellSliceReadsItsOwnUnitsOfAWiderState) {
  // Cell (0, t = 1) of an LSTM with H = 4, units [2, 4), its c_{t-1} held for
  // all 4 units. Inputs: x_1 from the network input, h_0 and c_0 stand-ins
  // (a value with no producer that is not a network input holds
  // input_value(seed, i) at element i).
  const auto graph = graph_from_text(R"({"batch": 2, "input": [2, 3], "layers": [
      {"type": "lstm", "hidden": 4, "return_sequences": false}]})");
  NodeId cell = 0;
  for (NodeId id = 0; id < graph->num_nodes(); ++id) {
    if (graph->node(id).kind == OpKind::kLstmCell && graph->node(id).step == 1) cell = id;
  }
  gpu::OpSample sample{graph, cell, full_slice(graph->node(cell), {0, 2}), ""};
  sample.slice.out = {2, 4};
  Plan plan = gpu::single_op_plan(sample);
  Value& c = plan.values[static_cast<size_t>(plan.ops[0].inputs.at(kCellStateSlot))];
  ASSERT_EQ(c.channels, (Range{2, 4}));
  c.channels = {0, 4};
  c.bytes = 2 * 4 * 4;
  plan.outputs = {plan.ops[0].outputs.at(kCellHiddenOutput)};  // h only: c would land on the same output
  const Interpretation run = interpret(plan, gpu::compile_plan(plan, CompileOptions{}), 30);
  const auto tensors = param_tensors(*graph, cell);
  const int key = graph->node(cell).param_key;
  auto w = [&](int tensor, int64_t index) {
    return double(param_value(30, key, tensor, index, tensors[static_cast<size_t>(tensor)].scale));
  };
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t u = 2; u < 4; ++u) {
      double gate[4];
      for (int g = 0; g < 4; ++g) {
        const int64_t column = g * 4 + u;
        double sum = w(kCellBias, column);
        for (int64_t i = 0; i < 3; ++i) sum += double(input_value(30, b * 6 + 3 + i)) * w(kInputWeight, i * 16 + column);
        for (int64_t i = 0; i < 4; ++i) sum += double(input_value(30, b * 4 + i)) * w(kRecurrentWeight, i * 16 + column);
        gate[g] = sum;
      }
      const double state = sigmoid(gate[1]) * input_value(30, b * 4 + u) + sigmoid(gate[0]) * std::tanh(gate[2]);
      const double h = sigmoid(gate[3]) * std::tanh(state);
      EXPECT_NEAR(run.output.data[static_cast<size_t>(b * 4 + u)], h, 1e-6) << "row " << b << " unit " << u;
    }
  }
}

TEST(PlanCompiler, PoolSliceReadsItsChannelsOfAWiderValue) {
  const auto graph = graph_from_text(R"({"batch": 2, "input": [4, 4, 4], "layers": [
      {"type": "maxpool", "kernel": 2}]})");
  gpu::OpSample sample{graph, 1, full_slice(graph->node(1), {0, 2}), ""};
  sample.slice.out = {1, 3};
  Plan plan = gpu::single_op_plan(sample);
  Value& x = plan.values[static_cast<size_t>(plan.inputs.at(0))];
  x.channels = {0, 4};
  x.bytes = 2 * 64 * 4;
  const Interpretation run = interpret(plan, gpu::compile_plan(plan, CompileOptions{}), 2);
  const HostTensor reference = reference_output(*graph, 2);
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t e = 1 * 4; e < 3 * 4; ++e) {  // channels 1-2 of a [4][2][2] output
      EXPECT_EQ(run.output.data[static_cast<size_t>(b * 16 + e)], reference.data[static_cast<size_t>(b * 16 + e)]);
    }
  }
}

NodeId node_named(const Graph& graph, const std::string& name) {
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    if (graph.node(id).name == name) return id;
  }
  throw std::logic_error("no node " + name);
}

TEST(PlanCompiler, StepSliceTakesItsFeaturesOfItsStep) {
  // tanh over [3 steps][4 features], then a GRU: step slice t = 2 of features [1, 3).
  // Its input stands in as input_value(seed, i): element (r, t, f) at i = r·12 + t·4 + f.
  const auto graph = graph_from_text(R"({"batch": 2, "input": [3, 4], "layers": [
      {"type": "tanh", "name": "squash"}, {"type": "gru", "hidden": 2, "name": "gru"}]})");
  const NodeId slice_node = node_named(*graph, "gru/x/t2");
  gpu::OpSample sample{graph, slice_node, full_slice(graph->node(slice_node), {0, 2}), ""};
  sample.slice.out = {1, 3};
  const Plan plan = gpu::single_op_plan(sample);
  const Interpretation run = interpret(plan, gpu::compile_plan(plan, CompileOptions{}), 9);
  const auto& out = run.values.at(static_cast<size_t>(plan.ops[0].outputs[0]));
  ASSERT_EQ(out.size(), 4u);
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t j = 0; j < 2; ++j) EXPECT_EQ(out[static_cast<size_t>(r * 2 + j)], input_value(9, r * 12 + 8 + 1 + j));
  }
}

TEST(PlanCompiler, StackSliceCopiesItsStepsToTheirPlaces) {
  // An LSTM's stacked output [3 steps][2 units], steps [1, 3): two [2 rows][2] copies
  // into a [2 rows][2 steps · 2] value; every step input holds input_value(seed, r·2 + u).
  const auto graph = graph_from_text(R"({"batch": 2, "input": [3, 4], "layers": [
      {"type": "lstm", "hidden": 2, "name": "lstm"}]})");
  const NodeId stack = node_named(*graph, "lstm/stack");
  gpu::OpSample sample{graph, stack, full_slice(graph->node(stack), {0, 2}), ""};
  sample.slice.out = {1, 3};
  const Plan plan = gpu::single_op_plan(sample);
  const Interpretation run = interpret(plan, gpu::compile_plan(plan, CompileOptions{}), 4);
  const auto& out = run.values.at(static_cast<size_t>(plan.ops[0].outputs[0]));
  ASSERT_EQ(out.size(), 8u);
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t t = 0; t < 2; ++t) {
      for (int64_t u = 0; u < 2; ++u) EXPECT_EQ(out[static_cast<size_t>(r * 4 + t * 2 + u)], input_value(4, r * 2 + u));
    }
  }
}

TEST(PlanCompiler, FlattenAndSoftmaxSlicesReadTheirPartOfAWiderValue) {
  const auto flat = graph_from_text(R"({"batch": 2, "input": [3, 2, 2], "layers": [{"type": "flatten"}]})");
  gpu::OpSample flatten{flat, 1, full_slice(flat->node(1), {0, 2}), ""};
  flatten.slice.out = {4, 12};  // channels 1-2 of the [3][2][2] input
  Plan plan = gpu::single_op_plan(flatten);
  Value& x = plan.values[static_cast<size_t>(plan.inputs.at(0))];
  ASSERT_EQ(x.channels, (Range{1, 3}));
  x.channels = {0, 3};
  x.bytes = 2 * 12 * 4;
  Interpretation run = interpret(plan, gpu::compile_plan(plan, CompileOptions{}), 8);
  HostTensor expected = reference_output(*flat, 8);
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t f = 4; f < 12; ++f) {
      EXPECT_EQ(run.output.data[static_cast<size_t>(b * 12 + f)], expected.data[static_cast<size_t>(b * 12 + f)]);
    }
  }
  const auto soft = graph_from_text(R"({"batch": 2, "input": [5], "layers": [{"type": "softmax"}]})");
  gpu::OpSample softmax{soft, 1, full_slice(soft->node(1), {0, 2}), ""};
  softmax.slice.out = {1, 4};
  const Plan soft_plan = gpu::single_op_plan(softmax);
  run = interpret(soft_plan, gpu::compile_plan(soft_plan, CompileOptions{}), 8);
  expected = reference_output(*soft, 8);
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t f = 1; f < 4; ++f) {
      EXPECT_NEAR(run.output.data[static_cast<size_t>(b * 5 + f)], expected.data[static_cast<size_t>(b * 5 + f)], 1e-7);
    }
  }
}

TEST(PlanCompiler, WaitsPointBackToOtherStreamsAndComputeStaysOnTheComputeStream) {
  for (const std::string& strategy : strategy_names()) {
    const StrategyTraits traits = make_partitioner(strategy)->traits();
    if (traits.baseline) continue;
    // gru-small has no fork for `branches` to split; two-tower-small has one.
    const auto graph = zoo_graph(strategy == "branches" ? "two-tower-small" : "gru-small");
    const Plan plan = make_plan(graph, strategy, 2, traits.microbatched ? 2 : 1);
    const DeviceProgram program = gpu::compile_plan(plan, CompileOptions{LinkMode::kHost});
    // Every split plan moves data between devices, so some step must wait on
    // another stream (replicas of a forward pass move nothing).
    size_t waits = 0;
    for (const gpu::Step& step : program.steps) waits += step.waits.size();
    if (!traits.replicated) {
      EXPECT_GT(waits, 0u) << strategy;
    }
    for (size_t i = 0; i < program.steps.size(); ++i) {
      const gpu::Step& step = program.steps[i];
      for (int w : step.waits) {
        EXPECT_LT(w, static_cast<int>(i)) << strategy;
        EXPECT_FALSE(program.steps[static_cast<size_t>(w)].stream == step.stream) << strategy;
      }
      const bool library = std::holds_alternative<gpu::MatMulStep>(step.action) ||
                           std::holds_alternative<gpu::ConvStep>(step.action) ||
                           std::holds_alternative<gpu::PoolStep>(step.action);
      if (library) {
        EXPECT_EQ(step.stream.lane, StreamLane::kCompute) << strategy;
      }
    }
  }
}

TEST(PlanCompiler, DeviceBytesCountEveryBufferOnItsDeviceAndNoPinnedHostMemory) {
  gpu::DeviceProgram program;
  program.devices = 3;
  for (const auto& [device, elements] : std::vector<std::pair<int, int64_t>>{{0, 10}, {1, 3}, {0, 5}, {-1, 100}}) {
    gpu::BufferSpec buffer;
    buffer.device = device;
    buffer.elements = elements;
    program.buffers.push_back(buffer);
  }
  // float32: device 0 holds 4·(10 + 5) = 60 B, device 1 4·3 = 12 B, device 2 nothing; the 400 B
  // of pinned host memory (device -1) belong to no device.
  EXPECT_EQ(gpu::device_bytes(program), (std::vector<int64_t>{60, 12, 0}));
}

}  // namespace
}  // namespace plan_compiler_test
}  // namespace splitscope::testing

namespace splitscope::testing {
namespace plan_compiler_test {
namespace {

// Plan::schedule is authoritative: a last stage that runs its micro-batches
// in reverse gets its compute steps issued in that order (a stream runs what
// it is given in order), and computes the same output.
TEST(PlanCompiler, ComputeStreamsFollowTheSchedule) {
  const Plan original = make_plan(zoo_graph("mlp-small"), "pipeline", 2, 3);
  Plan reordered = original;
  auto& last_stage = reordered.schedule[1];
  std::stable_sort(last_stage.begin(), last_stage.end(),
                   [&](int a, int b) { return reordered.op(a).microbatch > reordered.op(b).microbatch; });
  ASSERT_NE(last_stage, original.schedule[1]);
  const DeviceProgram program = gpu::compile_plan(reordered, CompileOptions{});
  for (int device = 0; device < 2; ++device) {
    std::vector<int> issued;
    for (const gpu::Step& step : program.steps) {
      if (!(step.stream == gpu::StreamId{device, StreamLane::kCompute})) continue;
      const int op = program.spans[static_cast<size_t>(step.span)].op;
      if (issued.empty() || issued.back() != op) issued.push_back(op);
    }
    EXPECT_EQ(issued, reordered.schedule[static_cast<size_t>(device)]) << "device " << device;
  }
  const Interpretation before = interpret(original, gpu::compile_plan(original, CompileOptions{}), 3);
  const Interpretation after = interpret(reordered, program, 3);
  EXPECT_EQ(relative_error(after.output, before.output), 0.0);
}

}  // namespace
}  // namespace plan_compiler_test
}  // namespace splitscope::testing
