// `splitscope plan MODEL --strategy S --devices N [--microbatches M] [--batch B] [--json]`:
// what runs where, what crosses devices, and the memory each device needs.

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/degrees_option.hpp"
#include "cli/sequence_parallel_option.hpp"
#include "cli/chakra_output.hpp"
#include "cli/command.hpp"
#include "cli/network_loading.hpp"
#include "cli/plan_file_options.hpp"
#include "cli/command_outputs.hpp"
#include "util/output_batch.hpp"
#include "cli/precision_option.hpp"
#include "cli/training_options.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"
#include "plan/group_traffic.hpp"
#include "plan/plan_check.hpp"
#include "plan/plan_replicas.hpp"
#include "sim/engine/replica_view.hpp"
#include "util/errors.hpp"
#include "partitioners/partitioner.hpp"
#include "report/text_table.hpp"
#include "util/json_dump.hpp"
#include "util/strings.hpp"

namespace splitscope::cli {
namespace {

struct PlanOptions {
  std::string model;
  std::string strategy;
  int devices = 1;
  int microbatches = 1;
  int replicas = 1;
  int parameter_servers = 1;
  bool parameter_servers_given = false;
  std::optional<int64_t> batch;
  TrainingOptions training;
  bool json = false;
  std::string chakra_dir;  ///< --chakra: write Chakra execution traces here
  std::string machine;     ///< --machine: predicts the traces' compute durations
  std::vector<int> stages;  ///< --stages: a layer split's cut points
  std::string degrees;      ///< --degrees: hybrid's T,P,D
  bool sequence_parallel = false;  ///< --sequence-parallel
  std::string out;          ///< --out: the plan file
  std::string precision;   ///< --precision (precision_option.hpp); empty: fp32
};

/// `--chakra DIR`, timed on `--machine` at the plan's precision.
void write_chakra(const Plan& plan, const PlanOptions& options) {
  Machine machine = load_machine(options.machine);
  if (!options.precision.empty()) machine = machine_at_precision(std::move(machine), plan.precision);
  write_plan_chakra(plan, machine, options.chakra_dir);
}

/// The layer (and stacked layer) an op belongs to, for grouping long op lists.
std::string group_name(const Graph& graph, NodeId id) {
  const OpNode& node = graph.node(id);
  if (node.layer < 0) return "input";
  if (node.recurrent_layer && is_cell(node.kind)) return node.layer_name + "/l" + std::to_string(node.sublayer);
  return node.name;
}

/// "fc1, fc2, lstm/l0 x128": the groups of ops a device runs, in order of
/// first appearance, with how many ops of each (steps, micro-batches).
std::string op_summary(const Plan& plan, int device) {
  std::vector<std::pair<std::string, int>> groups;
  for (int id : plan.schedule[static_cast<size_t>(device)]) {
    const PlanOp& op = plan.op(id);
    std::string name = group_name(*plan.graph, op.node);
    if (op.role == OpRole::kEpilogue) name += " activation";
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& group) { return group.first == name; });
    if (it == groups.end()) {
      groups.emplace_back(name, 1);
    } else {
      it->second += 1;
    }
  }
  std::string text;
  for (const auto& [name, count] : groups) {
    if (!text.empty()) text += ", ";
    text += count > 1 ? fmt::format("{} x{}", name, count) : name;
  }
  return text;
}

/// A hybrid plan's degrees and the bytes its traffic sends inside each kind
/// of group (group_traffic.hpp); null for the other strategies.
nlohmann::json hybrid_json(const Plan& plan) {
  if (!plan.degrees) return nullptr;
  const GroupTraffic traffic = group_traffic(plan_traffic(plan), *plan.degrees);
  const ParallelDegrees& degrees = *plan.degrees;
  return {{"degrees", {{"tensor", degrees.tensor}, {"pipeline", degrees.pipeline}, {"data", degrees.data}}},
          {"traffic_bytes", {{"tensor", traffic.tensor}, {"pipeline", traffic.pipeline}, {"data", traffic.data}}}};
}

