// What a CPU run is set up with: threads, host facts, weight slices, inputs.

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "exec/cpu/host_info.hpp"
#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/thread_config.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "hand_plan.hpp"
#include "ir/params.hpp"
#include "naive_reference.hpp"
#include "partitioners/partitioner.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace setup_test {
namespace {

RunOptions threads(int inter, int intra) {
  RunOptions options;
  options.inter_op_threads = inter;
  options.intra_op_threads = intra;
  return options;
}

TEST(ThreadConfig, DefaultsFillTheMachineOncePerDevice) {
  // 16 hardware threads, 4 devices: one worker per device, 16 / 4 = 4 threads per op.
  ThreadConfig c = resolve_threads(threads(0, 0), 4, 16);
  EXPECT_EQ(c.inter_op, 4);
  EXPECT_EQ(c.intra_op, 4);
  // 2 hardware threads, 3 devices: 2 / 3 rounds to 0, so 1.
  c = resolve_threads(threads(0, 0), 3, 2);
  EXPECT_EQ(c.intra_op, 1);
  // Fewer workers than devices: they share; each op gets more threads.
  c = resolve_threads(threads(2, 0), 4, 16);
  EXPECT_EQ(c.inter_op, 2);
  EXPECT_EQ(c.intra_op, 8);
  EXPECT_EQ(describe_inter_op(c, threads(2, 0)), "2");
  // More than the devices is capped, and says so.
  c = resolve_threads(threads(6, 3), 2, 16);
  EXPECT_EQ(c.inter_op, 2);
  EXPECT_EQ(c.intra_op, 3);
  EXPECT_TRUE(c.inter_op_capped);
  EXPECT_EQ(describe_inter_op(resolve_threads(threads(0, 0), 3, 8), threads(0, 0)), "3 (one per device)");
  EXPECT_THROW(resolve_threads(threads(-1, 0), 2, 4), InputError);
  EXPECT_THROW(resolve_threads(threads(0, -2), 2, 4), InputError);
}

TEST(ThreadConfig, RefusesMoreThreadsThanTheMachineCanSensiblyRun) {
  // At most max(256, 16 · hardware threads) in all: 2 hardware threads allow 256, 32 allow 512.
  EXPECT_NO_THROW(resolve_threads(threads(0, 128), 2, 2));   // 2 × 128 = 256
  EXPECT_THROW(resolve_threads(threads(0, 129), 2, 2), InputError);  // 258
  EXPECT_NO_THROW(resolve_threads(threads(0, 64), 8, 32));   // 8 × 64 = 512
  EXPECT_THROW(resolve_threads(threads(0, 65), 8, 32), InputError);
  // Devices alone (one worker each, one thread per op) hit it too, and the message names --devices.
  try {
    resolve_threads(threads(0, 0), 300, 2);
    FAIL() << "300 workers on 2 hardware threads";
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), "--devices") << error.what();
  }
}

TEST(HostInfo, ReadsTheModelName) {
  EXPECT_EQ(cpu_model_from_cpuinfo("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6338\n"),
            "Intel(R) Xeon(R) Gold 6338");
  EXPECT_EQ(cpu_model_from_cpuinfo("processor : 0\n"), "");
  const HostInfo info = read_host_info();
  EXPECT_FALSE(info.cpu_model.empty());
  EXPECT_GE(info.hardware_threads, 1);
  EXPECT_GT(info.memory_bytes, 0);
  EXPECT_GE(info.last_level_cache_bytes, 0);
}

TEST(HostInfo, ReadsSysfsCacheSizes) {
  EXPECT_EQ(cache_size_bytes("32768K"), int64_t{32} << 20);
  EXPECT_EQ(cache_size_bytes("1M\n"), int64_t{1} << 20);
  EXPECT_EQ(cache_size_bytes("512"), 512);
  EXPECT_EQ(cache_size_bytes("2G"), int64_t{2} << 30);
  EXPECT_EQ(cache_size_bytes(""), 0);
  EXPECT_EQ(cache_size_bytes("big"), 0);
  EXPECT_EQ(cache_size_bytes("12Q"), 0);
  EXPECT_EQ(cache_size_bytes("-4K"), 0);
}

