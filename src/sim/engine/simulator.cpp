#include "sim/engine/simulator.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include <string>
#include <vector>

#include "exec/run_limits.hpp"
#include "ir/ops/op_def.hpp"
#include "sim/engine/ps_simulation.hpp"
#include "plan/plan_traffic.hpp"
#include "sim/engine/engine.hpp"
#include "sim/costs/input_copy_cost.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/costs/model_error.hpp"
#include "sim/network/node_crossing_bytes.hpp"
#include "sim/engine/replica_view.hpp"
#include "plan/plan_replicas.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"

namespace splitscope {
namespace {

Machine checked(Machine machine) {
  check_machine(machine);
  return machine;
}

std::string topology_fact(const Machine& machine) {
  const TopologySpec& topology = machine.topology;
  switch (topology.kind) {
    case TopologyKind::kSwitch:
      return fmt::format("switch: {}, {} GB/s per port and direction, {} µs", counted(machine.devices, "device"),
                         topology.link.bandwidth_gbps, topology.link.latency_us);
    case TopologyKind::kHostStaged:
      return fmt::format("host-staged: {}, {} per bus of {} GB/s per direction, {} µs",
                         counted(machine.devices, "device"), topology.devices_per_bus, topology.bus.bandwidth_gbps,
                         topology.bus.latency_us);
    case TopologyKind::kMultiNode: {
      std::string fact =
          fmt::format("multi-node: {} nodes of {} devices ({} GB/s ports), {} NIC{} per node of {} GB/s",
                      machine.devices / topology.devices_per_node, topology.devices_per_node,
                      topology.link.bandwidth_gbps, topology.nics_per_node, topology.nics_per_node == 1 ? "" : "s",
                      topology.nic.bandwidth_gbps);
      const NetworkSpec& network = topology.network;
      if (network.kind == NetworkKind::kFatTree) {
        fact += fmt::format("; fat tree, {} per leaf, oversubscription {}:1, {} µs per switch hop",
                            counted(network.nodes_per_group, "node"), network.oversubscription,
                            network.hop_latency_us);
      } else if (network.kind == NetworkKind::kRail) {
        fact += fmt::format("; rail-optimised, {} per rail group, oversubscription {}:1, {} µs per switch hop",
                            counted(network.nodes_per_group, "node"), network.oversubscription,
                            network.hop_latency_us);
      }
      return fact;
    }
  }
  return "";
}

/// How the links' line rates become payload rates (link_efficiency.hpp), for links not given as achieved.
std::string link_fact(const Machine& machine) {
  const TopologySpec& topology = machine.topology;
  std::vector<const LinkSpec*> links;
  if (topology.kind == TopologyKind::kHostStaged) links.push_back(&topology.bus);
  if (topology.kind != TopologyKind::kHostStaged) links.push_back(&topology.link);
  if (topology.kind == TopologyKind::kMultiNode) links.push_back(&topology.nic);
  std::string fact;
  for (const LinkSpec* link : links) {
    if (link->protocol == LinkProtocol::kAchieved) continue;
    const double writes = link_efficiency(link->protocol, LinkTraffic::kWrites);
    const double reads = link_efficiency(link->protocol, LinkTraffic::kReadCompletions);
    fact += fmt::format("{}{}: {:.1f}% of the line rate is payload", fact.empty() ? "" : "; ",
                        to_string(link->protocol), 100 * writes);
    if (reads != writes && topology.kind == TopologyKind::kHostStaged) {
      fact += fmt::format(" up, {:.1f}% down (read completions)", 100 * reads);
    }
  }
  return fact;
}

/// Which op kinds the datasheet rules price, and from which facts.
std::string cost_fact(const OpCostModel& costs) {
  std::string by_rules;
  std::string by_table;
  for (const OpDef* def : op_defs()) {
    if (def->kind == OpKind::kInput) continue;
    std::string& list = costs.priced_by_rules(def->kind) ? by_rules : by_table;
    list += (list.empty() ? "" : ", ") + std::string(def->name);
  }
  if (by_rules.empty()) return "roofline × the machine's efficiency table";
  const DeviceFacts& facts = costs.facts();
  std::string fact = fmt::format(
      "datasheet rules (docs/cost-model.md): {} SMs, {:.0f} GB/s achieved memory, {} µs per kernel",
      facts.sm_count, facts.dram_bytes_per_second / 1e9, facts.launch_seconds * 1e6);
  if (!by_table.empty()) fact += "; roofline × efficiency for " + by_table;
  return fact;
}

}  // namespace

Simulator::Simulator(Machine machine, PlacementMode placement)
    : machine_(checked(std::move(machine))), placement_(placement), topology_(machine_), costs_(machine_) {}

void Simulator::check_devices(const Plan& plan) const {
  if (plan.devices > machine_.devices) {
    throw InputError("--devices", "",
                     fmt::format("the plan uses {} devices, but machine '{}' has {}; use --devices {} "
                                 "or fewer, or a machine with more devices",
                                 plan.devices, machine_.name, machine_.devices, machine_.devices));
  }
}

const OpCostModel& Simulator::costs_for(const Plan& plan, std::optional<OpCostModel>& own) const {
  const bool pooled = machine_.pooled && plan.devices < machine_.devices;
  // A plan stored in half counts the tensors the shape rules move at 2 bytes.
  const bool half = storage_bytes(plan.precision).activation != storage_bytes(Precision::kFp32).activation;
  if (!pooled && !half) return costs_;
  own.emplace(pooled ? machine_for_plan(machine_, plan.devices) : machine_, plan.precision);
  return *own;
}

namespace {

/// What the engine plays: a plan that holds its replicas once, with its
/// spanning collectives widened (replica_view.hpp); any other plan as it is.
const Plan& played(const Plan& plan, std::optional<Plan>& widened, bool jitter) {
  if (!plan.replicas) return plan;
  SPLITSCOPE_CHECK(replicas_alike(plan) && !jitter,
                   "replicas held once are played once only where they are alike (Simulator::runs_replicas_once)");
  widened.emplace(widened_for_replicas(plan));
  return *widened;
}

}  // namespace

Timeline Simulator::simulate_on(const Plan& plan, const Topology& topology, const OpJitter* jitter) const {
  std::optional<OpCostModel> own;
  std::optional<Plan> widened;
  return simulate_plan(played(plan, widened, jitter != nullptr), topology, costs_for(plan, own), jitter);
}

bool Simulator::runs_replicas_once(const Plan& plan, const RunOptions& options) const {
  // Replicas of one device each: a replica of several would move data between its own devices, on
  // links that need not be alike from one replica's devices to the next's.
  return plan.replicas && plan.replicas->devices_each == 1 && replicas_alike(plan) && options.jitter_sigma == 0 &&
         placement_ == PlacementMode::kDefault && !machine_.pooled && !costs_.contended() &&
         costs_.host_issue_seconds() <= 0;
}

Timeline Simulator::simulate(const Plan& plan) const {
  check_devices(plan);
  // The default placement reads no traffic: a million-op plan pays nothing for it.
  if (placement_ == PlacementMode::kDefault) return simulate_on(plan, topology_);
  return simulate_on(plan, topology_.placed(place(plan).device_map));
}

std::optional<Timeline> Simulator::simulate(const Plan& plan, const SimulationDeadline& deadline) const {
  check_devices(plan);
  std::optional<OpCostModel> own;
  const OpCostModel& costs = costs_for(plan, own);
  std::optional<Plan> widened;
  const Plan& engine_plan = played(plan, widened, false);
  if (placement_ == PlacementMode::kDefault) return simulate_plan_until(engine_plan, topology_, costs, deadline);
  return simulate_plan_until(engine_plan, topology_.placed(place(plan).device_map), costs, deadline);
}

PlacementInfo Simulator::place(const Plan& plan) const {
  check_devices(plan);
  PlacementInfo placement;
  placement.mode = std::string(to_string(placement_));
  placement.device_map = default_device_map(plan.devices);
  const NodeShape shape{topology_.nodes(), topology_.devices_per_node(), topology_.nodes_per_leaf()};
  const bool topology = placement_ == PlacementMode::kTopology;
  if (shape.nodes == 1) {
    if (topology) {
      placement.default_cross_node_bytes = 0;
      placement.note = fmt::format("machine '{}' is one node: no mapping moves bytes across nodes, so plan "
                                   "device i runs on machine device i",
                                   machine_.name);
    }
    return placement;
  }
  if (!topology) {
    placement.cross_node_bytes = default_cross_node_bytes(plan, shape);
    return placement;
  }
  const DeviceTraffic traffic = plan_traffic(plan);
  placement.cross_node_bytes = cross_node_bytes(traffic, placement.device_map, shape);
  placement.default_cross_node_bytes = placement.cross_node_bytes;
  std::vector<int> device_map = topology_device_map(traffic, shape);
  // Across the spine of a tiered network: said in the note, the reports' fields being the nodes'.
  const auto spine_note = [&](const std::vector<int>& map) {
    constexpr double kMib = 1024.0 * 1024.0;
    return fmt::format("across the spine: {:.1f} MiB (default mapping {:.1f} MiB)",
                       static_cast<double>(cross_leaf_bytes(traffic, map, shape)) / kMib,
                       static_cast<double>(cross_leaf_bytes(traffic, placement.device_map, shape)) / kMib);
  };
  if (device_map == placement.device_map) {
    if (shape.has_spine()) {
      placement.note = placement.cross_node_bytes == 0
                           ? "no bytes cross nodes under the default mapping, so it is kept"
                           : "no mapping found moves fewer bytes across the spine or nodes than the default, so it "
                             "is kept; " + spine_note(device_map);
      return placement;
    }
    placement.note = placement.cross_node_bytes == 0
                         ? "no bytes cross nodes under the default mapping, so it is kept"
                         : "no mapping found moves fewer bytes across nodes than the default, so it is kept";
    return placement;
  }
  placement.cross_node_bytes = cross_node_bytes(traffic, device_map, shape);
  if (shape.has_spine()) placement.note = spine_note(device_map);
  placement.device_map = std::move(device_map);
  return placement;
}

RunInfo Simulator::info(const Plan& plan) const {
  RunInfo info;
  info.backend = "sim";
  info.measured = false;
  info.device_mode = "simulated";
  info.machine_name = machine_.name;
  info.device_name = machine_.device.name;
  const Machine seen = machine_for_plan(machine_, plan.devices);
  info.device_memory_bytes.assign(static_cast<size_t>(plan.devices), seen.device.memory_bytes());
  info.facts.emplace_back("topology", topology_fact(machine_));
  info.facts.emplace_back("matrix math", fmt::format("{} at {} TFLOP/s per device", seen.device.matrix_math,
                                                     seen.device.matrix_flops_per_second() / 1e12));
  if (plan.precision != Precision::kFp32) {
    const StorageBytes storage = storage_bytes(plan.precision);
    info.facts.emplace_back("precision",
                            fmt::format("{}: activations {} B, weights {} B{}, gradients {} B, optimizer state {} B",
                                        to_string(plan.precision), storage.activation, storage.weight,
                                        storage.casts_weights() ? fmt::format(" (+{} B fp32 masters)", storage.master)
                                                                : std::string(),
                                        storage.gradient, storage.optimizer_state));
  }
  if (const std::string links = link_fact(machine_); !links.empty()) info.facts.emplace_back("links", links);
  info.facts.emplace_back("op costs", cost_fact(costs_));
  if (machine_.pooled) {
    info.facts.emplace_back("pooled", fmt::format("{} of {} shares per device", machine_.devices / plan.devices,
                                                  machine_.devices));
  }
  if (costs_.has_calibration()) {
    int64_t calibrated = 0;
    int64_t priced = 0;
    double calibrated_seconds = 0;
    double priced_seconds = 0;
    OpCostModel::PlanPricing pricing(costs_, plan);
    for (const PlanOp& op : plan.ops) {
      if (op.role != OpRole::kCompute) continue;
      bool from_table = false;
      const double seconds = pricing.seconds(op, &from_table);
      calibrated += from_table ? 1 : 0;
      calibrated_seconds += from_table ? seconds : 0.0;
      priced += 1;
      priced_seconds += seconds;
    }
    info.facts.emplace_back("calibrated ops", fmt::format("{} of {}", calibrated, priced));
    if (priced_seconds > 0) info.calibrated_share = calibrated_seconds / priced_seconds;
  }
  info.model_error = plan_model_error(costs_, plan);
  return info;
}

RunResult Simulator::run(const Plan& plan, const RunOptions& options) {
  check_devices(plan);
  if (options.on_repeat) options.on_repeat(0, 1);
  if (options.jitter_sigma < 0 || !std::isfinite(options.jitter_sigma)) {
    throw InputError("--jitter", "", fmt::format("sigma {} must be 0 or more", options.jitter_sigma));
  }
  if (options.jitter_sigma > 0 && options.repeats < 1) throw InputError("--repeat", "", "must be at least 1");
  if (options.jitter_sigma > 0) check_recorded_runs(plan, options.repeats, "--repeat");  // one timeline each
  RunResult result;
  PlacementInfo placement = place(plan);
  const bool moved = placement.device_map != default_device_map(plan.devices);
  std::optional<Topology> placed;
  if (moved) placed = topology_.placed(placement.device_map);
  const Topology& runs_on = placed ? *placed : topology_;
  if (options.jitter_sigma > 0) {
    // Each repeat draws its own noise; without noise every repeat would be the same.
    for (int repeat = 0; repeat < options.repeats; ++repeat) {
      const OpJitter jitter(options.jitter_sigma, options.seed, repeat);
      result.timelines.push_back(simulate_on(plan, runs_on, &jitter));
    }
  } else {
    result.timelines.push_back(simulate_on(plan, runs_on));
  }
  if (placement_ == PlacementMode::kTopology) {
    placement.default_makespan_us =
        moved ? simulate_on(plan, topology_).makespan_us() : result.timelines.front().makespan_us();
  }
  result.info = info(plan);
  if (options.jitter_sigma > 0) {
    result.info.facts.emplace_back(
        "jitter", fmt::format("lognormal, sigma {:g}: each op's time x exp(sigma z - sigma^2/2), mean 1, drawn per "
                              "op and repeat from --seed",
                              options.jitter_sigma));
  } else if (plan.graph->is_training()) {
    // Without noise every step is the same: one simulated stands for all of them.
    result.info.steps_alike = options.repeats;
  }
  result.info.placement = std::move(placement);
  return result;
}

RunResult Simulator::run_parameter_server(const Plan& plan, const RunOptions& options,
                                          const ParameterServerOptions& ps) {
  check_devices(plan);
  if (placement_ == PlacementMode::kTopology) {
    throw InputError("--placement", "",
                     "ps puts its workers on devices 0..N-1 and its shards after them; drop --placement topology");
  }
  if (options.jitter_sigma < 0 || !std::isfinite(options.jitter_sigma)) {
    throw InputError("--jitter", "", fmt::format("sigma {} must be 0 or more", options.jitter_sigma));
  }
  RunResult result = simulate_parameter_server(*this, plan, options, ps);
  std::optional<ParameterServerInfo> parameter_server = std::move(result.info.parameter_server);
  result.info = info(plan);
  result.info.parameter_server = std::move(parameter_server);
  result.info.facts.emplace_back("parameter servers",
                                 "shards on the plan's last devices; pulls and pushes share the machine's links");
  if (options.jitter_sigma > 0) {
    result.info.facts.emplace_back(
        "jitter", fmt::format("lognormal, sigma {:g}: each worker step's time x exp(sigma z - sigma^2/2), mean 1, "
                              "drawn per worker and step from --seed",
                              options.jitter_sigma));
  }
  return result;
}

RunResult Simulator::run_input_stream(const Plan& plan, const RunOptions& options, const InputPipelineOptions& input) {
  check_input_pipeline_options(input);
  if (options.repeats < 1) throw InputError("--repeat", "", "must be at least 1");
  check_recorded_runs(plan, options.repeats, "--repeat", 1, input_stream_spans_per_step(plan, input));
  RunOptions once = options;
  once.on_repeat = nullptr;
  RunResult result = run(plan, once);
  // Priced where --placement put each device: that decides the bus it shares.
  const std::vector<InputCopy> copies =
      price_input_copies(machine_, network_input_copies(plan), result.info.placement.device_map);
  const Timeline compute = std::move(result.timelines.front());
  result.timelines.clear();

  InputStageTimes step;
  step.prepare_us = input.cost_us_per_sample * static_cast<double>(plan.graph->batch());
  for (const InputCopy& copy : copies) step.copy_us = std::max(step.copy_us, copy.us);
  step.compute_us = compute.makespan_us();
  const int fill = std::max(options.warmup, 1);
  const int steps = fill + options.repeats;
  const std::vector<InputStepTimes> schedule =
      schedule_input_pipeline(std::vector<InputStageTimes>(static_cast<size_t>(steps), step), input.prefetch);
  const std::vector<std::vector<InputCopy>> per_step(static_cast<size_t>(steps), copies);
  for (int s = fill; s < steps; ++s) result.timelines.push_back(input_step_window(schedule, s, compute, per_step));
  result.info.input_pipeline = summarize_input_pipeline(schedule, fill, input);
  return result;
}

Timeline simulate(const Plan& plan, const Machine& machine) { return Simulator(machine).simulate(plan); }

}  // namespace splitscope
