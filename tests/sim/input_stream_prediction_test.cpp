// The simulator behind an input pipeline: each step's preparation, copy and
// compute priced from the options and the machine, and the steady-state step
// against its closed form (exec/input_pipeline.hpp): P + C + X without
// prefetch, max(X, P + C) with one batch ahead, max(X, P, C) with more.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "hand_plan.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "partitioners/partitioner.hpp"
#include "sim/costs/input_copy_cost.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace input_stream_prediction_test {
namespace {

using testing::switch_topology;
using testing::test_machine;

// Batch 8 of 1024 floats: 32 KiB of input a step.
const char* const kNet =
    R"({"batch": 8, "input": [1024], "layers": [{"type": "dense", "units": 1024}, {"type": "dense", "units": 1024}]})";
constexpr double kInputBytes = 8.0 * 1024 * 4;

Plan plan_on(int devices, const std::string& strategy) {
  const auto graph = std::make_shared<const Graph>(lower(parse_model_text(kNet, "net.json")));
  PartitionOptions options;
  options.devices = devices;
  return make_partitioner(strategy)->partition(graph, options);
}

/// A 1 TFLOP/s machine whose host link moves 1 GB/s after 2 µs.
Machine machine_with_host_link(int devices) {
  Machine machine = test_machine(devices, switch_topology(100, 1));
  machine.host_link = LinkSpec{1.0, 2.0, LinkProtocol::kAchieved};
  return machine;
}

InputPipelineInfo predict(const Machine& machine, const Plan& plan, double cost_us_per_sample, int prefetch) {
  InputPipelineOptions input;
  input.enabled = true;
  input.cost_us_per_sample = cost_us_per_sample;
  input.prefetch = prefetch;
  RunOptions options;
  options.warmup = 1;
  options.repeats = 3;
  const RunResult result = Simulator(machine).run_input_stream(plan, options, input);
  EXPECT_EQ(result.timelines.size(), 3u);
  EXPECT_FALSE(result.info.measured);
  return result.info.input_pipeline.value();
}

TEST(InputStreamPrediction, StepTimesMatchTheClosedFormsOfEachPrefetchDepth) {
  const Machine machine = machine_with_host_link(1);
  const Plan plan = plan_on(1, "single");
  const double compute = Simulator(machine).simulate(plan).makespan_us();
  const double copy = 2.0 + kInputBytes / 1e9 * 1e6;  // 2 µs + 32,768 B at 1 GB/s = 34.768 µs
  for (double cost : {1.0, 10.0, 40.0}) {
    SCOPED_TRACE(cost);
    const double prepare = cost * 8;
    const InputPipelineInfo none = predict(machine, plan, cost, 0);
    EXPECT_NEAR(none.prepare_us, prepare, 1e-9);
    EXPECT_NEAR(none.copy_us, copy, 1e-9);
    EXPECT_NEAR(none.compute_us, compute, 1e-9);
    EXPECT_NEAR(none.step_us, prepare + copy + compute, 1e-9);
    EXPECT_TRUE(none.input_bound);
    EXPECT_NEAR(predict(machine, plan, cost, 1).step_us, std::max(compute, prepare + copy), 1e-9);
    for (int deeper : {2, 3}) {
      EXPECT_NEAR(predict(machine, plan, cost, deeper).step_us, std::max({compute, prepare, copy}), 1e-9);
    }
  }
}

TEST(InputStreamPrediction, EachDeviceCopiesItsInputsOverItsOwnHostLink) {
  // A neuron split reads the whole input on both devices, side by side.
  Machine machine = machine_with_host_link(2);
  const auto copies = price_input_copies(machine, network_input_copies(plan_on(2, "vertical")));
  ASSERT_EQ(copies.size(), 2u);
  for (const InputCopy& copy : copies) EXPECT_NEAR(copy.us, 2.0 + kInputBytes / 1e3, 1e-9);
  // Without a host link, a host-staged machine's devices queue on their shared bus.
  machine.host_link.reset();
  machine.topology = testing::host_staged_topology(2, 1.0, 2.0);
  const auto staged = price_input_copies(machine, network_input_copies(plan_on(2, "vertical")));
  ASSERT_EQ(staged.size(), 2u);
  EXPECT_NEAR(staged[0].us, 2.0 + kInputBytes / 1e3 / machine.topology.bus.payload_bytes_per_second(
                                                          LinkTraffic::kReadCompletions) * 1e9,
              1e-6);
  EXPECT_NEAR(staged[1].us - 2.0, 2 * (staged[0].us - 2.0), 1e-6);
  // Placed on machine devices 0 and 2, behind two buses, they copy side by side.
  machine.topology = testing::host_staged_topology(2, 1.0, 2.0);
  const auto apart = price_input_copies(machine, network_input_copies(plan_on(2, "vertical")), {0, 2});
  ASSERT_EQ(apart.size(), 2u);
  EXPECT_NEAR(apart[1].us, apart[0].us, 1e-9);
  EXPECT_NEAR(apart[0].us, staged[0].us, 1e-9);
}

TEST(InputStreamPrediction, AMachineThatDoesNotSayHowFastItsHostLinkIsIsRefused) {
  Machine machine = test_machine(1, switch_topology(100, 1));
  machine.name = "bare";
  InputPipelineOptions input;
  input.enabled = true;
  input.prefetch = 1;
  try {
    Simulator(machine).run_input_stream(plan_on(1, "single"), RunOptions{}, input);
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_EQ(error.field(), "host_link");
    EXPECT_NE(error.problem().find("machine 'bare'"), std::string::npos) << error.what();
  }
}

TEST(InputStreamPrediction, PresetsAndCalibratedMachinesSayHowFastTheirHostLinksAre) {
  for (const char* name : {"h100-nvlink-8", "a100-nvlink-8", "2x8-h100-ib", "cpu-2", "h200", "h100-80gb-hbm3-v4"}) {
    SCOPED_TRACE(name);
    const Machine machine = load_machine(name);
    ASSERT_TRUE(machine.host_link.has_value());
    EXPECT_GT(machine.host_link->bandwidth_gbps, 1.0);
  }
  // A PCIe Gen5 x16 link carries 63 GB/s minus the protocol's overhead.
  const Machine dgx = load_machine("h100-nvlink-8");
  EXPECT_EQ(dgx.host_link->protocol, LinkProtocol::kPcie);
  EXPECT_DOUBLE_EQ(dgx.host_link->bandwidth_gbps, 63.0);
}

}  // namespace
}  // namespace input_stream_prediction_test
}  // namespace splitscope
