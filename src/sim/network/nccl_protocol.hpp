#pragma once
/// \file
/// A ring collective as NCCL runs it: NCCL's own tuning model
/// (src/graph/tuning.cc, ncclTopoTuneModel and ncclTopoGetAlgoTime, NCCL
/// 2.18-2.19; link figures from src/graph/topo.h), which NCCL uses to choose
/// a protocol by message size. Its estimate of a ring collective of S bytes
/// over n ranks under protocol p is
///
///   time(p) = latency(p) + S / algbw(p),  algbw(p) = busbw(p) · n / steps
///
/// with steps = 2(n-1) for an all-reduce and n-1 for an all-gather (S is the
/// tensor an all-reduce sums, the whole output of an all-gather: nccl-tests'
/// sizes, doc/PERFORMANCE.md), and NCCL runs the p of least time. For a ring:
///
/// - latency(p) = baseLat[p] + steps · hwLat[hardware][p]  (one node), or
///   baseLat[p] + (steps - interSteps) · intra + interSteps · hwLat[net][p]
///   across nodes (interSteps = 2·nodes for an all-reduce, nodes-1 for an
///   all-gather; intra = max(hwLat[intra][p], the network's post overhead,
///   1 µs on x86, 3 µs for Simple)). baseLat ring {LL 6.6, LL128 14.0,
///   Simple 8.4} µs; hwLat ring: NVLink {0.6, 1.9, 3.4}, PCI {1.0, 2.5, 5.7},
///   network {2.7, 4.0, 14.0} µs.
/// - busbw(Simple) = the ring's bus bandwidth: the slowest link a send
///   crosses, at the lower of our payload rate (link_efficiency.hpp) and the
///   share of the line rate that NCCL's topology assumes (nccl_link_share()).
/// - busbw(LL) = min(busbw(Simple) / 4, llMaxBw): LL stores 4 bytes of flag
///   with every 4 bytes of data in 8-byte writes (half the bytes are data)
///   and NCCL's model takes 1/4 for an all-reduce or across nodes, 1/3 for an
///   all-gather in one node; llMaxBw caps it per GPU (one node: 39 GB/s on
///   Volta and older, 87.7 on Ampere and Hopper; two nodes 39, more 20.4,
///   the Intel-CPU column).
/// - busbw(LL128) = busbw(Simple) · 0.92 (120 of every 128 bytes are data;
///   NCCL's 0.92). NCCL enables LL128 only over NVLink on Volta, Ampere and
///   Hopper (the rest "may cause silent data corruption"), so never on PCIe
///   nor on Pascal.
///
/// The simulator runs the ring's sends itself (collective_schedule.hpp), so
/// a priced collective lets each send pay latency(p) / steps (the sends of
/// one step run together; a ring's critical path is its steps) and drain
/// its bytes at busbw(p) of its own route instead of the link's payload rate.
///
/// NCCL's tree for an all-reduce (a chain inside each node, a double binary
/// tree across nodes: reduce up, broadcast down, pipelined), from the same
/// tuning model:
///
///   time = latency + S / (busbw · 0.5 · correction(p, S))
///   busbw(Simple) = 0.92 · bw, bw the ring's: the slowest link a send
///     crosses (tuning.cc takes the graph's bwIntra on up to 2 nodes, else
///     its bwInter; NCCL's topology search sets both per channel, and a
///     channel across nodes passes a NIC, so both are the bottleneck's);
///   busbw(LL) = min(busbw(Simple) / 3.8, llMaxBw);
///   busbw(LL128) = busbw(Simple) · (7/9 in one node, 120/128 across nodes);
///   latency = baseLat[p] + 2 · ((n/nodes − 1) · hwLat[intra][p] +
///     log2(nodes) · hwLat[net][p]), baseLat tree {LL 6.8, LL128 14.0,
///     Simple 0}, hwLat tree NVLink {0.6, 1.25, 28}, PCI {1.0, 1.9, 28},
///     network {5.0, 8.5, 28} µs;
///   correction: treeCorrectionFactor[p][log2(S/64)] below 256 MB, NCCL's
///     static factor for trees "not perfectly sticking to the model for
///     medium sizes" (0.4 to 1).
///
/// NCCL runs the (algorithm, protocol) of least time, the tree only for an
/// all-reduce (nccl_choice()). The simulator has no tree schedule: an
/// all-reduce NCCL's model gives to the tree runs the ring's sends paced to
/// the tree's time (each send pays latency / steps and drains at the rate
/// that makes the ring's critical path S / algbw(tree)), on the ring's
/// links. The time is the tree's; which links carry its bytes is the ring's.
///
/// Left out: CollNet and NVLS, the ring's plateau factor across nodes, the
/// per-channel caps (perChMaxTreeBw, the LL128 caps: they need NCCL's
/// channel count, which its topology search decides), and the tree graph's
/// 0.85 for NIC traffic through one GPU.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "plan/plan.hpp"
#include "sim/network/link_efficiency.hpp"
#include "sim/machine/machine.hpp"