nlohmann::json plan_json(const Plan& plan) {
  const PlanTotals totals = plan_totals(plan);
  nlohmann::json devices = nlohmann::json::array();
  for (int d = 0; d < plan.devices; ++d) {
    const DeviceMemory& memory = device_memory(plan, d);
    devices.push_back({{"id", d},
                       {"ops", totals.device_ops[static_cast<size_t>(d)]},
                       {"flops", totals.device_flops[static_cast<size_t>(d)]},
                       {"memory_peak_bytes", memory.peak},
                       {"params_bytes", memory.params},
                       {"activations_peak_bytes", memory.activations_peak},
                       {"transfer_buffers_bytes", memory.transfer_buffers}});
    if (plan.graph->is_training()) {
      devices.back()["gradient_bytes"] = memory.gradients;
      devices.back()["optimizer_state_bytes"] = memory.optimizer_state;
    }
  }
  std::map<std::string, int64_t> kinds;
  for (const PlanOp& op : plan.ops) {
    // Replicas held once: each replica's collectives once per replica, a spanning one once.
    const int64_t copies = plan.replicas && !op.spans_replicas ? plan.replicas->count : 1;
    if (op.role == OpRole::kCollective) kinds[std::string(to_string(op.collective))] += copies;
  }
  const auto bubble = ideal_bubble(plan);
  return {{"network", plan.graph->name()},
          {"strategy", plan.strategy},
          {"devices", plan.devices},
          {"microbatches", plan.microbatches},
          {"precision", to_string(plan.precision)},
          {"parameter_servers", plan.parameter_servers},
          {"per_device", devices},
          {"transfers", {{"count", totals.transfer_count}, {"bytes", totals.transfer_bytes}}},
          {"collectives", {{"count", totals.collective_count}, {"bytes", totals.collective_bytes}, {"kinds", kinds}}},
          {"bytes_crossing_devices", totals.transfer_bytes + totals.collective_bytes},
          {"ideal_bubble", bubble ? nlohmann::json(*bubble) : nlohmann::json(nullptr)},
          {"hybrid", hybrid_json(plan)},
          {"train", plan.graph->is_training()
                        ? nlohmann::json{{"schedule", plan.traits.microbatched
                                                          ? std::string(to_string(plan.pipeline_schedule))
                                                          : std::string("none")},
                                         {"optimizer", plan.graph->training()->optimizer.name()},
                                         {"loss", to_string(plan.graph->training()->loss)}}
                        : nlohmann::json(nullptr)},
          {"notes", plan.notes}};
}

/// The plan's transfers and collectives, every replica's where it holds its
/// replicas once (the spanning collectives over all of them): the whole
/// plan's, without its compute ops.
std::vector<PlanOp> every_replicas_moves(const Plan& plan) {
  std::vector<PlanOp> moves;
  if (!plan.replicas) {
    for (const PlanOp& op : plan.ops) {
      if (op.role == OpRole::kTransfer || op.role == OpRole::kCollective) moves.push_back(op);
    }
    return moves;
  }
  const ReplicaSet& set = *plan.replicas;
  const Plan widened = widened_for_replicas(plan);
  for (size_t id = 0; id < plan.ops.size(); ++id) {
    const PlanOp& op = widened.ops[id];
    if (op.role != OpRole::kTransfer && op.role != OpRole::kCollective) continue;
    if (op.spans_replicas) {
      moves.push_back(op);
      continue;
    }
    for (int r = 0; r < set.count; ++r) {
      // The short replicas' own ops: the same moves over fewer rows.
      PlanOp& moved = moves.emplace_back(r < set.short_from ? op : set.short_replica->ops[id]);
      const int offset = r * set.devices_each;
      if (moved.device >= 0) moved.device += offset;
      if (moved.src_device >= 0) moved.src_device += offset;
      for (int& device : moved.participants) device += offset;
    }
  }
  return moves;
}

