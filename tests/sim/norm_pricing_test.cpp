// The simulator prices batch norm, layer norm and dropout through their
// definitions: by the bytes each slice streams, at the device's memory
// bandwidth times the efficiency the machine file gives the kind (a backward
// kind borrows its forward kind's), plus the launch overhead.
#include <gtest/gtest.h>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/training.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/costs/op_cost_model.hpp"

namespace splitscope {
namespace norm_pricing_test {
namespace {

// 1000 GB/s; batch_norm at a quarter of it, layer_norm at half, the rest at the default 0.8.
const char* const kMachine = R"({"name": "m", "devices": 1,
  "device": {"name": "gpu", "peak_tflops": {"fp32": 10}, "memory_bandwidth_GBps": 1000, "memory_GiB": 16,
             "launch_overhead_us": 5, "efficiency": {"default": 0.8, "batch_norm": 0.25, "layer_norm": 0.5}},
  "topology": {"kind": "host-staged", "devices_per_bus": 1, "bus": {"bandwidth_GBps": 12, "latency_us": 10}}})";

TEST(NormPricing, ATrainingStepsNormsArePricedByTheBytesTheirDefinitionsCount) {
  // conv [64, 32, 32] -> batch_norm -> flatten -> dense: batch 8, X = 8·65536·4 = 2,097,152 bytes.
  const Model model = parse_model_text(R"({"batch": 8, "input": [3, 32, 32], "layers": [
      {"type": "conv2d", "filters": 64, "kernel": 3, "padding": 1, "bias": false}, {"type": "batch_norm"},
      {"type": "dropout", "rate": 0.1}, {"type": "flatten"}, {"type": "dense", "units": 16}, {"type": "layer_norm"}]})",
                                       "net.json");
  const Graph training = training_graph(lower(model), Optimizer{});
  const OpCostModel costs(parse_machine_text(kMachine, "m.json"));
  constexpr double kX = 2'097'152;
  constexpr double kLaunch = 5e-6;
  int priced = 0;
  for (NodeId id = 0; id < training.num_nodes(); ++id) {
    const OpNode& node = training.node(id);
    const double seconds = costs.slice_seconds(training, id, full_slice(node, {0, 8}));
    SCOPED_TRACE(node.name);
    switch (node.kind) {
      case OpKind::kBatchNorm:  // read X twice (statistics, normalize) and gamma, beta; write Y
        EXPECT_NEAR(seconds, (2 * kX + 128 * 4 + kX) / (1000e9 * 0.25) + kLaunch, 1e-12);
        ++priced;
        break;
      case OpKind::kBatchNormGradInput:  // X and dY twice, gamma; write dX
        EXPECT_NEAR(seconds, (4 * kX + 64 * 4 + kX) / (1000e9 * 0.25) + kLaunch, 1e-12);
        ++priced;
        break;
      case OpKind::kBatchNormGradWeight:  // X and dY once; write dgamma, dbeta
        EXPECT_NEAR(seconds, (2 * kX + 128 * 4) / (1000e9 * 0.25) + kLaunch, 1e-12);
        ++priced;
        break;
      case OpKind::kDropout:  // forward and backward: read one tensor, write one, at the default
        EXPECT_NEAR(seconds, 2 * kX / (1000e9 * 0.8) + kLaunch, 1e-12);
        ++priced;
        break;
      case OpKind::kLayerNorm:  // 8 rows of 16: read X, gamma, beta; write Y
        EXPECT_NEAR(seconds, (8 * 16 * 4 + 32 * 4 + 8 * 16 * 4) / (1000e9 * 0.5) + kLaunch, 1e-12);
        ++priced;
        break;
      default:
        break;
    }
  }
  EXPECT_EQ(priced, 6);  // batch norm forward and its two gradients, dropout forward and backward, layer norm forward
}

}  // namespace
}  // namespace norm_pricing_test
}  // namespace splitscope
