#pragma once
/// \file
/// A machine the simulator predicts a Plan on: identical devices (peak
/// FLOP/s, memory bandwidth and size, launch overhead, per-kind efficiency)
/// joined by one of three topologies, plus an optional table of measured op
/// times. The fields hold exactly what a machine file says, in the file's
/// units (docs/machine-format.md), so a Machine written by machine_to_json()
/// and parsed again is the same Machine; the *_per_second() helpers convert.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <vector>

#include "sim/costs/cpu_pass_rates.hpp"
#include "sim/costs/gemm_rate_curve.hpp"
#include "sim/network/link_efficiency.hpp"

namespace splitscope {

class AchievedRates;

/// The precision of the matrix products that every machine file must give a peak for.
inline constexpr std::string_view kFp32 = "fp32";

/// The efficiency key that covers every op kind not listed separately.
inline constexpr std::string_view kDefaultEfficiency = "default";
/// The efficiency key of the activation applied after an all-reduce (OpRole::kEpilogue).
inline constexpr std::string_view kEpilogueEfficiency = "epilogue";

struct DeviceSpec {
  std::string name;  ///< "NVIDIA H100 SXM5 80GB"
  /// Peak dense FLOP/s of the matrix products, in TFLOP/s, by precision:
  /// "fp32" (required: the CUDA cores), and the matrix units ("tf32", "bf16", ...).
  std::map<std::string, double> peak_tflops;
  /// Which entry of `peak_tflops` prices the matrix products. Plans move
  /// float32 tensors, so bytes are priced as float32 whatever is chosen ("tf32"
  /// is float32 storage with tensor-core products: exactly that).
  std::string matrix_math{kFp32};
  double memory_bandwidth_gbps = 0;  ///< GB/s (1e9 bytes per second)
  double memory_gib = 0;             ///< GiB (2^30 bytes) of device memory
  double launch_overhead_us = 0;     ///< added to every kernel of an op that does any work
  /// Whether `launch_overhead_us` was given. A machine file that leaves it
  /// out gets the datasheet rules' default for the kinds those rules price
  /// (device_facts.hpp); in code, the number set is the number used.
  bool launch_overhead_given = true;
  /// The hand-off between two lanes of a device: a compute op whose input a
  /// copy lane brought starts this long after the copy ends, and a plan's
  /// first ops start this long after the run does. The cpu backend's workers
  /// handing work to each other (measured by calibrate --backend cpu); 0 on
  /// GPUs until measured there (a cross-stream event wait).
  double lane_handoff_us = 0;
  /// What one device call (a kernel launch, a library call, an asynchronous
  /// copy) costs the host thread that issues a plan's work, eagerly
  /// (sim/costs/host_issue.hpp); 0: not modelled, as for a run replayed from a
  /// CUDA graph. Measured by `calibrate` on a GPU.
  double host_issue_us = 0;
  /// Optional datasheet facts the shape rules read (device_facts.hpp says
  /// what each defaults to when 0): streaming multiprocessors, and the boost
  /// clock in MHz that the fp32 peak is quoted at.
  int sm_count = 0;
  double boost_clock_mhz = 0;
  /// Fraction of the roofline an op kind reaches, in (0, 1], keyed by op kind
  /// ("dense", "conv2d", "lstm_cell", ..., "epilogue") or "default". A kind
  /// listed, or every kind when "default" is given, is priced by the plain
  /// roofline at that fraction; the others by the datasheet rules
  /// (op_cost_model.hpp, docs/cost-model.md).
  std::map<std::string, double> efficiency;
  /// On a pooled machine: how many times longer an op of a kind takes with
  /// every device of the pool running beside it than alone (the others
  /// idle), keyed as `efficiency` is; its entry, else "default", else 1.
  /// The simulator slows each op by the devices busy while it runs
  /// (engine.hpp). Empty: an op takes its priced time whatever runs beside it.
  /// On a pooled machine, a key may carry `|shares=N` (N > 1): the entry for
  /// devices of N shares (machine_for_plan()).
  std::map<std::string, double> contention;
  /// On a pooled machine: how many times faster a device of N shares runs
  /// an op of a kind than a device of one share alone, keyed `KIND|shares=N`
  /// (and `default|shares=N`): a kernel that runs on one thread gains
  /// nothing from more shares, a product split over threads less than N.
  /// machine_for_plan() makes a plan's entries plain; where it has some, an
  /// op the table lacks takes its one-share time over its kind's speedup
  /// (its entry, else "default", else 1), instead of the peaks times N.
  std::map<std::string, double> speedup;
  /// cpu: sgemm rates by product shape, a full grid of m, n and k per
  /// thread count (gemm_rate_curve.hpp), as `calibrate --backend cpu` times
  /// them. Where given, dense and conv2d ops that `efficiency` does not list
  /// by name are priced by the cpu kernels' passes at the rates of the
  /// fewest threads given (cpu_kernel_cost.hpp) instead of by a roofline:
  /// alone at the grid timed alone (`running` 1), busy at the grid timed
  /// with the most devices running, where there is one, instead of by
  /// `contention`. machine_for_plan() keeps a pooled plan's share count's
  /// grids where they were timed (which then price those ops without a
  /// speedup), else the one-thread grids, and of them those timed alone and
  /// with the plan's devices running. Empty: not measured.
  std::vector<GemmRatePoint> gemm_rates;
  /// cpu: per recurrent cell kind ("lstm_cell", "gru_cell"), nanoseconds per
  /// (row, hidden unit) of the cell's gate arithmetic on one thread, as
  /// `calibrate --backend cpu` times it. With `gemm_rates`, a cell kind
  /// listed here and not in `efficiency` is priced by its kernel's passes
  /// (cpu_kernel_cost.hpp). Empty: not measured.
  std::map<std::string, double> cell_pointwise_ns;
  /// cpu: the kernels' passes other than products (a bias written, ReLU in
  /// place, im2col on each thread count), as `calibrate --backend cpu` times
  /// them (cpu_pass_rates.hpp). With `gemm_rates`, they price those passes of
  /// dense, conv2d and cell ops; not measured, each costs 8 bytes a value at
  /// the memory rate (cpu_kernel_cost.hpp).
  CpuPassRates kernel_passes;
  /// cpu: the last-level cache one share holds (MiB; a device of N shares N
  /// times it), and the rates a product streams its weights from memory at
  /// (cpu_pass_rates.hpp), as `calibrate --backend cpu` reads and times them.
  /// Where both are given, a device whose plan weights (Plan::memory params)
  /// exceed its cache streams each dense and cell product's weights from
  /// memory: the product takes at least their bytes over that rate (LRU over
  /// a cyclic working set larger than the cache keeps none of it). 0 and
  /// empty: not known, every product from the caches as the grid timed it.
  double last_level_cache_mib = 0;
  std::vector<WeightStreamRate> weight_stream;
  /// GPUs: the achieved-rate rules (sim/costs/achieved_rates.hpp) that price the
  /// kinds the datasheet rules would, as the file names them (a name in
  /// models/rules, or a path); empty: the datasheet rules alone. An
  /// `efficiency` entry and the calibration table still come first.
  std::string achieved_rates_name;
  std::shared_ptr<const AchievedRates> achieved_rates;  ///< loaded from achieved_rates_name