/// Data movement grouped by (kind, tensor group, route): count and bytes.
std::string movement_table(const Plan& plan) {
  struct Row {
    int64_t count = 0;
    int64_t bytes = 0;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Row> rows;
  for (const PlanOp& op : every_replicas_moves(plan)) {
    const std::string kind = op.role == OpRole::kTransfer ? "transfer" : std::string(to_string(op.collective));
    std::string route;
    if (op.role == OpRole::kTransfer) {
      route = fmt::format("{} -> {}", op.src_device, op.device);
    } else {
      for (int device : op.participants) route += (route.empty() ? "" : ",") + std::to_string(device);
      if (op.collective == CollectiveKind::kConcat) route += fmt::format(" -> {}", op.device);
    }
    // A gradient bucket is named by its first tensor and how many more travel with it.
    const size_t segments = op.participants.empty() ? 1 : op.inputs.size() / op.participants.size();
    const std::string tensor = group_name(*plan.graph, op.node) + (segments > 1 ? fmt::format(" +{}", segments - 1) : "");
    Row& row = rows[{tensor, kind, route}];
    row.count += 1;
    row.bytes += op.bytes_moved;
  }
  using Align = TextTable::Align;
  TextTable table({"tensor", "moved by", "devices", "count", "bytes"},
                  {Align::kLeft, Align::kLeft, Align::kLeft, Align::kRight, Align::kRight});
  for (const auto& [key, row] : rows) {
    const auto& [tensor, kind, route] = key;
    table.add_row({tensor, kind, route, std::to_string(row.count), binary_bytes(double(row.bytes))});
  }
  return rows.empty() ? "nothing crosses devices\n" : table.render();
}

std::string plan_text(const Plan& plan) {
  const PlanTotals totals = plan_totals(plan);
  using Align = TextTable::Align;
  TextTable devices({"device", "ops", "FLOPs", "weights", "activations", "received", "peak memory"},
                    {Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                     Align::kRight});
  for (int d = 0; d < plan.devices; ++d) {
    const DeviceMemory& memory = device_memory(plan, d);
    devices.add_row({std::to_string(d), std::to_string(totals.device_ops[static_cast<size_t>(d)]),
                     si_count(double(totals.device_flops[static_cast<size_t>(d)])), binary_bytes(double(memory.params)),
                     binary_bytes(double(memory.activations_peak)), binary_bytes(double(memory.transfer_buffers)),
                     binary_bytes(double(memory.peak))});
  }
  std::string text =
      fmt::format("{} on {} device(s), strategy {}", printable(plan.graph->name()), plan.devices, plan.strategy);
  if (plan.microbatches > 1) text += fmt::format(", {} micro-batches", plan.microbatches);
  if (plan.precision != Precision::kFp32) text += fmt::format(", precision {}", to_string(plan.precision));
  text += "\n\n" + devices.render() + "\n";
  // Replicas held once: each device runs what its replica's device does (the same ops by name).
  const int each = plan.replicas ? plan.replicas->devices_each : plan.devices;
  std::vector<std::string> runs(static_cast<size_t>(each));
  for (int d = 0; d < each; ++d) runs[static_cast<size_t>(d)] = printable(op_summary(plan, d));
  for (int d = 0; d < plan.devices; ++d) text += fmt::format("device {} runs: {}\n", d, runs[static_cast<size_t>(d % each)]);
  text += "\n" + movement_table(plan);
  text += fmt::format("\ncrossing devices: {} in {} transfer(s) and {} collective(s)\n",
                      binary_bytes(double(totals.transfer_bytes + totals.collective_bytes)), totals.transfer_count,
                      totals.collective_count);
  if (const auto bubble = ideal_bubble(plan)) {
    text += fmt::format("ideal pipeline bubble: (N-1)/(M+N-1) = {:.1f}%\n", *bubble * 100);
  }
  if (plan.degrees) {
    const GroupTraffic traffic = group_traffic(plan_traffic(plan), *plan.degrees);
    text += fmt::format("sent inside tensor groups {}, between pipeline stages {}, between data replicas {}\n",
                        binary_bytes(double(traffic.tensor)), binary_bytes(double(traffic.pipeline)),
                        binary_bytes(double(traffic.data)));
  }
  for (const auto& note : plan.notes) text += "note: " + note + "\n";
  return text;
}

}  // namespace

