// Replicas held once (Plan::replicas) played once: a data-parallel step of
// alike replicas simulated as replica 0 and its all-reduces spanning every
// device takes the time the whole plan takes, and every device's spans are
// replica 0's same device's (timeline.hpp), to within what sets the whole
// plan's replicas apart: a ring all-reduce's chunks differ by an element
// where N does not divide the tensor, so each device of the whole plan
// receives a few bytes more or less, and its NCCL share slows its compute
// for a slightly other time (measured here: at most 1e-5 of the makespan).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/zoo.hpp"
#include "ir/training.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "plan/plan_replicas.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {
namespace replicas_played_once_test {
namespace {

std::shared_ptr<const Graph> training(const std::string& network, int64_t batch) {
  Model model = load_model_file(resolve_zoo_file(ZooShelf::kNetworks, network));
  model.batch = batch;
  return std::make_shared<const Graph>(training_graph(lower(model), Optimizer{}));
}

Plan data_plan(const std::shared_ptr<const Graph>& graph, int devices, int64_t bucket_bytes, bool compact) {
  PartitionOptions options;
  options.devices = devices;
  options.bucket_bytes = bucket_bytes;
  options.compact_replicas = compact;
  return make_plan(*make_partitioner("data"), graph, options);
}

/// Device d's spans, in timeline order.
std::vector<Span> spans_on(const Timeline& timeline, int device) {
  std::vector<Span> spans;
  for (const Span& span : timeline.spans) {
    if (span.device == device) spans.push_back(span);
  }
  return spans;
}

struct Case {
  const char* machine;
  const char* network;
  int devices;
  int64_t batch;
  int64_t bucket_bytes;
};

TEST(ReplicasPlayedOnce, TheSameTimesAsTheWholePlan) {
  // Rings of 4 and 8 run as sends; 16 and 32 as step groups (ring_step_group.hpp),
  // the 16 over two nodes' NICs.
  for (const Case& c : {Case{"h100-nvlink-8", "mlp-small", 4, 64, 0}, Case{"h100-nvlink-8", "cnn-small", 8, 32, 1 << 14},
                        Case{"2x8-h100-ib", "mlp-small", 16, 64, int64_t{25} << 20},
                        Case{"2x8-h100-ib", "cnn-small", 16, 16, 1 << 12},
                        Case{"h100-switch-4096", "residual-small", 32, 64, 1 << 16}}) {
    SCOPED_TRACE(std::string(c.network) + " over " + std::to_string(c.devices) + " of " + c.machine);
    const auto graph = training(c.network, c.batch);
    const Plan compact = data_plan(graph, c.devices, c.bucket_bytes, true);
    ASSERT_TRUE(compact.replicas.has_value());
    check(compact);
    const Plan whole = data_plan(graph, c.devices, c.bucket_bytes, false);
    ASSERT_FALSE(whole.replicas.has_value());
    Simulator simulator(load_machine(c.machine));
    ASSERT_TRUE(simulator.runs_replicas_once(compact, RunOptions{}));
    const Timeline once = simulator.simulate(compact);
    const Timeline every = simulator.simulate(whole);
    EXPECT_EQ(once.replicas, c.devices);
    EXPECT_EQ(once.replica_devices, 1);
    EXPECT_EQ(every.replicas, 1);
    EXPECT_EQ(once.device_count(), c.devices);
    // The same to 2e-5 of the makespan: what sets the whole plan's own devices apart (above;
    // recorded as whole_devices_apart, the same figure as largest_difference_of_makespan).
    const double tolerance = 2e-5 * every.makespan_us();
    EXPECT_NEAR(once.makespan_us(), every.makespan_us(), tolerance);
    EXPECT_GT(once.makespan_us(), 0.0);
    const std::vector<Span> replica_zero = spans_on(once, 0);
    EXPECT_EQ(replica_zero.size(), once.spans.size());
    double largest = std::abs(once.makespan_us() - every.makespan_us());
    for (int device = 0; device < c.devices; ++device) {
      const std::vector<Span> spans = spans_on(every, device);
      ASSERT_EQ(spans.size(), replica_zero.size()) << "device " << device;
      for (size_t i = 0; i < spans.size(); ++i) {
        EXPECT_NEAR(spans[i].start_us, replica_zero[i].start_us, tolerance) << "device " << device << " span " << i;
        EXPECT_NEAR(spans[i].end_us, replica_zero[i].end_us, tolerance) << "device " << device << " span " << i;
        largest = std::max({largest, std::abs(spans[i].start_us - replica_zero[i].start_us),
                            std::abs(spans[i].end_us - replica_zero[i].end_us)});
        EXPECT_EQ(spans[i].kind, replica_zero[i].kind) << "device " << device << " span " << i;
        EXPECT_EQ(spans[i].lane, replica_zero[i].lane) << "device " << device << " span " << i;
        EXPECT_EQ(spans[i].flops, replica_zero[i].flops) << "device " << device << " span " << i;
        // A ring's chunks differ by an element where N does not divide the tensor: each device
        // receives its own bytes in the whole plan, replica 0's are every replica's held once.
        if (device == 0) {
          EXPECT_EQ(spans[i].bytes, replica_zero[i].bytes) << "span " << i;
        }
        // At most one float32 element more or less in each of its 2(N-1) received chunks.
        EXPECT_LE(std::abs(spans[i].bytes - replica_zero[i].bytes), int64_t{8} * (c.devices - 1))
            << "device " << device << " span " << i;
      }
    }
    RecordProperty(std::string(c.network) + "_" + std::to_string(c.devices) + "_largest_difference_of_makespan",
                   std::to_string(largest / every.makespan_us()));
    double among = 0;
    const std::vector<Span> first = spans_on(every, 0);
    for (int device = 1; device < c.devices; ++device) {
      const std::vector<Span> spans = spans_on(every, device);
      for (size_t i = 0; i < spans.size(); ++i) {
        among = std::max({among, std::abs(spans[i].start_us - first[i].start_us), std::abs(spans[i].end_us - first[i].end_us)});
      }
    }
    RecordProperty(std::string(c.network) + "_" + std::to_string(c.devices) + "_whole_devices_apart",
                   std::to_string(among / every.makespan_us()));
  }
}

TEST(ReplicasPlayedOnce, UnevenRowsOrJitterArePlayedWhole) {
  const auto graph = training("mlp-small", 10);
  const Plan uneven = data_plan(graph, 4, 0, true);
  ASSERT_TRUE(uneven.replicas.has_value());
  EXPECT_FALSE(replicas_alike(uneven));
  Simulator simulator(load_machine("h100-nvlink-8"));
  EXPECT_FALSE(simulator.runs_replicas_once(uneven, RunOptions{}));
  const Plan even = data_plan(training("mlp-small", 8), 4, 0, true);
  RunOptions jitter;
  jitter.jitter_sigma = 0.1;
  EXPECT_TRUE(simulator.runs_replicas_once(even, RunOptions{}));
  EXPECT_FALSE(simulator.runs_replicas_once(even, jitter));
  EXPECT_FALSE(Simulator(load_machine("cpu-2")).runs_replicas_once(data_plan(training("mlp-small", 8), 2, 0, true), RunOptions{}));
}

}  // namespace
}  // namespace replicas_played_once_test
}  // namespace splitscope