TEST(WeightSlices, AreTheirElementsOfTheWholeTensors) {
  const auto graph = testing_support::graph_from_json(R"({"batch": 2, "input": [2, 5], "layers": [
      {"type": "lstm", "hidden": 4, "return_sequences": false},
      {"type": "dense", "units": 6}]})");
  // Nodes: 0, 1 step inputs; 2, 3 cells; 4 dense.
  const NodeId cell = 3, dense = 4;
  IntraOpPool pool(3);
  const auto cell_params = param_tensors(*graph, cell);
  const int cell_key = graph->node(cell).param_key;
  // Units [1, 3) of 4: column g·2 + u of the slice is column g·4 + 1 + u of the whole.
  const WeightSlice w = materialise_weights(*graph, cell, {{0, 2}, {1, 3}, {0, 5}}, 9, pool);
  ASSERT_EQ(w.tensors[kInputWeight].size(), 5u * 4 * 2);
  for (int64_t row = 0; row < 5; ++row) {
    for (int64_t g = 0; g < 4; ++g) {
      for (int64_t u = 0; u < 2; ++u) {
        EXPECT_EQ(w.tensors[kInputWeight][static_cast<size_t>(row * 8 + g * 2 + u)],
                  param_value(9, cell_key, kInputWeight, row * 16 + g * 4 + 1 + u, cell_params[kInputWeight].scale));
      }
    }
  }
  EXPECT_EQ(w.tensors[kRecurrentWeight].size(), 4u * 4 * 2);
  EXPECT_EQ(w.tensors[kCellBias][3], param_value(9, cell_key, kCellBias, 1 * 4 + 1 + 1, cell_params[kCellBias].scale));
  // A dense slice: rows = the reduce range, columns = the out range; the bias only where the reduction starts.
  const auto dense_params = param_tensors(*graph, dense);
  const int dense_key = graph->node(dense).param_key;
  const WeightSlice first = materialise_weights(*graph, dense, {{0, 2}, {2, 5}, {0, 3}}, 9, pool);
  const WeightSlice second = materialise_weights(*graph, dense, {{0, 2}, {2, 5}, {3, 4}}, 9, pool);
  ASSERT_EQ(first.tensors[kWeight].size(), 3u * 3);
  EXPECT_EQ(first.tensors[kWeight][1 * 3 + 2], param_value(9, dense_key, kWeight, 1 * 6 + 4, dense_params[kWeight].scale));
  EXPECT_EQ(second.tensors[kWeight][0 * 3 + 0], param_value(9, dense_key, kWeight, 3 * 6 + 2, dense_params[kWeight].scale));
  EXPECT_NE(first.data(kBias), nullptr);
  EXPECT_EQ(second.data(kBias), nullptr);
  EXPECT_EQ(first.tensors[kBias][0], param_value(9, dense_key, kBias, 2, dense_params[kBias].scale));
}

// A recurrent layer's steps on one device read one parameter value (the plan
// shares it), and the store materialises each parameter value once.
TEST(WeightStore, SharesASliceAmongTheStepsOfALayer) {
  const auto graph = testing_support::graph_from_json(R"({"batch": 2, "input": [3, 5], "layers": [
      {"type": "gru", "hidden": 4, "return_sequences": false}]})");
  const Plan plan = make_partitioner("vertical")->partition(graph, {2, 1, nullptr});
  std::map<int, std::set<int>> params_of_device;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCompute || graph->node(op.node).kind != OpKind::kGruCell) continue;
    ASSERT_GE(op.params, 0);
    EXPECT_EQ(plan.value(op.params).device, op.device);
    params_of_device[op.device].insert(op.params);
  }
  ASSERT_EQ(params_of_device.size(), 2u);
  for (const auto& [device, params] : params_of_device) EXPECT_EQ(params.size(), 1u) << "device " << device;
  SerialFor serial;
  WeightStore store(*graph, 1, serial);
  const Value& on0 = plan.value(*params_of_device[0].begin());
  const Value& on1 = plan.value(*params_of_device[1].begin());
  EXPECT_EQ(store.get(on0).get(), store.get(on0).get());
  EXPECT_NE(store.get(on0).get(), store.get(on1).get());
  // Two slices of 2 units: Wx 5·3·2 + Wh 4·3·2 + b 3·2 = 60 floats each.
  EXPECT_EQ(store.bytes(), 2 * 60 * 4);
  EXPECT_EQ(on0.bytes + on1.bytes, 2 * 60 * 4);
}

TEST(ValueBuffers, InputsFollowTheNetworkInputLayout) {
  // A step input t of a [T, F] sequence holds x[b, t, :] = input_value(seed, b·T·F + t·F + f).
  const auto graph = testing_support::graph_from_json(R"({"batch": 3, "input": [4, 5], "layers": [
      {"type": "gru", "hidden": 2}]})");
  testing_support::HandPlan hand(graph, "test", 1);
  const int step2 = hand.input(2, 0, {1, 3});  // rows 1 and 2 of step 2
  const Plan plan = hand.plan();
  ValueBuffers buffers(plan);
  fill_network_inputs(plan, 4, buffers);
  const ConstChannelBlock block = std::as_const(buffers).block(step2);
  const HostTensor whole = network_input(*graph, 4);
  ASSERT_EQ(whole.shape, (std::vector<int64_t>{3, 4, 5}));
  for (int64_t row = 0; row < 2; ++row) {
    for (int64_t f = 0; f < 5; ++f) {
      const int64_t b = 1 + row;
      EXPECT_EQ(block.at(row, f)[0], input_value(4, b * 20 + 2 * 5 + f));
      EXPECT_EQ(block.at(row, f)[0], whole.data[static_cast<size_t>(b * 20 + 2 * 5 + f)]);
    }
  }
  EXPECT_EQ(buffers.bytes(), 2 * 5 * 4);
}

}  // namespace
}  // namespace setup_test
}  // namespace splitscope