Command add_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* sub = app.add_subcommand("plan", "Partition a network and show what runs where");
  sub->add_option("MODEL", options->model, "network file, or a name from models/networks")->required();
  // Required, as on `run`: the usage line says so, and a plan for a guessed strategy answers no question.
  sub->add_option("--strategy,-s", options->strategy,
                  "single | data | ps | horizontal | pipeline | vertical | tensor | branches | hybrid")
      ->required();
  sub->add_option("--devices,-n", options->devices, "number of devices")->required();
  sub->add_option("--ps", options->parameter_servers, "parameter-server shards (--strategy ps)")
      ->capture_default_str()
      ->each([options](const std::string&) { options->parameter_servers_given = true; });
  sub->add_option("--microbatches,-m", options->microbatches, "micro-batches (pipeline only)")
      ->capture_default_str();
  sub->add_option("--replicas", options->replicas, "R data-parallel copies of the strategy over N/R devices each")
      ->capture_default_str();
  sub->add_option("--batch", options->batch, "override the network file's batch (as on run and compare)");
  sub->add_flag("--json", options->json, "print JSON (docs/reports.md) instead of tables");
  sub->add_option("--chakra", options->chakra_dir,
                  "also write the plan as Chakra execution traces, one per device, into this folder "
                  "(DIR/splitscope.<device>.et, for ASTRA-sim: docs/chakra.md)");
  sub->add_option("--machine", options->machine,
                  "with --chakra: the machine whose simulation times each compute node "
                  "(a machine file, or a name from models/machines)");
  add_stages_option(*sub, options->stages);
  add_degrees_option(*sub, options->degrees);
  add_sequence_parallel_option(*sub, options->sequence_parallel);
  sub->add_option("--out", options->out,
                  "also write the plan as a plan file (splitscope.plan/1, docs/plan.md) for run, compare, validate "
                  "and sweep --plan");
  add_training_options(*sub, options->training, false);
  add_zero_option(*sub, options->training);
  add_precision_option(*sub, options->precision);
  return {sub, [options](const std::vector<std::string>&) {
            if (!options->chakra_dir.empty() && options->machine.empty()) {
              throw InputError("--chakra", "",
                               "needs --machine to time each compute node, e.g. --machine h100-nvlink-8");
            }
            if (options->chakra_dir.empty() && !options->machine.empty()) {
              throw InputError("--machine", "", "times the nodes of --chakra traces; give --chakra DIR with it");
            }
            const auto graph = graph_to_run(load_network(options->model, options->batch), options->training);
            PartitionOptions partition;
            partition.devices = options->devices;
            partition.microbatches = options->microbatches;
            set_training_plan_options(options->training, partition);
            partition.precision = precision_option(options->precision);
            partition.parameter_servers = options->parameter_servers;
            check_stages_option(options->stages, options->strategy);
            partition.stage_starts = options->stages;
            partition.degrees = degrees_option(options->degrees, options->strategy);
            partition.sequence_parallel = options->sequence_parallel;
            if (options->parameter_servers_given && options->strategy != "ps") {
              throw InputError("--ps", "", "counts the shards of --strategy ps");
            }
            if (options->training.schedule_given && !make_partitioner(options->strategy)->traits().microbatched) {
              throw InputError("--schedule", "", "orders a pipeline's micro-batches; use it with --strategy pipeline");
            }
            if (options->training.zero == 1 && !options->out.empty()) {
              throw InputError("--zero", "", "is not recorded in plan files yet; drop --out, or give --zero 1 to run");
            }
            check_command_outputs({{"--out", options->out}}, {input_file(ZooShelf::kNetworks, options->model)});
            // Plan files and Chakra traces list every op; the tables need only a replica (plan_replicas.hpp).
            partition.compact_replicas = options->out.empty() && options->chakra_dir.empty();
            const Plan plan = make_plan(*make_partitioner(options->strategy, options->replicas), graph, partition);
            check(plan);
            OutputBatch files;
            if (!options->out.empty()) {
              PlanSpec spec;
              spec.strategy = options->strategy;
              spec.devices = options->devices;
              spec.replicas = options->replicas;
              spec.microbatches = options->microbatches;
              spec.schedule = partition.schedule;
              spec.recompute = partition.recompute;
              spec.stage_starts = options->stages;
              spec.parameter_servers = options->parameter_servers;
              spec.bucket_bytes = partition.bucket_bytes;
              spec.precision = partition.precision;
              spec.degrees = partition.degrees;
              spec.sequence_parallel = partition.sequence_parallel;
              files.add("--out", options->out, dump_json(to_json(plan_file_of(spec, plan)), 2) + "\n");
            }
            if (!options->chakra_dir.empty()) write_chakra(plan, *options);
            if (options->json) {
              std::cout << dump_json(plan_json(plan), 2) << "\n";
            } else {
              std::cout << plan_text(plan);
            }
            publish_outputs(files, options->json);
            return 0;
          }};
}

}  // namespace splitscope::cli