namespace splitscope {

class Topology;
struct CollectiveSchedule;

enum class NcclProtocol { kLl, kLl128, kSimple };

/// "LL", "LL128", "Simple" (NCCL's names).
std::string_view to_string(NcclProtocol protocol);

/// The algorithms of NCCL's model that splitscope prices.
enum class NcclAlgorithm { kTree, kRing };

/// "Tree", "Ring" (NCCL's names).
std::string_view to_string(NcclAlgorithm algorithm);

/// The rows of NCCL's latency table.
enum class NcclHardware { kNvlink, kPci, kNet };

/// The GPU generations NCCL's tables tell apart (its compute-capability
/// indices, and topo.h's NVLink bandwidth per generation).
enum class NcclGeneration { kPascal, kVolta, kAmpere, kHopper };

/// The generation of `device`, from the precisions its datasheet lists:
/// fp8 matrix math first came with Hopper (compute capability 9.0), tf32 and
/// bf16 with Ampere (8.0), fp16 tensor cores (an fp16 peak at least 4× the
/// fp32 peak; Pascal's fp16 is 2× on the CUDA cores) with Volta (7.0)
/// (NVIDIA's Volta, Ampere and Hopper architecture whitepapers).
NcclGeneration nccl_generation(const DeviceSpec& device);

/// The row of NCCL's latency table for a link of `protocol`. False for an
/// `achieved` link: its rate was measured with whatever ran over it, so no
/// NCCL model applies on top.
bool nccl_hardware(LinkProtocol protocol, NcclHardware* hardware);

/// The share of a link's line rate that NCCL's topology (topo.h) counts on:
/// NVLink SM60 18 of 20 GB/s per link, SM70 and SM80 20 of 25, SM90 20.6 of
/// 25; PCI_BW 12 GB/s of PCIe 3.0 x16's 15.75; a NIC its full speed
/// (topo.cc: net bw = Mbit/s / 8000).
double nccl_link_share(NcclHardware hardware, NcclGeneration generation);

/// A ring collective as NCCL's model sees it.
struct NcclRing {
  CollectiveKind kind = CollectiveKind::kAllReduce;  ///< all-reduce or all-gather
  int ranks = 2;
  int nodes = 1;
  NcclHardware intra = NcclHardware::kNvlink;  ///< the link within a node
  NcclGeneration generation = NcclGeneration::kVolta;
  double bus_bytes_per_second = 0;  ///< busbw(Simple): the slowest send's Simple rate

