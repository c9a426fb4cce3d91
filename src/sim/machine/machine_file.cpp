#include "sim/machine/machine_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "ir/ops/op_def.hpp"
#include "ir/zoo.hpp"
#include "sim/costs/achieved_rates.hpp"
#include "util/json_fields.hpp"
#include "util/errors.hpp"
#include "util/json_dump.hpp"

namespace splitscope {
namespace {

using nlohmann::json;

/// A device may give its own efficiency to every kind a plan computes (every
/// op definition but the network input), plus the epilogue and the default.
bool is_computed(const OpDef& def) { return def.kind != OpKind::kInput; }

bool is_efficiency_key(std::string_view key) {
  if (key == kDefaultEfficiency || key == kEpilogueEfficiency) return true;
  for (const OpDef* def : op_defs()) {
    if (is_computed(*def) && def->name == key) return true;
  }
  return false;
}

std::string efficiency_keys() {
  std::string keys = fmt::format("{}, {}", kDefaultEfficiency, kEpilogueEfficiency);
  for (const OpDef* def : op_defs()) {
    if (is_computed(*def)) keys += fmt::format(", {}", def->name);
  }
  return keys;
}

/// `implied`: the protocol a link in this place is, when the file does not say
/// (link_efficiency.hpp): its bandwidth is then that technology's line rate.
LinkSpec parse_link(const JsonFields& topology, std::string_view field, std::string_view what,
                    LinkProtocol implied) {
  const JsonFields link = topology.object(field, what);
  link.allow_only({"bandwidth_GBps", "latency_us", "protocol", "comment"}, "a link");
  link.optional_string("comment", "");  // free text, but text
  LinkSpec spec;
  spec.bandwidth_gbps =
      link.number("bandwidth_GBps", "GB/s in each direction", NumberRule::kQuantity);
  spec.latency_us = link.optional_number("latency_us", 0.0, NumberRule::kQuantityOrZero);
  spec.protocol = implied;
  const std::string protocol = link.optional_string("protocol", std::string(to_string(implied)));
  if (!parse_link_protocol(protocol, &spec.protocol)) {
    link.fail("protocol",
              fmt::format("unknown protocol '{}'; use pcie, nvlink, infiniband or achieved", protocol));
  }
  return spec;
}

/// A device's `field`: op kind (as efficiency is keyed, optionally followed
/// by `|shares=N` for a pooled machine's devices of N shares) -> a positive factor.
void parse_pooled_factors(const JsonFields& device, std::string_view field, std::string_view what,
                          std::map<std::string, double>& into) {
  if (!device.has(field)) return;
  const JsonFields factors = device.object(field, what);
  for (const auto& [kind, value] : factors.raw().items()) {
    if (!is_efficiency_key(split_pooled_key(kind).first)) {
      factors.fail(kind, "unknown op kind; known kinds are " + efficiency_keys() +
                             ", each optionally followed by |shares=N (N >= 2)");
    }
    into[kind] = factors.checked_number(value, kind, NumberRule::kQuantity);
  }
}

/// `gemm_rates`: one {"m", "n", "k", "GFLOPs"[, "threads", "running"]} object per timed shape, a full grid per
/// thread count and running count (gemm_rate_curve.hpp).
std::vector<GemmRatePoint> parse_gemm_rates(const JsonFields& device) {
  const nlohmann::json& rates = device.required("gemm_rates", "sgemm rates by shape");
  if (!rates.is_array()) device.fail("gemm_rates", "must be an array of {\"m\", \"n\", \"k\", \"GFLOPs\"} objects");
  std::vector<GemmRatePoint> points;
  for (size_t i = 0; i < rates.size(); ++i) {
    const std::string index = fmt::format("gemm_rates[{}]", i);
    if (!rates[i].is_object()) device.fail(index, "must be an object {\"m\", \"n\", \"k\", \"GFLOPs\"}");
    const JsonFields rate(rates[i], device.path_of(index), device.source());
    rate.allow_only({"m", "n", "k", "GFLOPs", "threads", "running"}, "a gemm rate");
    GemmRatePoint point;
    point.m = rate.integer("m", "rows of the product", 1, kMaxGemmDimension);
    point.n = rate.integer("n", "columns of the product", 1, kMaxGemmDimension);
    point.k = rate.integer("k", "the summed dimension", 1, kMaxGemmDimension);
    point.gflops = rate.number("GFLOPs", "GFLOP/s at this shape on these threads", NumberRule::kQuantity);
    point.threads = static_cast<int>(rate.optional_integer("threads", 1, 1, kMaxMachineDevices));
    point.running = static_cast<int>(rate.optional_integer("running", 1, 1, kMaxMachineDevices));
    points.push_back(point);
  }
  if (const std::string problem = gemm_grid_problem(points); !problem.empty()) device.fail("gemm_rates", problem);
  return points;
}

/// `kernel_passes`: {"fill_ns_per_value", "activation_ns_per_value", "im2col": [{"threads", "ns_per_value",
/// "us_per_call"}, ...]}, with one thread's im2col among them (cpu_pass_rates.hpp).
CpuPassRates parse_kernel_passes(const JsonFields& device) {
  const JsonFields passes = device.object("kernel_passes", "the cpu kernels' passes other than products");
  passes.allow_only({"fill_ns_per_value", "activation_ns_per_value", "im2col", "pool_ns_per_window_value"},
                    "the kernel passes");
  CpuPassRates rates;
  rates.fill_ns_per_value = passes.number("fill_ns_per_value", "ns per value of a bias copied into outputs",
                                          NumberRule::kQuantityOrZero);
  const JsonFields activations =
      passes.object("activation_ns_per_value", "ns per value of each activation in place, by name");
  for (const auto& [name, value] : activations.raw().items()) {
    if (!timed_activation(name)) activations.fail(name, "not an activation: relu, tanh or sigmoid");
    rates.activation_ns_per_value[name] = activations.checked_number(value, name, NumberRule::kQuantityOrZero);
  }
  const nlohmann::json& im2col = passes.required("im2col", "im2col's rate on each thread count");
  if (!im2col.is_array() || im2col.empty()) {
    passes.fail("im2col", "must be a non-empty array of {\"threads\", \"ns_per_value\", \"us_per_call\"} objects");
  }
  for (size_t i = 0; i < im2col.size(); ++i) {
    const std::string index = fmt::format("im2col[{}]", i);
    if (!im2col[i].is_object()) passes.fail(index, "must be an object {\"threads\", \"ns_per_value\", \"us_per_call\"}");
    const JsonFields entry(im2col[i], passes.path_of(index), passes.source());
    entry.allow_only({"threads", "ns_per_value", "us_per_call"}, "an im2col rate");
    Im2colRate rate;
    rate.threads = static_cast<int>(entry.integer("threads", "the pool's threads", 1, kMaxMachineDevices));
    if (rates.im2col_on(rate.threads) != nullptr) {
      entry.fail("threads", fmt::format("{} threads are given twice", rate.threads));
    }
    rate.ns_per_value = entry.number("ns_per_value", "ns per value of the patch matrix", NumberRule::kQuantityOrZero);
    rate.us_per_call = entry.number("us_per_call", "µs each call pays besides its values", NumberRule::kQuantityOrZero);
    rates.im2col.push_back(rate);
  }
  if (rates.im2col_on(1) == nullptr) passes.fail("im2col", "needs the rate on 1 thread");
  if (passes.has("pool_ns_per_window_value")) {
    const JsonFields pools =
        passes.object("pool_ns_per_window_value", "ns per output value and window element of each pooling kind");
    for (const auto& [kind, value] : pools.raw().items()) {
      if (!timed_pool(kind)) pools.fail(kind, "not a pooling kind: maxpool or avgpool");
      rates.pool_ns_per_window_value[kind] = pools.checked_number(value, kind, NumberRule::kQuantityOrZero);
    }
  }
  return rates;
}

/// `weight_stream`: [{"threads", "running", "rows", "GBps"}], each (threads, running, rows) once.
std::vector<WeightStreamRate> parse_weight_stream(const JsonFields& device) {
  const nlohmann::json& rates = device.required("weight_stream", "the rates products stream weights from memory at");
  if (!rates.is_array()) {
    device.fail("weight_stream", "must be an array of {\"threads\", \"running\", \"rows\", \"GBps\"} objects");
  }
  std::vector<WeightStreamRate> out;
  for (size_t i = 0; i < rates.size(); ++i) {
    const std::string index = fmt::format("weight_stream[{}]", i);
    if (!rates[i].is_object()) device.fail(index, "must be an object {\"threads\", \"running\", \"rows\", \"GBps\"}");
    const JsonFields entry(rates[i], device.path_of(index), device.source());
    entry.allow_only({"threads", "running", "rows", "GBps"}, "a weight stream rate");
    WeightStreamRate rate;
    rate.threads = static_cast<int>(entry.optional_integer("threads", 1, 1, kMaxMachineDevices));
    rate.running = static_cast<int>(entry.optional_integer("running", 1, 1, kMaxMachineDevices));
    rate.rows = entry.optional_integer("rows", 8, 1, int64_t{1} << 20);
    rate.gbps = entry.number("GBps", "GB/s of weights from memory", NumberRule::kQuantity);
    for (const WeightStreamRate& seen : out) {
      if (seen.threads == rate.threads && seen.running == rate.running && seen.rows == rate.rows) {
        entry.fail("threads", fmt::format("{} threads with {} running at {} rows are given twice", rate.threads,
                                          rate.running, rate.rows));
      }
    }
    out.push_back(rate);
  }
  return out;
}

DeviceSpec parse_device(const JsonFields& device) {
  device.allow_only({"name", "peak_tflops", "matrix_math", "memory_bandwidth_GBps", "memory_GiB",
                     "launch_overhead_us", "lane_handoff_us", "host_issue_us", "sm_count", "boost_clock_MHz", "efficiency",
                     "contention", "speedup", "gemm_rates", "cell_pointwise_ns", "kernel_passes", "last_level_cache_MiB",
                     "weight_stream", "achieved_rates", "comment"},
                    "a device");
  device.optional_string("comment", "");  // free text, but text
  DeviceSpec spec;
  spec.name = device.string("name", "the device's model name");

  const JsonFields peaks = device.object("peak_tflops", "TFLOP/s by precision, with at least fp32");
  for (const auto& [precision, value] : peaks.raw().items()) {
    if (precision.empty()) peaks.fail("", "a precision name must not be empty");
    spec.peak_tflops[precision] = peaks.checked_number(value, precision, NumberRule::kQuantity);
  }
  if (!spec.peak_tflops.count(std::string(kFp32))) {
    peaks.fail("", "needs an \"fp32\" entry: the peak of float32 matrix products in TFLOP/s");
  }
  spec.matrix_math = device.optional_string("matrix_math", std::string(kFp32));
  if (!spec.peak_tflops.count(spec.matrix_math)) {
    std::string known;
    for (const auto& [precision, peak] : spec.peak_tflops) {
      known += (known.empty() ? "" : ", ") + precision;
    }
    device.fail("matrix_math", fmt::format("'{}' has no entry in peak_tflops; use one of {}",
                                           spec.matrix_math, known));
  }
  spec.memory_bandwidth_gbps =
      device.number("memory_bandwidth_GBps", "GB/s of device memory", NumberRule::kQuantity);
  spec.memory_gib = device.number("memory_GiB", "device memory in GiB", NumberRule::kQuantity);
  // Bytes are counted in 64 bits: 2^30 GiB (an exbibyte) is far past any device and far from overflow.
  if (spec.memory_gib > 1 << 30) device.fail("memory_GiB", fmt::format("{} GiB is more than 2^30 GiB", spec.memory_gib));
  spec.launch_overhead_given = device.has("launch_overhead_us");
  spec.launch_overhead_us = device.optional_number("launch_overhead_us", 0.0, NumberRule::kQuantityOrZero);
  spec.lane_handoff_us = device.optional_number("lane_handoff_us", 0.0, NumberRule::kQuantityOrZero);
  spec.host_issue_us = device.optional_number("host_issue_us", 0.0, NumberRule::kQuantityOrZero);
  spec.sm_count = static_cast<int>(device.optional_integer("sm_count", 0, 1, kMaxSmCount));
  spec.boost_clock_mhz = device.optional_number("boost_clock_MHz", 0.0, NumberRule::kQuantity);

  if (device.has("efficiency")) {
    const JsonFields efficiency = device.object("efficiency", "fraction of the roofline by op kind");
    for (const auto& [kind, value] : efficiency.raw().items()) {
      if (!is_efficiency_key(kind)) {
        efficiency.fail(kind, "unknown op kind; known kinds are " + efficiency_keys());
      }
      spec.efficiency[kind] = efficiency.checked_number(value, kind, NumberRule::kFraction);
    }
  }
  parse_pooled_factors(device, "contention", "time with every pooled device busy over time alone, by op kind",
                       spec.contention);
  parse_pooled_factors(device, "speedup", "how many times faster N shares run an op than one share alone, by op kind",
                       spec.speedup);
  if (device.has("gemm_rates")) spec.gemm_rates = parse_gemm_rates(device);
  if (device.has("cell_pointwise_ns")) {
    const JsonFields pointwise = device.object("cell_pointwise_ns", "ns per (row, unit) of a cell's gate arithmetic");
    for (const auto& item : pointwise.raw().items()) {
      // Named, not a structured binding: clang 14 (scripts/fuzz) refuses lambdas that capture those.
      const std::string kind = item.key();
      const auto& value = item.value();
      const auto defs = op_defs();
      const bool cell =
          std::any_of(defs.begin(), defs.end(), [&](const OpDef* def) { return def->cell && def->name == kind; });
      if (!cell) pointwise.fail(kind, "not a recurrent cell kind: lstm_cell or gru_cell");
      spec.cell_pointwise_ns[kind] = pointwise.checked_number(value, kind, NumberRule::kQuantity);
    }
  }
  if (device.has("kernel_passes")) spec.kernel_passes = parse_kernel_passes(device);
  spec.last_level_cache_mib = device.optional_number("last_level_cache_MiB", 0.0, NumberRule::kQuantityOrZero);
  if (device.has("weight_stream")) spec.weight_stream = parse_weight_stream(device);
  // A GPU described by its datasheet facts is priced by the rules learned from the GPUs we measured unless its
  // file opts out: the datasheet rules alone predict 1.2-2.5x too fast (docs/cost-model.md).
  if (device.has("achieved_rates")) {
    spec.achieved_rates_name =
        device.string("achieved_rates", "the achieved-rate rules: a name in models/rules, a path, or \"none\"");
  } else if (spec.sm_count > 0) {
    spec.achieved_rates_name = std::string(kDefaultAchievedRates);
  }
  if (!spec.achieved_rates_name.empty() && spec.achieved_rates_name != kNoAchievedRates) {
    spec.achieved_rates = load_achieved_rates(spec.achieved_rates_name);
  }
  return spec;
}

int divisor(const JsonFields& topology, std::string_view field, std::string_view what, int whole,
            std::string_view whole_name) {
  const int part = static_cast<int>(topology.integer(field, what, 1, kMaxMachineDevices));
  if (whole % part != 0) {
    topology.fail(field, fmt::format("{} = {} does not divide {} = {}", field, part, whole_name, whole));
  }
  return part;
}

/// `network`: the tiers above a multi-node machine's NICs (machine.hpp, NetworkSpec).
NetworkSpec parse_network(const JsonFields& network, int nodes) {
  NetworkSpec spec;
  const std::string kind = network.string("kind", "fat-tree or rail");
  std::string_view group_field;
  if (kind == to_string(NetworkKind::kFatTree)) {
    spec.kind = NetworkKind::kFatTree;
    group_field = "nodes_per_leaf";
  } else if (kind == to_string(NetworkKind::kRail)) {
    spec.kind = NetworkKind::kRail;
    group_field = "nodes_per_rail_group";
  } else {
    network.fail("kind", fmt::format("unknown network '{}'; use fat-tree or rail (leave `network` out for a "
                                     "non-blocking one)",
                                     kind));
  }
  network.allow_only({"kind", group_field, "oversubscription", "hop_latency_us", "comment"},
                     fmt::format("a {} network", kind));
  network.optional_string("comment", "");  // free text, but text
  spec.nodes_per_group = static_cast<int>(network.integer(
      group_field,
      spec.kind == NetworkKind::kFatTree ? "nodes whose NICs share one leaf switch"
                                         : "nodes whose NIC i shares rail switch i",
      1, kMaxMachineDevices));
  if (nodes % spec.nodes_per_group != 0) {
    network.fail(group_field, fmt::format("{} does not divide the machine's {} nodes (devices / devices_per_node); "
                                          "give a divisor of {}",
                                          spec.nodes_per_group, nodes, nodes));
  }
  spec.oversubscription = network.optional_number("oversubscription", 1.0, NumberRule::kQuantity);
  if (spec.oversubscription < 1) {
    network.fail("oversubscription",
                 fmt::format("{} is below 1; give a leaf's NIC bandwidth over its uplink's (1 = non-blocking, "
                             "2 = half as much up as down)",
                             spec.oversubscription));
  }
  spec.hop_latency_us = network.optional_number("hop_latency_us", 0.0, NumberRule::kQuantityOrZero);
  return spec;
}

TopologySpec parse_topology(const JsonFields& topology, int devices) {
  TopologySpec spec;
  const std::string kind = topology.string("kind", "switch, host-staged or multi-node");
  if (kind == to_string(TopologyKind::kSwitch)) {
    spec.kind = TopologyKind::kSwitch;
    topology.allow_only({"kind", "link", "comment"}, "a switch topology");
    topology.optional_string("comment", "");  // free text, but text
    spec.link = parse_link(topology, "link", "each device's port into the switch", LinkProtocol::kNvlink);
  } else if (kind == to_string(TopologyKind::kHostStaged)) {
    spec.kind = TopologyKind::kHostStaged;
    topology.allow_only({"kind", "bus", "devices_per_bus", "comment"}, "a host-staged topology");
    topology.optional_string("comment", "");  // free text, but text
    spec.bus =
        parse_link(topology, "bus", "the bus a group of devices shares to the host", LinkProtocol::kPcie);
    spec.devices_per_bus = topology.has("devices_per_bus")
                               ? divisor(topology, "devices_per_bus", "", devices, "devices")
                               : devices;
  } else if (kind == to_string(TopologyKind::kMultiNode)) {
    spec.kind = TopologyKind::kMultiNode;
    topology.allow_only({"kind", "link", "nic", "devices_per_node", "nics_per_node", "network", "comment"},
                        "a multi-node topology");
    topology.optional_string("comment", "");  // free text, but text
    spec.link =
        parse_link(topology, "link", "each device's port into its node's switch", LinkProtocol::kNvlink);
    spec.nic = parse_link(topology, "nic", "a NIC into the network between nodes", LinkProtocol::kInfiniband);
    spec.devices_per_node =
        divisor(topology, "devices_per_node", "devices in one node", devices, "devices");
    spec.nics_per_node = divisor(topology, "nics_per_node", "NICs in one node (1 = shared by the node)",
                                 spec.devices_per_node, "devices_per_node");
    if (topology.has("network")) {
      spec.network = parse_network(topology.object("network", "the switches above the NICs"),
                                   devices / spec.devices_per_node);
    }
  } else {
    topology.fail("kind", fmt::format("unknown topology '{}'; use switch, host-staged or multi-node", kind));
  }
  return spec;
}

CalibrationTable parse_calibration(const JsonFields& calibration) {
  calibration.allow_only({"comment", "op_times_us"}, "a calibration table");
  CalibrationTable table;
  table.comment = calibration.optional_string("comment", "");
  const JsonFields times = calibration.object("op_times_us", "measured µs by op signature");
  for (const auto& [signature, value] : times.raw().items()) {
    if (signature.empty()) times.fail("", "an op signature must not be empty");
    table.op_times_us[signature] = times.checked_number(value, signature, NumberRule::kQuantity);
  }
  return table;
}

Machine parse_document(const json& doc, const std::string& source) {
  if (!doc.is_object()) {
    throw InputError(source, "", "a machine file is a JSON object, got " + json_type_name(doc));
  }
  const JsonFields top(doc, "", source);
  top.allow_only({"schema", "name", "comment", "devices", "pooled", "device", "topology", "host_link", "calibration"},
                 "a machine");
  if (top.has("schema")) {
    const std::string schema = top.string("schema", "");
    if (schema != kMachineSchema) {
      top.fail("schema", fmt::format("'{}' is not a machine file this build reads; expected {}",
                                     schema, kMachineSchema));
    }
  }
  Machine machine;
  machine.source = source;
  machine.name = top.string("name", "the machine's name");
  machine.comment = top.optional_string("comment", "");
  machine.devices =
      static_cast<int>(top.integer("devices", "how many devices", 1, kMaxMachineDevices));
  machine.pooled = top.optional_bool("pooled", false);
  machine.device = parse_device(top.object("device", "what every device is"));
  // A pooled machine gives one device of a smaller plan every share
  // (machine_for_plan): its memory times the devices must still count in 64 bits.
  if (machine.pooled && machine.device.memory_gib * machine.devices > 1 << 30) {
    throw InputError(source, "device.memory_GiB",
                     fmt::format("{} GiB × {} pooled devices is more than 2^30 GiB, which a plan on one device "
                                 "would get; give less memory per device",
                                 machine.device.memory_gib, machine.devices));
  }
  machine.topology = parse_topology(top.object("topology", "how the devices are joined"), machine.devices);
  if (top.has("host_link")) {
    machine.host_link = parse_link(top, "host_link", "the link from host memory to each device", LinkProtocol::kPcie);
  }
  if (top.has("calibration")) {
    machine.calibration = parse_calibration(top.object("calibration", "measured op times"));
  }
  return machine;
}

template <class Json>
Json link_json(const LinkSpec& link) {
  Json out;
  out["bandwidth_GBps"] = link.bandwidth_gbps;
  out["latency_us"] = link.latency_us;
  out["protocol"] = to_string(link.protocol);
  return out;
}

}  // namespace

Machine parse_machine_text(std::string_view text, const std::string& source) {
  return parse_document(parse_json_text(text, source), source);
}

Machine load_machine(const std::string& name_or_path) {
  const std::string path = resolve_zoo_file(ZooShelf::kMachines, name_or_path);
  return parse_machine_text(read_input_file(path), path);
}

std::string machine_to_json(const Machine& machine) {
  using ordered = nlohmann::ordered_json;
  ordered doc;
  doc["schema"] = kMachineSchema;
  doc["name"] = machine.name;
  if (!machine.comment.empty()) doc["comment"] = machine.comment;
  doc["devices"] = machine.devices;
  if (machine.pooled) doc["pooled"] = true;

  const DeviceSpec& spec = machine.device;
  ordered device;
  device["name"] = spec.name;
  device["peak_tflops"] = ordered::object();
  for (const auto& [precision, peak] : spec.peak_tflops) device["peak_tflops"][precision] = peak;
  device["matrix_math"] = spec.matrix_math;
  device["memory_bandwidth_GBps"] = spec.memory_bandwidth_gbps;
  device["memory_GiB"] = spec.memory_gib;
  if (spec.launch_overhead_given) device["launch_overhead_us"] = spec.launch_overhead_us;
  if (spec.lane_handoff_us > 0) device["lane_handoff_us"] = spec.lane_handoff_us;
  if (spec.host_issue_us > 0) device["host_issue_us"] = spec.host_issue_us;
  if (spec.sm_count > 0) device["sm_count"] = spec.sm_count;
  if (spec.boost_clock_mhz > 0) device["boost_clock_MHz"] = spec.boost_clock_mhz;
  for (const auto& [field, factors] : {std::pair{"efficiency", &spec.efficiency}, std::pair{"contention", &spec.contention},
                                      std::pair{"speedup", &spec.speedup}}) {
    if (factors->empty()) continue;
    device[field] = ordered::object();
    for (const auto& [kind, value] : *factors) device[field][kind] = value;
  }
  if (!spec.cell_pointwise_ns.empty()) {
    device["cell_pointwise_ns"] = ordered::object();
    for (const auto& [kind, ns] : spec.cell_pointwise_ns) device["cell_pointwise_ns"][kind] = ns;
  }
  if (spec.kernel_passes.measured()) {
    ordered passes;
    passes["fill_ns_per_value"] = spec.kernel_passes.fill_ns_per_value;
    passes["activation_ns_per_value"] = ordered::object();
    for (const auto& [name, ns] : spec.kernel_passes.activation_ns_per_value) passes["activation_ns_per_value"][name] = ns;
    passes["im2col"] = ordered::array();
    for (const Im2colRate& rate : spec.kernel_passes.im2col) {
      passes["im2col"].push_back(
          ordered{{"threads", rate.threads}, {"ns_per_value", rate.ns_per_value}, {"us_per_call", rate.us_per_call}});
    }
    if (!spec.kernel_passes.pool_ns_per_window_value.empty()) {
      passes["pool_ns_per_window_value"] = ordered::object();
      for (const auto& [kind, ns] : spec.kernel_passes.pool_ns_per_window_value) {
        passes["pool_ns_per_window_value"][kind] = ns;
      }
    }
    device["kernel_passes"] = std::move(passes);
  }
  if (spec.last_level_cache_mib > 0) device["last_level_cache_MiB"] = spec.last_level_cache_mib;
  // The default a GPU takes anyway is left out, so a file reads back as it was written.
  const bool default_rules = spec.sm_count > 0 && spec.achieved_rates_name == kDefaultAchievedRates;
  if (!spec.achieved_rates_name.empty() && !default_rules) device["achieved_rates"] = spec.achieved_rates_name;
  if (!spec.weight_stream.empty()) {
    device["weight_stream"] = ordered::array();
    for (const WeightStreamRate& rate : spec.weight_stream) {
      device["weight_stream"].push_back(
          ordered{{"threads", rate.threads}, {"running", rate.running}, {"rows", rate.rows}, {"GBps", rate.gbps}});
    }
  }
  if (!spec.gemm_rates.empty()) {
    device["gemm_rates"] = ordered::array();
    for (const GemmRatePoint& point : spec.gemm_rates) {
      ordered rate;
      rate["m"] = point.m;
      rate["n"] = point.n;
      rate["k"] = point.k;
      rate["GFLOPs"] = point.gflops;
      if (point.threads > 1) rate["threads"] = point.threads;
      if (point.running > 1) rate["running"] = point.running;
      device["gemm_rates"].push_back(rate);
    }
  }
  doc["device"] = device;

  const TopologySpec& topo = machine.topology;
  ordered topology;
  topology["kind"] = to_string(topo.kind);
  switch (topo.kind) {
    case TopologyKind::kSwitch:
      topology["link"] = link_json<ordered>(topo.link);
      break;
    case TopologyKind::kHostStaged:
      topology["devices_per_bus"] = topo.devices_per_bus;
      topology["bus"] = link_json<ordered>(topo.bus);
      break;
    case TopologyKind::kMultiNode:
      topology["devices_per_node"] = topo.devices_per_node;
      topology["nics_per_node"] = topo.nics_per_node;
      topology["link"] = link_json<ordered>(topo.link);
      topology["nic"] = link_json<ordered>(topo.nic);
      if (topo.network.kind != NetworkKind::kNonBlocking) {
        ordered network;
        network["kind"] = to_string(topo.network.kind);
        network[topo.network.kind == NetworkKind::kFatTree ? "nodes_per_leaf" : "nodes_per_rail_group"] =
            topo.network.nodes_per_group;
        network["oversubscription"] = topo.network.oversubscription;
        network["hop_latency_us"] = topo.network.hop_latency_us;
        topology["network"] = std::move(network);
      }
      break;
  }
  doc["topology"] = topology;
  if (machine.host_link) doc["host_link"] = link_json<ordered>(*machine.host_link);

  const CalibrationTable& table = machine.calibration;
  if (!table.comment.empty() || !table.op_times_us.empty()) {
    ordered calibration;
    if (!table.comment.empty()) calibration["comment"] = table.comment;
    calibration["op_times_us"] = ordered::object();
    for (const auto& [signature, us] : table.op_times_us) calibration["op_times_us"][signature] = us;
    doc["calibration"] = calibration;
  }
  return dump_json(doc, 2) + "\n";
}

void check_machine(const Machine& machine) {
  parse_machine_text(machine_to_json(machine),
                     machine.source.empty() ? "machine " + machine.name : machine.source);
}

}  // namespace splitscope
