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
/// Left out: NCCL's tree, CollNet and NVLS algorithms (the schedule is a
/// ring), the ring's plateau factor across nodes, and the per-channel LL128
/// cap (it needs NCCL's channel count, which its topology search decides).

#include <string_view>
#include <vector>

#include "partitioners/plan.hpp"
#include "sim/link_efficiency.hpp"
#include "sim/machine.hpp"

namespace splitscope {

class Topology;
struct CollectiveSchedule;

enum class NcclProtocol { kLl, kLl128, kSimple };

/// "LL", "LL128", "Simple" (NCCL's names).
std::string_view to_string(NcclProtocol protocol);

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

/// How the sends of one ring collective run under NCCL's model.
struct NcclRingSends {
  NcclRing ring;
  NcclProtocol protocol = NcclProtocol::kSimple;
  double message_bytes = 0;         ///< S
  double send_latency_seconds = 0;  ///< latency(protocol) / steps, paid by every send
  /// Per send of the schedule: its bytes × (its route's payload rate /
  /// busbw(protocol) of its route), so that its flow drains in the time
  /// NCCL's model gives its bytes.
  std::vector<double> flow_bytes;
};

/// NCCL's pricing of `schedule`, the sends of collective `op` of `plan`, on
/// `topology` with GPUs of `generation`. False (and `*sends` untouched)
/// when `op` is no ring all-reduce or all-gather, has one participant, or
/// one of its sends crosses an `achieved` link: those run as plain sends at
/// the links' rates, each paying its route's latency.
bool nccl_ring_sends(const Plan& plan, const PlanOp& op, const CollectiveSchedule& schedule,
                     const Topology& topology, NcclGeneration generation, NcclRingSends* sends);

}  // namespace splitscope
