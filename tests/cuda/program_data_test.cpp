// Weight slices, network inputs and output assembly, element by element
// against params.hpp's definitions.

#include <gtest/gtest.h>

#include "exec/cuda/plan_compiler.hpp"
#include "exec/cuda/program_data.hpp"
#include "ir/params.hpp"
#include "reference_network.hpp"

namespace splitscope::testing {
namespace program_data_test {
namespace {

using gpu::WeightGather;

TEST(Materialise, DenseBlockIsRowsOfTheReductionAndColumnsOfTheUnits) {
  // W [10][6]; rows [3, 7), columns [2, 5): element (r, c) is W[3 + r][2 + c] = index (3 + r)·6 + 2 + c.
  const WeightGather gather{4, 0, 0.5f, {3, 7}, 6, {{2, 5}}};
  const auto data = gpu::materialise(gather, 9);
  ASSERT_EQ(data.size(), 12u);
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t c = 0; c < 3; ++c) {
      EXPECT_EQ(data[static_cast<size_t>(r * 3 + c)], param_value(9, 4, 0, (3 + r) * 6 + 2 + c, 0.5f));
    }
  }
}

TEST(Materialise, CellSlicePacksEachGatesUnitsGateMajor) {
  // Wx [5][3·4] of a GRU with H = 4; units [1, 3) of each gate: columns g·4 + 1, g·4 + 2.
  const WeightGather gather{2, 1, 0.25f, {0, 5}, 12, {{1, 3}, {5, 7}, {9, 11}}};
  const auto data = gpu::materialise(gather, 1);
  ASSERT_EQ(data.size(), 5u * 6u);
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t g = 0; g < 3; ++g) {
      for (int64_t u = 0; u < 2; ++u) {
        EXPECT_EQ(data[static_cast<size_t>(i * 6 + g * 2 + u)], param_value(1, 2, 1, i * 12 + g * 4 + 1 + u, 0.25f));
      }
    }
  }
}

TEST(Materialise, LargeSlicesFilledOnThreadsMatchTheFormula) {
  // 1100 x 1000 elements: above the threshold where several threads fill it.
  const WeightGather gather{0, 0, 1.0f, {100, 1200}, 2000, {{500, 1500}}};
  const auto data = gpu::materialise(gather, 5);
  ASSERT_EQ(data.size(), 1100u * 1000u);
  for (int64_t r : {0, 1, 549, 550, 1099}) {
    for (int64_t c : {0, 999}) {
      EXPECT_EQ(data[static_cast<size_t>(r * 1000 + c)], param_value(5, 0, 0, (100 + r) * 2000 + 500 + c, 1.0f));
    }
  }
}

TEST(NetworkInput, StepInputHoldsItsRowsOfTheSequence) {
  // lstm-small: input [6 steps][8 features], batch 4. Step input t = 2, rows [1, 3):
  // element (r, f) = x[1 + r, 2, f] = input_value(b·6·8 + 2·8 + f).
  const Plan plan = make_plan(zoo_graph("lstm-small"), "pipeline", 2, 2);
  const Value* step_input = nullptr;
  for (const Value& value : plan.values) {
    const OpNode& node = plan.graph->node(value.node);
    if (value.producer < 0 && node.step == 2 && value.batch.begin == 2) step_input = &value;
  }
  ASSERT_NE(step_input, nullptr);
  ASSERT_EQ(step_input->batch, (Range{2, 4}));
  const auto data = gpu::network_input(plan, *step_input, 13);
  ASSERT_EQ(data.size(), 2u * 8u);
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t f = 0; f < 8; ++f) {
      EXPECT_EQ(data[static_cast<size_t>(r * 8 + f)], input_value(13, (2 + r) * 48 + 2 * 8 + f));
    }
  }
}

TEST(NetworkInput, WholeInputHoldsItsRowsAndChannels) {
  // cnn-small: [3][16][16] per sample, batch 4; rows [2, 4): element e of row r is input_value((2 + r)·768 + e).
  const Plan plan = make_plan(zoo_graph("cnn-small"), "pipeline", 2, 2);
  const Value& input = plan.value(plan.inputs.back());
  ASSERT_EQ(input.batch, (Range{2, 4}));
  ASSERT_EQ(input.channels, (Range{0, 3}));
  const auto data = gpu::network_input(plan, input, 4);
  ASSERT_EQ(data.size(), 2u * 768u);
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t e : {0, 255, 256, 767}) {
      EXPECT_EQ(data[static_cast<size_t>(r * 768 + e)], input_value(4, (2 + r) * 768 + e));
    }
  }
}

TEST(OutputAssembly, ValuesLandAtTheirRowsAndChannels) {
  const Plan plan = make_plan(zoo_graph("mlp-small"), "vertical", 2);
  HostTensor output = gpu::make_output_tensor(plan);
  EXPECT_EQ(output.shape, (std::vector<int64_t>{8, 10}));
  // Fill each output value with a code of (row, channel) and check where it lands.
  for (int id : plan.outputs) {
    const Value& value = plan.value(id);
    std::vector<float> data;
    for (int64_t b = value.batch.begin; b < value.batch.end; ++b) {
      for (int64_t c = value.channels.begin; c < value.channels.end; ++c) data.push_back(float(b * 100 + c));
    }
    gpu::place_output_value(plan, value, data, output);
  }
  for (int64_t b = 0; b < 8; ++b) {
    for (int64_t c = 0; c < 10; ++c) EXPECT_EQ(output.data[static_cast<size_t>(b * 10 + c)], float(b * 100 + c));
  }
}

}  // namespace
}  // namespace program_data_test
}  // namespace splitscope::testing
