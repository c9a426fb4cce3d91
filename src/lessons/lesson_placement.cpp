// Claim 10: the devices that communicate the most should be on the same
// machine. On several nodes, a plan whose heavy-traffic devices straddle a
// node boundary under the default mapping (plan device i on machine device
// i) runs against the same plan under topology placement
// (docs/placement.md), which puts the devices that exchange the most bytes
// in one node. It flips at the NIC bandwidth from which the bytes that cross
// nodes cost too little for the placement to gain 5%.

#include <fmt/format.h>

#include "lessons/experiment.hpp"
#include "lessons/lesson_list.hpp"
#include "lessons/margins.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {
namespace {

/// One plan simulated under topology placement; the simulator also runs it
/// under the default mapping where the two differ (RunInfo::placement).
struct PlacementTrial {
  double topology_us = 0;
  double default_us = 0;
  int64_t topology_cross_node_bytes = 0;
  int64_t default_cross_node_bytes = 0;
  std::vector<int> device_map;

  double speedup() const { return default_us / topology_us; }
};

PlacementTrial simulate_placement_trial(const Plan& plan, const Machine& machine) {
  Simulator simulator(machine, PlacementMode::kTopology);
  RunOptions run;
  run.warmup = 0;
  run.repeats = 1;
  const RunResult result = simulator.run(plan, run);
  const PlacementInfo& placement = result.info.placement;
  PlacementTrial trial;
  trial.topology_us = result.timelines.at(0).makespan_us();
  trial.default_us = placement.default_makespan_us.value_or(trial.topology_us);
  trial.topology_cross_node_bytes = placement.cross_node_bytes;
  trial.default_cross_node_bytes = placement.default_cross_node_bytes.value_or(placement.cross_node_bytes);
  trial.device_map = placement.device_map;
  return trial;
}

std::string placement_device_map_text(const std::vector<int>& device_map) {
  std::string text;
  for (int device : device_map) text += (text.empty() ? "" : ",") + std::to_string(device);
  return text;
}

}  // namespace

LessonResult lesson_placement(const LessonSettings& settings) {
  // Two nodes of 8 by default: placement knows nodes only (docs/placement.md).
  const std::string machine_name = settings.machine.empty() ? "2x8-h100-ib" : settings.machine;
  const Machine machine = load_machine(machine_name);
  // AlexNet's channel split over 12 devices: most bytes flow within devices
  // 0-4 and within 5-11, and the default mapping cuts the second group at 8.
  constexpr int kDevices = 12;
  const auto graph = lesson_graph("cnn", false);
  PartitionOptions options;
  options.devices = kDevices;
  const Plan plan = make_plan(*make_partitioner("vertical"), graph, options);
  check(plan);
  const PlacementTrial trial = simulate_placement_trial(plan, machine);
  const double speedup = trial.speedup();

  LessonResult result;
  result.setup = fmt::format("cnn (AlexNet), vertical over {} devices of {}, forward, default placement against "
                             "--placement topology",
                             kDevices, machine_name);
  result.verdict = speedup >= kGainMargin ? LessonVerdict::kHolds
                   : speedup > 1 - kUncertainMargin ? LessonVerdict::kUncertain
                                                    : LessonVerdict::kDoesNotHold;
  result.why = fmt::format(
      "placing the heaviest talkers in one node moves {:.1f} MiB across nodes instead of {:.1f} MiB, and the run takes "
      "{:.3f} ms instead of {:.3f} ms ({:.2f}x)",
      static_cast<double>(trial.topology_cross_node_bytes) / (1 << 20),
      static_cast<double>(trial.default_cross_node_bytes) / (1 << 20), trial.topology_us / 1e3,
      trial.default_us / 1e3, speedup);
  result.numbers = {{"default_ms", trial.default_us / 1e3},
                    {"topology_ms", trial.topology_us / 1e3},
                    {"speedup", speedup},
                    {"default_cross_node_bytes", trial.default_cross_node_bytes},
                    {"topology_cross_node_bytes", trial.topology_cross_node_bytes},
                    {"device_map", placement_device_map_text(trial.device_map)},
                    {"nic_gbps", machine.topology.nic.bandwidth_gbps}};
  FlipSearch search;
  search.parameter = "NIC bandwidth";
  search.unit = "GB/s";
  search.low = 1;
  search.high = 100000;
  search.quantity = "topology placement's speedup";
  search.threshold = kGainMargin;
  search.reaches = false;
  search.meaning =
      fmt::format("from this NIC rate up, topology placement no longer gains {:.0f}%", (kGainMargin - 1) * 100);
  result.flip = find_flip_point(search, [&](double gbps) {
    Machine faster = machine;
    faster.topology.nic.bandwidth_gbps = gbps;
    return simulate_placement_trial(plan, faster).speedup();
  });
  result.figures.bars.push_back(
      {"one pass", "ms", {{"default placement", trial.default_us / 1e3}, {"topology placement", trial.topology_us / 1e3}}});
  result.figures.bars.push_back({"bytes across nodes", "MiB",
                                 {{"default placement", static_cast<double>(trial.default_cross_node_bytes) / (1 << 20)},
                                  {"topology placement",
                                   static_cast<double>(trial.topology_cross_node_bytes) / (1 << 20)}}});
  return result;
}

}  // namespace splitscope