  /// Ring steps: 2(n-1) for an all-reduce, n-1 for an all-gather.
  int steps() const;
};

/// Whether NCCL runs `protocol` on `ring` by default.
bool nccl_enabled(const NcclRing& ring, NcclProtocol protocol);
/// busbw(protocol) of a route whose Simple rate is `simple_bytes_per_second`.
double nccl_protocol_rate(const NcclRing& ring, NcclProtocol protocol, double simple_bytes_per_second);
/// latency(protocol), in seconds.
double nccl_latency_seconds(const NcclRing& ring, NcclProtocol protocol);
/// time(protocol) for `bytes`, in seconds.
double nccl_seconds(const NcclRing& ring, NcclProtocol protocol, double bytes);
/// The enabled protocol of least time(protocol) for `bytes` (on a tie, the
/// one NCCL tries first: LL, LL128, Simple).
NcclProtocol nccl_protocol(const NcclRing& ring, double bytes);

/// The tree's busbw(protocol) for `ring`'s ranks, in bytes/s (before the 0.5 and the correction).
double nccl_tree_bus_rate(const NcclRing& ring, NcclProtocol protocol);
/// The tree's latency(protocol), in seconds.
double nccl_tree_latency_seconds(const NcclRing& ring, NcclProtocol protocol);
/// treeCorrectionFactor for `bytes` under `protocol` (1 from 256 MB).
double nccl_tree_correction(NcclProtocol protocol, double bytes);
/// The tree's algbw(protocol) for `bytes`: half its busbw, times the correction; bytes/s.
double nccl_tree_algorithm_rate(const NcclRing& ring, NcclProtocol protocol, double bytes);
/// The tree's time(protocol) for `bytes`, in seconds.
double nccl_tree_seconds(const NcclRing& ring, NcclProtocol protocol, double bytes);

/// What NCCL's model runs a collective as, and its estimate.
struct NcclChoice {
  NcclAlgorithm algorithm = NcclAlgorithm::kRing;
  NcclProtocol protocol = NcclProtocol::kSimple;
  double seconds = 0;
};

/// The (algorithm, protocol) of least time for `bytes`: the tree only for an
/// all-reduce; on a tie, the one NCCL tries first (tree before ring; LL,
/// LL128, Simple).
NcclChoice nccl_choice(const NcclRing& ring, double bytes);

/// How the sends of one ring collective run under NCCL's model.
struct NcclRingSends {
  NcclRing ring;
  NcclAlgorithm algorithm = NcclAlgorithm::kRing;  ///< kTree: the ring's sends paced to the tree's time
  NcclProtocol protocol = NcclProtocol::kSimple;
  double message_bytes = 0;         ///< S (a bucket's: all its segments, one participant's inputs)
  double send_latency_seconds = 0;  ///< latency(algorithm, protocol) / steps, paid by every send
  /// Per send of the schedule: its bytes × (its route's payload rate /
  /// busbw(protocol) of its route), so that its flow drains in the time
  /// NCCL's model gives its bytes.
  std::vector<double> flow_bytes;
};

/// One send of a ring, as NCCL's pricing reads it.
struct NcclSendShape {
  int from_device = 0;
  int to_device = 0;
  int64_t bytes = 0;
};

/// The sends of one step of ring `op`, each of `bytes`: participant i to i+1.
std::vector<NcclSendShape> nccl_ring_step(const PlanOp& op, int64_t bytes);

/// NCCL's pricing of `sends` (a ring's sends, or one step's: the same routes)
/// of collective `op` of `plan`, whose participants hold `segments` values
/// each, as nccl_ring_sends() says; flow_bytes has one entry per send given.
bool nccl_ring_pricing(const Plan& plan, const PlanOp& op, std::span<const NcclSendShape> sends, int segments,
                       const Topology& topology, NcclGeneration generation, NcclRingSends* priced);

/// NCCL's pricing of `schedule`, the sends of collective `op` of `plan`, on
/// `topology` with GPUs of `generation`. False (and `*sends` untouched)
/// when `op` is no ring all-reduce or all-gather, has one participant, or
/// one of its sends crosses an `achieved` link: those run as plain sends at
/// the links' rates, each paying its route's latency.
bool nccl_ring_sends(const Plan& plan, const PlanOp& op, const CollectiveSchedule& schedule,
                     const Topology& topology, NcclGeneration generation, NcclRingSends* sends);

/// What the simulator runs collective `op` of `plan` as on `machine` (plan
/// device d on machine device d), with NCCL's estimate; nullopt where it
/// runs plain sends (nccl_ring_sends() says when).
std::optional<NcclChoice> nccl_choice_on(const Plan& plan, const PlanOp& op, const Machine& machine);

}  // namespace splitscope
