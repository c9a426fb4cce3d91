// The cpu backend's half-precision storage (exec/cpu/precision_rounding.hpp,
// stored_precision.hpp): rounding to bfloat16 and float16 against
// hand-computed bit patterns, the update's masters, the weights as made, and
// a run whose every stored output is a value of its format.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/cpu/cpu_run_memory.hpp"
#include "exec/cpu/precision_rounding.hpp"
#include "exec/cpu/stored_precision.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "exec/output_compare.hpp"
#include "ir/training.hpp"
#include "naive_reference.hpp"
#include "partitioners/partitioner.hpp"

namespace splitscope {
namespace precision_storage_test {
namespace {

uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }

TEST(RoundToBfloat16, KeepsEightSignificandBitsTiesToEven) {
  // bfloat16 steps by 2^-7 in [1, 2).
  EXPECT_EQ(bits(round_to_bfloat16(1.0f + 0x1p-8f)), 0x3F800000u);  // halfway: to the even 1.0
  EXPECT_EQ(bits(round_to_bfloat16(1.0f + 3 * 0x1p-8f)), 0x3F820000u);  // halfway 1+2^-7 / 1+2^-6: even 1+2^-6
  EXPECT_EQ(bits(round_to_bfloat16(1.0f + 0x1p-8f + 0x1p-20f)), 0x3F810000u);  // past halfway: up to 1+2^-7
  EXPECT_EQ(bits(round_to_bfloat16(-(1.0f + 0x1p-8f))), 0xBF800000u);
  EXPECT_EQ(bits(round_to_bfloat16(0.1f)), 0x3DCD0000u);  // 0x3DCCCCCD rounds up its low half
  // The largest bfloat16 is 0x7F7F0000; halfway above it ties to the even 0x7F80: infinity.
  EXPECT_EQ(bits(round_to_bfloat16(std::bit_cast<float>(0x7F7F7FFFu))), 0x7F7F0000u);
  EXPECT_EQ(bits(round_to_bfloat16(std::bit_cast<float>(0x7F7F8000u))), 0x7F800000u);
  EXPECT_TRUE(std::isnan(round_to_bfloat16(std::bit_cast<float>(0x7F800001u))));  // a NaN with low bits only
  EXPECT_EQ(round_to_bfloat16(-std::numeric_limits<float>::infinity()), -std::numeric_limits<float>::infinity());
  // float32's subnormals round on the same 16 low bits: 0x8001 is past halfway, up to 0x00010000.
  EXPECT_EQ(bits(round_to_bfloat16(std::bit_cast<float>(0x00008001u))), 0x00010000u);
}

TEST(RoundToFloat16, KeepsElevenBitsOverflowsAt65520AndHasSubnormals) {
  // float16 steps by 2^-10 in [1, 2).
  EXPECT_EQ(round_to_float16(1.0f + 0x1p-11f), 1.0f);             // halfway: the even 1.0
  EXPECT_EQ(round_to_float16(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);  // halfway: the even 1 + 2^-9
  EXPECT_EQ(round_to_float16(0.1f), 0.0999755859375f);             // 0x2E66: 1638 · 2^-14
  // The largest float16 is 65504 (2047 · 32); 65520 is halfway to 65536, which it cannot hold.
  EXPECT_EQ(round_to_float16(65504.0f), 65504.0f);
  EXPECT_EQ(round_to_float16(65519.996f), 65504.0f);
  EXPECT_EQ(round_to_float16(65520.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(round_to_float16(-65520.0f), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(round_to_float16(1e10f), std::numeric_limits<float>::infinity());
  // Subnormals: steps of 2^-24 below the smallest normal 2^-14.
  EXPECT_EQ(round_to_float16(0x1p-24f), 0x1p-24f);       // the smallest subnormal
  EXPECT_EQ(round_to_float16(0x1p-25f), 0.0f);           // halfway to 0: the even 0
  EXPECT_EQ(round_to_float16(0x1.8p-25f), 0x1p-24f);     // past halfway
  EXPECT_EQ(round_to_float16(3 * 0x1p-25f), 2 * 0x1p-24f);  // 1.5 steps: the even 2
  EXPECT_EQ(round_to_float16(-0x1p-26f), 0.0f);
  EXPECT_TRUE(std::signbit(round_to_float16(-0x1p-26f)));  // -0
  EXPECT_EQ(round_to_float16(0x1p-14f - 0x1p-25f), 0x1p-14f);  // 1023.5 steps: the even 1024, the smallest normal
  EXPECT_EQ(round_to_float16(0x1p-14f + 0x1p-25f), 0x1p-14f);  // a normal's step there is 2^-24
  EXPECT_TRUE(std::isnan(round_to_float16(std::numeric_limits<float>::quiet_NaN())));
}

TEST(RoundInPlace, FollowsTheFormatAndLeavesFloat32Alone) {
  std::vector<float> values = {1.0f + 0x1p-9f, 70000.0f};
  round_in_place(NumberFormat::kFloat32, values);
  EXPECT_EQ(values[0], 1.0f + 0x1p-9f);
  round_in_place(NumberFormat::kFloat16, values);
  EXPECT_EQ(values[0], 1.0f + 0x1p-9f);  // float16 holds it
  EXPECT_EQ(values[1], std::numeric_limits<float>::infinity());
  values = {1.0f + 0x1p-9f};
  round_in_place(NumberFormat::kBfloat16, values);
  EXPECT_EQ(values[0], 1.0f);  // bfloat16 does not
}

TEST(StoredFormats, FollowThePrecisionTable) {
  EXPECT_TRUE(stored_formats(Precision::kFp32).all_float32());
  EXPECT_TRUE(stored_formats(Precision::kTf32).all_float32());  // tf32 stores float32
  const StoredFormats bf16 = stored_formats(Precision::kBf16);
  EXPECT_EQ(bf16.optimizer_state, NumberFormat::kBfloat16);
  EXPECT_FALSE(bf16.keeps_masters);
  EXPECT_EQ(stored_formats(Precision::kFp16).weight, NumberFormat::kFloat16);
  const StoredFormats amp = stored_formats(Precision::kAmp);
  EXPECT_EQ(amp.activation, NumberFormat::kBfloat16);
  EXPECT_EQ(amp.weight, NumberFormat::kBfloat16);
  EXPECT_EQ(amp.gradient, NumberFormat::kBfloat16);
  EXPECT_EQ(amp.optimizer_state, NumberFormat::kFloat32);
  EXPECT_TRUE(amp.keeps_masters);
}

// Why amp keeps float32 masters: an update smaller than half a bfloat16 step
// of the weight is lost when the weight itself is stored in bfloat16.
TEST(StoreUpdate, PureBfloat16LosesSmallUpdatesThatMastersKeep) {
  // Below 1.0 bfloat16 steps by 2^-8 = 0.00390625: 1 - 0.001 rounds back to 1.
  WeightSlice pure{{{1.0f - 0.001f}}};
  std::vector<float> state = {0.3f};
  store_update(stored_formats(Precision::kBf16), pure, pure, state);
  EXPECT_EQ(pure.tensors[0][0], 1.0f);
  EXPECT_EQ(state[0], round_to_bfloat16(0.3f));

  // amp: four such steps on the master reach 0.996, and the copy 1 - 2^-8.
  WeightSlice masters{{{1.0f}}};
  WeightSlice copy{{{1.0f}}};
  std::vector<float> amp_state = {0.3f};
  for (int step = 1; step <= 4; ++step) {
    masters.tensors[0][0] -= 0.001f;
    store_update(stored_formats(Precision::kAmp), masters, copy, amp_state);
    EXPECT_EQ(copy.tensors[0][0], step < 2 ? 1.0f : 1.0f - 0x1p-8f) << "step " << step;  // 0.998 is nearer 1 - 2^-8
  }
  EXPECT_NEAR(masters.tensors[0][0], 0.996f, 1e-6f);
  EXPECT_EQ(amp_state[0], 0.3f);  // float32 state
}

const char* const kTinyNet = R"({"name": "tiny", "batch": 4, "input": [4], "layers": [
    {"type": "dense", "units": 3, "activation": "relu"},
    {"type": "dense", "units": 2},
    {"type": "softmax"}]})";

TEST(WeightStore, AmpMakesABfloat16CopyOfFloat32Masters) {
  const auto graph = std::make_shared<const Graph>(
      training_graph(*testing_support::graph_from_json(kTinyNet), Optimizer{}));
  const Plan plan = make_plan(*make_partitioner("single"), graph, PartitionOptions{});
  SerialFor serial;
  WeightStore fp32(*graph, 7, serial);
  WeightStore amp(*graph, 7, serial, Precision::kAmp);
  WeightStore bf16(*graph, 7, serial, Precision::kBf16);
  int rounded_away = 0;
  for (int id : plan.parameters) {
    const Value& params = plan.value(id);
    const auto made = fp32.get(params);
    const auto masters = amp.masters(params);
    const auto copy = amp.get(params);
    ASSERT_NE(masters.get(), copy.get());
    EXPECT_EQ(fp32.masters(params).get(), made.get());  // no masters apart at fp32
    for (size_t t = 0; t < made->tensors.size(); ++t) {
      for (size_t i = 0; i < made->tensors[t].size(); ++i) {
        const float w = made->tensors[t][i];
        EXPECT_EQ(masters->tensors[t][i], w);
        EXPECT_EQ(copy->tensors[t][i], round_to_bfloat16(w));
        EXPECT_EQ(bf16.get(params)->tensors[t][i], round_to_bfloat16(w));
        rounded_away += round_to_bfloat16(w) != w;
      }
    }
  }
  EXPECT_GT(rounded_away, 0) << "the seed's weights hold more than bfloat16's bits";
}

TEST(WeightStore, AnAmpInferenceRunKeepsNoMasters) {
  const auto graph = testing_support::graph_from_json(kTinyNet);  // no --train: no update to keep them for
  const Plan plan = make_plan(*make_partitioner("single"), graph, PartitionOptions{});
  SerialFor serial;
  WeightStore amp(*graph, 7, serial, Precision::kAmp);
  const Value& params = plan.value(plan.parameters.front());
  EXPECT_EQ(amp.masters(params).get(), amp.get(params).get());
  EXPECT_EQ(amp.get(params)->tensors[0][0], round_to_bfloat16(amp.get(params)->tensors[0][0]));
}

// Every value the run stores, its output included, is a value of the format;
// and it stays as close to the float32 run as the format's rounding allows.
TEST(CpuExecutor, HalfPrecisionRunsStoreEveryOutputInTheirFormat) {
  const auto graph = testing_support::graph_from_json(R"({"name": "small", "batch": 6, "input": [24], "layers": [
      {"type": "dense", "units": 32, "activation": "relu"},
      {"type": "dense", "units": 16, "activation": "tanh"},
      {"type": "dense", "units": 5}]})");
  RunOptions options;
  options.warmup = 0;
  options.repeats = 1;
  options.seed = 5;
  const auto output_at = [&](Precision precision, const char* strategy) {
    PartitionOptions partition;
    partition.devices = std::string(strategy) == "single" ? 1 : 2;
    partition.precision = precision;
    return CpuExecutor().run(make_plan(*make_partitioner(strategy), graph, partition), options).output;
  };
  const HostTensor fp32 = output_at(Precision::kFp32, "single");
  int fp32_off_grid = 0;
  for (float y : fp32.data) fp32_off_grid += round_to_bfloat16(y) != y;
  EXPECT_GT(fp32_off_grid, 0);
  struct Case {
    Precision precision;
    NumberFormat format;
    double unit;  // the format's relative rounding unit, 2^-(significand bits)
  };
  for (const Case& c : {Case{Precision::kBf16, NumberFormat::kBfloat16, 0x1p-8},
                        Case{Precision::kFp16, NumberFormat::kFloat16, 0x1p-11},
                        Case{Precision::kAmp, NumberFormat::kBfloat16, 0x1p-8}}) {
    for (const char* strategy : {"single", "tensor", "data"}) {
      const HostTensor out = output_at(c.precision, strategy);
      for (float y : out.data) ASSERT_EQ(round_to(c.format, y), y) << to_string(c.precision) << " " << strategy;
      // Inputs, weights and three layers' outputs each rounded once, their
      // errors summed over the products: within a few units relative to the
      // output's scale (measured: 0.66 to 0.83 units in these nine cases).
      EXPECT_LE(compare_outputs(out, fp32).max_relative_error, 4 * c.unit) << to_string(c.precision) << " " << strategy;
    }
  }
}

// The memory check before a run counts what the cpu backend holds: a float32
// slot for every element whatever the plan stores it in, and under amp the
// masters beside the weights. Weights: 6x7 + 7 and 7x4 + 4, 81 in all.
TEST(CpuRunMemory, HalfPrecisionHoldsFloat32SlotsAndAmpItsMastersToo) {
  const auto forward = testing_support::graph_from_json(R"({"name": "dense", "batch": 5, "input": [6], "layers": [
      {"type": "dense", "units": 7, "activation": "tanh"}, {"type": "dense", "units": 4}]})");
  Optimizer adam;
  adam.kind = OptimizerKind::kAdam;
  adam.learning_rate = 0.01;
  adam.momentum = 0;
  const auto training = std::make_shared<const Graph>(training_graph(*forward, adam));
  const auto memory_at = [&](Precision precision) {
    PartitionOptions options;
    options.precision = precision;
    return cpu_run_memory(make_plan(*make_partitioner("single"), training, options), 1);
  };
  const CpuRunMemory fp32 = memory_at(Precision::kFp32);
  const CpuRunMemory bf16 = memory_at(Precision::kBf16);
  const CpuRunMemory amp = memory_at(Precision::kAmp);
  EXPECT_EQ(bf16.total(), fp32.total());
  PartitionOptions inference;
  inference.precision = Precision::kAmp;
  EXPECT_EQ(cpu_run_memory(make_plan(*make_partitioner("single"), forward, inference), 1).weights, 81 * 4)
      << "an inference run at amp keeps no masters";
  EXPECT_EQ(amp.weights, 2 * 81 * 4);  // the bf16 copy's slots and the masters
  EXPECT_EQ(amp.gradients, 81 * 4);
  EXPECT_EQ(amp.optimizer_state, 2 * 81 * 4);
  EXPECT_EQ(amp.output, 5 * 4 * 4);
  EXPECT_EQ(amp.activations, fp32.activations);
  EXPECT_EQ(amp.total(), fp32.total() + 81 * 4);
}

}  // namespace
}  // namespace precision_storage_test
}  // namespace splitscope