  double matrix_flops_per_second() const;
  double memory_bytes_per_second() const;
  int64_t memory_bytes() const;
  double launch_overhead_seconds() const;
  /// The efficiency of `kind` (an op kind name or "epilogue"): its entry,
  /// else "default", else 1.
  double efficiency_of(std::string_view kind) const;
  /// Whether `kind` has an efficiency of its own or through "default" (and is
  /// therefore priced by the roofline, not by the datasheet rules).
  bool has_efficiency(std::string_view kind) const;
  /// The contention of `kind`: its entry, else "default", else 1.
  double contention_of(std::string_view kind) const;
  /// The speedup of `kind`: its entry, else "default", else 1.
  double speedup_of(std::string_view kind) const;
};

/// One class of link: its bandwidth in each direction, the latency a
/// transfer over it pays once, and the protocol that carries the bytes
/// (link_efficiency.hpp: what part of the bandwidth is payload).
struct LinkSpec {
  double bandwidth_gbps = 0;  ///< GB/s per direction (the line rate, unless `protocol` is achieved)
  double latency_us = 0;      ///< from a transfer's start to its first byte arriving
  LinkProtocol protocol = LinkProtocol::kAchieved;

  /// The line rate, in bytes per second.
  double bytes_per_second() const { return bandwidth_gbps * 1e9; }
  /// The payload rate of data carried as `traffic`: the line rate × the protocol's efficiency.
  double payload_bytes_per_second(LinkTraffic traffic) const {
    return bytes_per_second() * link_efficiency(protocol, traffic);
  }
  double latency_seconds() const { return latency_us * 1e-6; }
  bool operator==(const LinkSpec&) const = default;
};

enum class TopologyKind {
  /// All-to-all switch (NVSwitch): each device has a port (`link`) into a
  /// non-blocking switch; a transfer a -> b crosses a's port up and b's port down.
  kSwitch,
  /// No peer-to-peer: a transfer is staged through host memory over shared
  /// buses (PCIe through a switch uplink, or a CPU's memory bus). Every
  /// `devices_per_bus` devices share one `bus`; a -> b crosses a's bus up and
  /// b's bus down, so concurrent transfers behind one bus split its bandwidth.
  kHostStaged,
  /// Several nodes, each an all-to-all switch (`link`), joined by a
  /// network through NICs: every `devices_per_node / nics_per_node` devices
  /// of a node share one NIC (`nic`). Crossing nodes, a -> b crosses a's NIC
  /// out and b's NIC in; the network above the NICs is non-blocking unless
  /// `network` gives it tiers (NetworkSpec).
  kMultiNode,
};

/// The network above a multi-node machine's NICs.
enum class NetworkKind {
  /// One non-blocking switch: a route crosses the two NICs and nothing else.
  kNonBlocking,
  /// Leaf and spine: the NICs of every `nodes_per_group` nodes plug into one
  /// leaf switch, whose uplink pair to a non-blocking spine carries the
  /// leaf's NIC bandwidth over `oversubscription`.
  kFatTree,
  /// Rail-optimised (NVIDIA's DGX SuperPOD): NIC i of each of
  /// `nodes_per_group` nodes (a rail group, a scalable unit) plugs into rail
  /// switch i of the group, whose uplink pair to a non-blocking spine
  /// carries its NICs' bandwidth over `oversubscription`. Same rail and
  /// group: one switch hop; otherwise through the spine.
  kRail,
};

/// "non-blocking", "fat-tree", "rail"
std::string_view to_string(NetworkKind kind);

/// The tiers of a multi-node network (docs/machine-format.md, "network").
struct NetworkSpec {
  NetworkKind kind = NetworkKind::kNonBlocking;
  int nodes_per_group = 1;      ///< fat-tree: nodes per leaf; rail: nodes per rail group
  double oversubscription = 1;  ///< a leaf's (rail switch's) NIC bandwidth over its uplink's, >= 1
  double hop_latency_us = 0;    ///< added to a route's latency per switch it crosses
  bool operator==(const NetworkSpec&) const = default;
};

/// "switch", "host-staged", "multi-node"
std::string_view to_string(TopologyKind kind);

struct TopologySpec {
  TopologyKind kind = TopologyKind::kSwitch;
  LinkSpec link;             ///< switch, multi-node: each device's port into its switch
  LinkSpec bus;              ///< host-staged: one shared bus
  int devices_per_bus = 1;   ///< host-staged
  int devices_per_node = 1;  ///< multi-node
  int nics_per_node = 1;     ///< multi-node: 1 = one NIC shared by the node; devices_per_node = one per device
  LinkSpec nic;              ///< multi-node
  NetworkSpec network;       ///< multi-node: the tiers above the NICs
};

/// Measured op times that override the roofline, keyed by op_signature()
/// (src/ir/op_signature.hpp). The `calibrate` command fills it. A pooled
/// machine's table may also hold times measured on devices of several shares
/// (pooled_op_key): machine_for_plan() gives a plan's devices those of their
/// share count.
struct CalibrationTable {
  std::string comment;  ///< where and how the times were measured
  std::map<std::string, double> op_times_us;
};

struct Machine {
  std::string name;
  std::string comment;  ///< the sources of every number, and which ones are assumptions
  int devices = 1;
  /// The devices are shares of one pool (a CPU's cores, each device one
  /// share): a plan on fewer devices than the machine has hands each device
  /// devices / plan devices shares (whole ones), as the cpu backend gives each
  /// device cores / devices intra-op threads. Peak FLOP/s, memory bandwidth
  /// and memory scale with the shares; links and calibrated times do not.
  bool pooled = false;
  DeviceSpec device;    ///< every device is one of these
  TopologySpec topology;
  /// The link from host memory to each device (PCIe, one per device): what
  /// an input pipeline's copies cross (exec/input_pipeline.hpp). Optional; a
  /// host-staged machine's bus serves where it is absent.
  std::optional<LinkSpec> host_link;
  CalibrationTable calibration;
  std::string source;   ///< the file it was read from, for messages (not written out)
};

/// The machine as a plan on `plan_devices` devices sees it: `machine` itself,
/// unless it is pooled and the plan leaves devices unused (see
/// Machine::pooled). Then each device has N = devices / plan_devices shares:
/// the op times, contentions and speedups keyed `|shares=N` become the plain
/// ones, and the others go (measured on devices of other sizes, beside other
/// numbers of devices; one device of every share has none beside it). The
/// peaks and memory bandwidth are N times the one-share ones unless there
/// are speedups for N, which then price what the table lacks.
Machine machine_for_plan(const Machine& machine, int plan_devices);

/// The op table key of `signature` measured on a device of `shares` shares
/// of a pooled machine (a CPU device with `shares` cores' threads):
/// `signature` itself for one share, `signature|shares=N` for N > 1. The
/// same suffix keys a pooled machine's contentions and speedups.
std::string pooled_op_key(const std::string& signature, int shares);

/// The op table key of `signature`'s time alone: measured on a device of a
/// pooled machine while the others were idle (the plain key is its time
/// with every device running it): `signature|alone`, before any `|shares=N`.
std::string alone_op_key(const std::string& signature);

/// A key with its `|shares=N` suffix split off: the plain key and N (1 without a suffix).
std::pair<std::string_view, int> split_pooled_key(std::string_view key);

/// Bytes in a GiB.
inline constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;

}  // namespace splitscope
