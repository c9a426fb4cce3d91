// Parameter-server training predicted (sim/engine/ps_simulation.hpp): a sync step
// against its closed form on a switch, async staleness on equal workers,
// and the shard's link saturating as workers are added.

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "hand_plan.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/training.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_part.hpp"
#include "sim/engine/simulator.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace ps_simulation_test {
namespace {

using testing::switch_topology;
using testing::test_machine;

// Two dense layers of 512: (512·512 + 512)·2 = 525,312 weights, 2.0 MiB.
const char* const kNet = R"({"batch": 64, "input": [512], "layers": [
    {"type": "dense", "units": 512, "activation": "relu"}, {"type": "dense", "units": 512}]})";
constexpr double kWeights = (512.0 * 512 + 512) * 2;

Plan ps_plan(int workers, int shards) {
  const auto forward = std::make_shared<const Graph>(lower(parse_model_text(kNet, "net.json")));
  Optimizer sgd;
  sgd.momentum = 0;
  const auto training = std::make_shared<const Graph>(training_graph(*forward, sgd));
  PartitionOptions options;
  options.devices = workers;
  options.parameter_servers = shards;
  return make_partitioner("ps")->partition(training, options);
}

ParameterServerOptions steps_of(PsMode mode, int steps) {
  ParameterServerOptions options;
  options.mode = mode;
  options.steps = steps;
  return options;
}

TEST(PsSimulation, ASyncStepMatchesItsClosedForm) {
  constexpr int kWorkers = 4;
  constexpr double kGbps = 10, kLatencyUs = 5;
  const Plan plan = ps_plan(kWorkers, 1);
  Simulator simulator(test_machine(kWorkers + 1, switch_topology(kGbps, kLatencyUs)));
  const RunResult result = simulator.run_parameter_server(plan, RunOptions{}, steps_of(PsMode::kSync, 3));
  ASSERT_EQ(result.timelines.size(), 3u);
  const double compute_us = simulator.simulate(device_part(plan, 0).plan).makespan_us();
  const double bytes = kWeights * 4;
  const double link = simulator.topology().links().front().bytes_per_second;
  // N pulls share the shard's port up, then N pushes its port down; the
  // shard sums N gradients in (12 bytes a weight each) and applies SGD (12 bytes a weight)
  // at 1000 GB/s.
  const double move_us = kWorkers * bytes / link * 1e6;
  const double shard_us = (kWorkers + 1) * 12 * kWeights / 1e12 * 1e6;
  const double step_us = 2 * kLatencyUs + 2 * move_us + compute_us + shard_us;
  for (const Timeline& window : result.timelines) EXPECT_NEAR(window.makespan_us(), step_us, 1e-6 * step_us);
  const ParameterServerInfo& info = result.info.parameter_server.value();
  EXPECT_EQ(info.updates, 3);
  EXPECT_EQ(info.gradients_applied, 3 * kWorkers);
  EXPECT_DOUBLE_EQ(info.staleness_mean, 0);
  EXPECT_FALSE(result.info.measured);
}

TEST(PsSimulation, AsyncStalenessOnEqualWorkersIsAboutNMinusOne) {
  for (int workers : {2, 4, 8}) {
    const Plan plan = ps_plan(workers, 1);
    // Links so fast that the workers never queue on the shard: equal speed.
    Simulator simulator(test_machine(workers + 1, testing::free_links()));
    const RunResult result = simulator.run_parameter_server(plan, RunOptions{}, steps_of(PsMode::kAsync, 30));
    const ParameterServerInfo& info = result.info.parameter_server.value();
    EXPECT_EQ(info.gradients_applied, 30 * workers);
    EXPECT_NEAR(info.staleness_mean, workers - 1, 0.2 * (workers - 1)) << workers << " workers";
    EXPECT_EQ(info.staleness_max, workers - 1) << workers << " workers";
  }
}

TEST(PsSimulation, OneShardsLinkSaturatesAsWorkersAreAdded) {
  // A slow link: moving the weights costs more than computing the batch, and
  // every worker's copies go through the one shard's port.
  double previous_step_us = 0;
  for (int workers : {2, 4, 8}) {
    const Plan plan = ps_plan(workers, 1);
    Simulator simulator(test_machine(workers + 1, switch_topology(1, 5)));
    const RunResult result = simulator.run_parameter_server(plan, RunOptions{}, steps_of(PsMode::kSync, 2));
    const double step_us = result.timelines.back().makespan_us();
    // Twice the workers: each computes half the rows, but the shard's port carries twice the bytes.
    if (previous_step_us > 0) {
      EXPECT_GT(step_us, 1.8 * previous_step_us) << workers << " workers";
    }
    previous_step_us = step_us;
  }
}

TEST(PsSimulation, RefusesATopologyPlacement) {
  const Plan plan = ps_plan(2, 1);
  Simulator simulator(test_machine(3, switch_topology(10, 5)), PlacementMode::kTopology);
  EXPECT_THROW(simulator.run_parameter_server(plan, RunOptions{}, steps_of(PsMode::kSync, 1)), InputError);
}

}  // namespace
}  // namespace ps_simulation_test
}  // namespace splitscope
