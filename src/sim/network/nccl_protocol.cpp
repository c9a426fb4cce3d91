#include "sim/network/nccl_protocol.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <set>

#include "plan/collective_schedule.hpp"
#include "plan/ring_steps.hpp"
#include "sim/machine/topology.hpp"

namespace splitscope {
namespace {

constexpr double kMicro = 1e-6;
constexpr double kGiga = 1e9;

constexpr auto index(NcclProtocol p) { return static_cast<size_t>(p); }
constexpr auto index(NcclHardware h) { return static_cast<size_t>(h); }

// tuning.cc: baseLat[Ring] {LL, LL128, Simple}, µs.
constexpr std::array<double, 3> kRingBaseLatencyUs{6.6, 14.0, 8.4};
// tuning.cc: hwLat[hardware][Ring] {LL, LL128, Simple}, µs; rows NVLink, PCI, network.
constexpr std::array<std::array<double, 3>, 3> kRingHardwareLatencyUs{{
    {0.6, 1.9, 3.4},
    {1.0, 2.5, 5.7},
    {2.7, 4.0, 14.0},
}};
// tuning.cc, getNetOverhead: a network post costs 1 µs on an x86 Intel host
// (the default; AMD hosts 2), three of them per Simple step.
constexpr double kNetOverheadUs = 1.0;
constexpr double kSimpleNetOverheads = 3;
// tuning.cc: baseLat[Tree] and hwLat[hardware][Tree] {LL, LL128, Simple}, µs.
constexpr std::array<double, 3> kTreeBaseLatencyUs{6.8, 14.0, 0.0};
constexpr std::array<std::array<double, 3>, 3> kTreeHardwareLatencyUs{{
    {0.6, 1.25, 28.0},
    {1.0, 1.9, 28.0},
    {5.0, 8.5, 28.0},
}};
// tuning.cc: busBw*.92 for any tree; LL 1/3.8 of it; LL128 7/9 in one node, 120/128 across nodes;
// algorithm bandwidth half the bus bandwidth.
constexpr double kTreeShare = 0.92;
constexpr double kTreeLlDivisor = 3.8;
constexpr double kTreeLl128OneNode = 7.0 / 9.0;
constexpr double kTreeLl128AcrossNodes = 120.0 / 128.0;
constexpr double kTreeAlgorithmRatio = 0.5;
// tuning.cc, treeCorrectionFactor[protocol][log2(bytes / 64)], 64 B to 256 MB.
constexpr std::array<std::array<double, 23>, 3> kTreeCorrection{{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
}};
// tuning.cc: LL128 carries 120 of 128 bytes; NCCL's model uses 0.92.
constexpr double kLl128Share = 0.92;
// tuning.cc, llMaxBws (GB/s per GPU): one node by generation {Volta and
// older, Ampere, Hopper}; several nodes by node count {1, 2, more} on an
// Intel host.
constexpr std::array<double, 3> kLlMaxOneNodeGBps{39.0, 87.7, 87.7};
constexpr std::array<double, 3> kLlMaxAcrossNodesGBps{39.0, 39.0, 20.4};
// topo.h: NVLink GB/s per link as NCCL counts it, over the link's line rate
// per direction (NVLink 1: 20 GB/s; NVLink 2-4: 25 GB/s).
constexpr double kNvlinkSharePascal = 18.0 / 20;
constexpr double kNvlinkShareVoltaAmpere = 20.0 / 25;
constexpr double kNvlinkShareHopper = 20.6 / 25;
// topo.h: PCI_BW 12 GB/s for PCIe 3.0 x16, whose line rate is 8 GT/s · 16 · 128/130 / 8 = 15.754 GB/s.
constexpr double kPcieShare = 12.0 / (8.0 * 16 * 128 / 130 / 8);

/// log2i: the floor of log2(n), 0 for n < 2 (NCCL's helper).
int floor_log2(int64_t n) {
  int log = 0;
  while (n >= 2) {
    n >>= 1;
    ++log;
  }
  return log;
}

/// llMaxBws, GB/s per GPU: one node by generation, several by node count.
double ll_max_bytes_per_second(const NcclRing& ring) {
  const double gbps = ring.nodes == 1 ? kLlMaxOneNodeGBps[ring.generation == NcclGeneration::kHopper   ? 2
                                                          : ring.generation == NcclGeneration::kAmpere ? 1
                                                                                                       : 0]
                                      : kLlMaxAcrossNodesGBps[ring.nodes == 2 ? 1 : 2];
  return gbps * kGiga;
}

}  // namespace

std::string_view to_string(NcclAlgorithm algorithm) {
  return algorithm == NcclAlgorithm::kTree ? "Tree" : "Ring";
}

std::string_view to_string(NcclProtocol protocol) {
  switch (protocol) {
    case NcclProtocol::kLl: return "LL";
    case NcclProtocol::kLl128: return "LL128";
    case NcclProtocol::kSimple: return "Simple";
  }
  return "?";
}

NcclGeneration nccl_generation(const DeviceSpec& device) {
  const auto peak = [&](const char* precision) {
    const auto it = device.peak_tflops.find(precision);
    return it == device.peak_tflops.end() ? 0.0 : it->second;
  };
  if (peak("fp8") > 0) return NcclGeneration::kHopper;
  if (peak("tf32") > 0 || peak("bf16") > 0) return NcclGeneration::kAmpere;
  if (peak("fp16") >= 4 * peak("fp32") && peak("fp32") > 0) return NcclGeneration::kVolta;
  return NcclGeneration::kPascal;
}

bool nccl_hardware(LinkProtocol protocol, NcclHardware* hardware) {
  switch (protocol) {
    case LinkProtocol::kAchieved: return false;
    case LinkProtocol::kNvlink: *hardware = NcclHardware::kNvlink; return true;
    case LinkProtocol::kPcie: *hardware = NcclHardware::kPci; return true;
    case LinkProtocol::kInfiniband: *hardware = NcclHardware::kNet; return true;
  }
  return false;
}

double nccl_link_share(NcclHardware hardware, NcclGeneration generation) {
  switch (hardware) {
    case NcclHardware::kNvlink:
      switch (generation) {
        case NcclGeneration::kPascal: return kNvlinkSharePascal;
        case NcclGeneration::kVolta:
        case NcclGeneration::kAmpere: return kNvlinkShareVoltaAmpere;
        case NcclGeneration::kHopper: return kNvlinkShareHopper;
      }
      return kNvlinkShareVoltaAmpere;
    case NcclHardware::kPci: return kPcieShare;
    case NcclHardware::kNet: return 1.0;
  }
  return 1.0;
}

int NcclRing::steps() const { return kind == CollectiveKind::kAllReduce ? 2 * (ranks - 1) : ranks - 1; }

bool nccl_enabled(const NcclRing& ring, NcclProtocol protocol) {
  if (protocol != NcclProtocol::kLl128) return true;
  return ring.intra == NcclHardware::kNvlink && ring.generation != NcclGeneration::kPascal;
}

double nccl_protocol_rate(const NcclRing& ring, NcclProtocol protocol, double simple_bytes_per_second) {
  switch (protocol) {
    case NcclProtocol::kSimple: return simple_bytes_per_second;
    case NcclProtocol::kLl128: return simple_bytes_per_second * kLl128Share;
    case NcclProtocol::kLl: {
      const bool quarter = ring.nodes > 1 || ring.kind == CollectiveKind::kAllReduce;
      return std::min(simple_bytes_per_second / (quarter ? 4.0 : 3.0), ll_max_bytes_per_second(ring));
    }
  }
  return simple_bytes_per_second;
}

double nccl_latency_seconds(const NcclRing& ring, NcclProtocol protocol) {
  const int steps = ring.steps();
  double intra_us = kRingHardwareLatencyUs[index(ring.intra)][index(protocol)];
  int inter_steps = 0;
  if (ring.nodes > 1) {
    inter_steps = ring.kind == CollectiveKind::kAllReduce ? 2 * ring.nodes : ring.nodes - 1;
    inter_steps = std::min(inter_steps, steps);
    const double overhead = kNetOverheadUs * (protocol == NcclProtocol::kSimple ? kSimpleNetOverheads : 1);
    intra_us = std::max(intra_us, overhead);
  }
  const double inter_us = kRingHardwareLatencyUs[index(NcclHardware::kNet)][index(protocol)];
  return (kRingBaseLatencyUs[index(protocol)] + (steps - inter_steps) * intra_us + inter_steps * inter_us) * kMicro;
}

double nccl_seconds(const NcclRing& ring, NcclProtocol protocol, double bytes) {
  const double bus = nccl_protocol_rate(ring, protocol, ring.bus_bytes_per_second);
  const double algorithm_rate = bus * ring.ranks / ring.steps();
  return nccl_latency_seconds(ring, protocol) + bytes / algorithm_rate;
}

NcclProtocol nccl_protocol(const NcclRing& ring, double bytes) {
  NcclProtocol best = NcclProtocol::kSimple;
  double best_seconds = std::numeric_limits<double>::infinity();
  for (NcclProtocol p : {NcclProtocol::kLl, NcclProtocol::kLl128, NcclProtocol::kSimple}) {
    if (!nccl_enabled(ring, p)) continue;
    const double seconds = nccl_seconds(ring, p, bytes);
    if (seconds < best_seconds) {
      best = p;
      best_seconds = seconds;
    }
  }
  return best;
}

double nccl_tree_bus_rate(const NcclRing& ring, NcclProtocol protocol) {
  const double simple = kTreeShare * ring.bus_bytes_per_second;
  switch (protocol) {
    case NcclProtocol::kSimple: return simple;
    case NcclProtocol::kLl: return std::min(simple / kTreeLlDivisor, ll_max_bytes_per_second(ring));
    case NcclProtocol::kLl128: return simple * (ring.nodes == 1 ? kTreeLl128OneNode : kTreeLl128AcrossNodes);
  }
  return simple;
}

double nccl_tree_latency_seconds(const NcclRing& ring, NcclProtocol protocol) {
  const double intra_us = kTreeHardwareLatencyUs[index(ring.intra)][index(protocol)];
  const double inter_us = kTreeHardwareLatencyUs[index(NcclHardware::kNet)][index(protocol)];
  const int per_node = ring.ranks / ring.nodes;
  return (kTreeBaseLatencyUs[index(protocol)] + 2 * ((per_node - 1) * intra_us + floor_log2(ring.nodes) * inter_us)) *
         kMicro;
}

double nccl_tree_correction(NcclProtocol protocol, double bytes) {
  const int log = floor_log2(static_cast<int64_t>(bytes) >> 6);
  return log < static_cast<int>(kTreeCorrection[0].size()) ? kTreeCorrection[index(protocol)][static_cast<size_t>(log)]
                                                           : 1.0;
}

double nccl_tree_algorithm_rate(const NcclRing& ring, NcclProtocol protocol, double bytes) {
  return nccl_tree_bus_rate(ring, protocol) * kTreeAlgorithmRatio * nccl_tree_correction(protocol, bytes);
}

double nccl_tree_seconds(const NcclRing& ring, NcclProtocol protocol, double bytes) {
  return nccl_tree_latency_seconds(ring, protocol) + bytes / nccl_tree_algorithm_rate(ring, protocol, bytes);
}

NcclChoice nccl_choice(const NcclRing& ring, double bytes) {
  NcclChoice best;
  best.seconds = std::numeric_limits<double>::infinity();
  for (NcclAlgorithm algorithm : {NcclAlgorithm::kTree, NcclAlgorithm::kRing}) {
    if (algorithm == NcclAlgorithm::kTree && ring.kind != CollectiveKind::kAllReduce) continue;
    for (NcclProtocol p : {NcclProtocol::kLl, NcclProtocol::kLl128, NcclProtocol::kSimple}) {
      if (!nccl_enabled(ring, p)) continue;
      const double seconds =
          algorithm == NcclAlgorithm::kTree ? nccl_tree_seconds(ring, p, bytes) : nccl_seconds(ring, p, bytes);
      if (seconds < best.seconds) best = {algorithm, p, seconds};
    }
  }
  return best;
}

std::optional<NcclChoice> nccl_choice_on(const Plan& plan, const PlanOp& op, const Machine& machine) {
  const Topology topology(machine);
  NcclRingSends sends;
  // A ring's steps have the routes of its sends (participant i to i+1), so
  // one step prices it as its whole schedule does, without unrolling it.
  if (const std::optional<RingSteps> steps = ring_steps(plan, op)) {
    const std::vector<NcclSendShape> step = nccl_ring_step(op, steps->send_bytes);
    if (!nccl_ring_pricing(plan, op, step, steps->segments, topology, nccl_generation(machine.device), &sends)) {
      return std::nullopt;
    }
    return nccl_choice(sends.ring, sends.message_bytes);
  }
  if (!nccl_ring_sends(plan, op, collective_schedule(plan, op), topology, nccl_generation(machine.device), &sends)) {
    return std::nullopt;
  }
  return nccl_choice(sends.ring, sends.message_bytes);
}

std::vector<NcclSendShape> nccl_ring_step(const PlanOp& op, int64_t bytes) {
  const size_t n = op.participants.size();
  std::vector<NcclSendShape> step;
  step.reserve(n);
  for (size_t i = 0; i < n; ++i) step.push_back(NcclSendShape{op.participants[i], op.participants[(i + 1) % n], bytes});
  return step;
}

bool nccl_ring_sends(const Plan& plan, const PlanOp& op, const CollectiveSchedule& schedule,
                     const Topology& topology, NcclGeneration generation, NcclRingSends* sends) {
  std::vector<NcclSendShape> shapes;
  shapes.reserve(schedule.sends.size());
  for (const CollectiveSend& send : schedule.sends) {
    shapes.push_back(NcclSendShape{send.from_device, send.to_device, send.bytes});
  }
  return nccl_ring_pricing(plan, op, shapes, schedule.segments, topology, generation, sends);
}

bool nccl_ring_pricing(const Plan& plan, const PlanOp& op, std::span<const NcclSendShape> shapes, int segments,
                       const Topology& topology, NcclGeneration generation, NcclRingSends* sends) {
  // NCCL's step model here is its ring all-reduce's and all-gather's; the
  // other kinds run as plain sends.
  if (op.role != OpRole::kCollective || op.algorithm != CollectiveAlgorithm::kRing ||
      (op.collective != CollectiveKind::kAllReduce && op.collective != CollectiveKind::kAllGather) ||
      op.participants.size() < 2) {
    return false;
  }
  // Each send's route: its Simple rate (the slowest link at the lower of its
  // payload rate and NCCL's share of its line rate) and its payload rate.
  struct RouteRates {
    double simple = std::numeric_limits<double>::infinity();
    double payload = std::numeric_limits<double>::infinity();
  };
  std::vector<RouteRates> rates;
  rates.reserve(shapes.size());
  NcclRing ring;
  ring.kind = op.collective;
  ring.ranks = static_cast<int>(op.participants.size());
  ring.generation = generation;
  ring.bus_bytes_per_second = std::numeric_limits<double>::infinity();
  bool intra_seen = false;
  for (const NcclSendShape& send : shapes) {
    if (send.from_device == send.to_device) return false;
    const Route route = topology.route(send.from_device, send.to_device);
    const bool crosses_nodes = topology.node_of(send.from_device) != topology.node_of(send.to_device);
    RouteRates route_rates;
    for (int id : route.links()) {
      const Link& link = topology.links()[static_cast<size_t>(id)];
      NcclHardware hardware = NcclHardware::kNvlink;
      if (!nccl_hardware(link.protocol, &hardware)) return false;
      if (!crosses_nodes && !intra_seen) {
        ring.intra = hardware;
        intra_seen = true;
      }
      const double simple =
          std::min(link.bytes_per_second, nccl_link_share(hardware, generation) * link.line_bytes_per_second);
      route_rates.simple = std::min(route_rates.simple, simple);
      route_rates.payload = std::min(route_rates.payload, link.bytes_per_second);
    }
    ring.bus_bytes_per_second = std::min(ring.bus_bytes_per_second, route_rates.simple);
    rates.push_back(route_rates);
  }
  // A ring of one GPU per node has no link inside a node: NCCL then counts its steps as network ones.
  if (!intra_seen) ring.intra = NcclHardware::kNet;
  std::set<int> nodes;
  for (int device : op.participants) nodes.insert(topology.node_of(device));
  ring.nodes = static_cast<int>(nodes.size());

  double message = 0;
  if (op.collective == CollectiveKind::kAllReduce) {
    // A bucket's tensor is the concatenation of its segments (the first participant's inputs): NCCL
    // sees one message of all of them, which decides its protocol and algorithm.
    for (int k = 0; k < segments; ++k) {
      message += static_cast<double>(plan.value(op.inputs[static_cast<size_t>(k)]).bytes);
    }
  } else {
    for (int value : op.inputs) message += static_cast<double>(plan.value(value).bytes);
  }
  NcclRingSends priced;
  priced.ring = ring;
  priced.message_bytes = message;
  const NcclChoice choice = nccl_choice(ring, message);
  priced.algorithm = choice.algorithm;
  priced.protocol = choice.protocol;
  priced.flow_bytes.reserve(shapes.size());
  if (choice.algorithm == NcclAlgorithm::kTree) {
    // The ring's critical path is its steps, each a chunk of S/n: draining at
    // algbw(tree) · steps / n makes it S / algbw(tree), plus the tree's latency.
    const double tree_rate = nccl_tree_algorithm_rate(ring, choice.protocol, message) * ring.steps() / ring.ranks;
    priced.send_latency_seconds = nccl_tree_latency_seconds(ring, choice.protocol) / ring.steps();
    for (size_t i = 0; i < shapes.size(); ++i) {
      priced.flow_bytes.push_back(static_cast<double>(shapes[i].bytes) * rates[i].payload / tree_rate);
    }
  } else {
    priced.send_latency_seconds = nccl_latency_seconds(ring, choice.protocol) / ring.steps();
    for (size_t i = 0; i < shapes.size(); ++i) {
      const double rate = nccl_protocol_rate(ring, choice.protocol, rates[i].simple);
      priced.flow_bytes.push_back(static_cast<double>(shapes[i].bytes) * rates[i].payload / rate);
    }
  }
  *sends = std::move(priced);
  return true;
}

}  // namespace splitscope
