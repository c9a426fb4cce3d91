#pragma once
/// \file
/// The Plan: what runs where. It is the one contract between the partitioners
/// and everything that runs a plan (the cpu and cuda executors, the simulator).
///
/// A Plan is a list of ops in dependency order. Each op reads and writes
/// Values: slices of graph tensors resident on one device. Compute ops run a
/// slice of a graph op on one device; every byte that crosses devices does so
/// through an explicit Transfer or Collective op. Pipelining adds micro-batch
/// copies of the graph, each over its own rows of the batch.
///
/// What an executor does with each op (the semantics every backend shares):
/// - Values are float32 (Plan::precision fp32 or tf32, which the cpu and
///   cuda backends run; the simulator prices the others at their stored
///   bytes), stored [rows][channels][inner...] (rows = batch.size(),
///   channels = channels.size(), inner = the node output's shape past axis 0).
/// - Network inputs (Plan::inputs, producer -1) hold the input from
///   params.hpp's input_value(): the whole input [B, ...], or for a step input
///   node (OpNode::step = t) of a sequence [T, F] the rows x[b, t, :] (element
///   b·T·F + t·F + f). They are filled before the run and not timed.
/// - Compute: computes `slice` of `node`. Every input value has the op's batch
///   rows; its channel range contains needed_input_channels(), which the
///   kernel reads at offset (needed.begin - value.channels.begin). Weights are
///   the slice of params.hpp's tensors that its parameter value holds
///   (PlanOp::params; Plan::parameters are resident before the run, untimed). A dense slice with a partial reduce
///   range writes the partial sum X[:, reduce]·W[reduce, out], adding the bias
///   only if reduce.begin == 0, and applies no activation (an epilogue does,
///   after the all-reduce). Cells with no h/c input (t = 0) start from zeros.
/// - Epilogue: applies the node's activation to its input (an all-reduced sum).
/// - Training (graph.is_training()): a compute op of an OpDef::writes_gradient
///   kind writes a gradient value (its rows' dW, db), adding the gradient
///   value of the previous micro-batch when it has one (an extra last input).
///   Update: applies the graph's optimizer to parameter value `params` in
///   place from its gradient (inputs: [gradient]), keeping the optimizer's
///   state (momentum) between runs; one run of the plan is one training step.
///   It is the last op of its device's schedule, so every op reading the
///   weights has run.
/// - Transfer: copies the value to `device`; the copy has the same ranges.
/// - All-gather: every participant gets the union of the input slices,
///   assembled in channel order. Concat: the same, on the root only.
///   All-reduce: every participant gets the element-wise sum of the inputs.
///   Each runs as the sends of its `algorithm` (collective_schedule.hpp).
/// - A device runs its compute and epilogue ops in `schedule` order, which
///   is authoritative (any order that respects the data flow: a pipeline's
///   fill-drain, or 1F1B); transfers and collectives run on copy lanes as
///   soon as their inputs exist. plan_walk.hpp holds these rules for every
///   backend.
/// - Timeline spans: one per compute/epilogue op on its device's compute
///   lane; one per transfer on the destination's copy-in lane; one per output
///   device of a collective, on that device's copy-in lane (plan_walk.hpp:
///   op_spans() gives each span's device, lane, kind, FLOPs and bytes).
/// - Plan::outputs tile the network output [B, ...]; the executor assembles
///   them after the run (untimed).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.hpp"
#include "ir/precision.hpp"
#include "ir/range.hpp"
#include "ir/slice.hpp"

namespace splitscope {

/// What a partial value is a partial sum over, awaiting an all-reduce that
/// completes it.
enum class PartialSum : uint8_t {
  kNone,       ///< a finished value
  kReduction,  ///< the reduction axis of its op (OpDef::split.reduce: a dense slice's input features)
  kBatch,      ///< a weight gradient over only some rows of the batch (one micro-batch, one replica)
  /// A weight gradient over only some positions of each sample's sequence
  /// (a sequence-parallel layer norm's, OpDef::sums_over_positions).
  kPositions,
};

/// What a value holds.
enum class ValueRole : uint8_t {
  kActivation,  ///< a slice of a graph tensor (or a network input)
  kParameter,   ///< a slice of a layer's weights, resident before the run
  kGradient,    ///< the gradient of a parameter value's weights (training), over rows `batch`
};

/// A slice resident on one device.
/// - An activation: rows `batch` (micro-batch `microbatch`) and channels
///   `channels` (along axis 0) of output `output` of graph node `node`,
///   stored contiguously as [rows][channels][inner...].
/// - A parameter: the weights (every tensor of params.hpp) that a slice with
///   output range `channels` and reduction range `reduce` of node `node`
///   reads; one per device and weight set (OpNode::param_key) and ranges,
///   shared by the ops that read the same (a recurrent layer's steps, a
///   pipeline stage's micro-batches). Listed in Plan::parameters; read
///   through PlanOp::params; `batch` is empty.
/// - A gradient: the gradient of the weights of a parameter value (same
///   `node`, `channels`, `reduce`, laid out like it), summed over rows
///   `batch` (micro-batches 0..`microbatch` of a pipeline); `partial` is
///   kBatch until it covers the whole batch.
struct Value {
  int id = -1;
  ValueRole role = ValueRole::kActivation;
  int device = 0;
  NodeId node = 0;
  int output = 0;
  int microbatch = 0;
  Range batch;
  Range channels;
  Range reduce;  ///< parameters: the reduction range of the slices reading it
  /// Its share of the last axis (the head-wise split, ir/feature_cut.hpp),
  /// stored end to end as [rows][channels][.., cut features]; a parameter's
  /// or gradient's: the linear slice's cut of its weights. Whole otherwise.
  FeatureCut features;
  PartialSum partial = PartialSum::kNone;  ///< the axis it is a partial sum over, if any
  bool pre_activation = false;  ///< an all-reduced sum whose activation is still to be applied
  int producer = -1;     ///< the op writing it; -1 for a network input, provided before the run
  int64_t bytes = 0;     ///< bytes of the slice at the plan's precision (value_element_bytes)

  bool is_partial() const { return partial != PartialSum::kNone; }
};

enum class OpRole {
  kCompute,     ///< a slice of a graph op on one device
  kEpilogue,    ///< the activation of an all-reduced sum (tensor parallelism), on one device
  kTransfer,    ///< one value copied from `src_device` to `device`
  kCollective,  ///< a collective over `participants`
  kUpdate,      ///< the optimizer step of one parameter value from its gradient, on its device (training)
};

enum class CollectiveKind {
  kAllGather,  ///< channel slices on each participant -> the whole tensor on each
  kAllReduce,  ///< partial sums on each participant -> the sum on each
  kConcat,     ///< channel slices on the participants -> the whole tensor on one root (`device`)
  /// Partial sums of the whole tensor on each participant -> participant i
  /// gets its chunk of the sum: the i-th of N even channel ranges (the first
  /// C mod N one channel longer) of every row, as nccl-tests' reduce_scatter
  /// (a tensor of several rows: sequence parallelism's, a sequence's positions).
  kReduceScatter,
  /// The root's (`device`, participants[0]) tensor -> the same tensor on every participant.
  kBroadcast,
};

/// How a collective moves its data (collective_schedule.hpp). Every backend
/// runs the algorithm its plan op names, so measured and predicted
/// collectives move the same bytes along the same paths.
enum class CollectiveAlgorithm {
  kRing,    ///< all-gather and all-reduce: NCCL's ring
  kDirect,  ///< concat: every participant sends straight to the root
};

std::string_view to_string(OpRole role);
std::string_view to_string(CollectiveKind kind);
std::string_view to_string(CollectiveAlgorithm algorithm);

struct PlanOp {
  int id = -1;
  OpRole role = OpRole::kCompute;
  NodeId node = 0;     ///< the graph node computed, or whose tensor is moved
  int microbatch = 0;
  /// Compute/epilogue: where it runs. Transfer: the destination. Concat: the
  /// root. All-gather/all-reduce: -1.
  int device = 0;
  int src_device = -1;            ///< transfer: the source
  CollectiveKind collective = CollectiveKind::kAllGather;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;  ///< collective: how it runs
  std::vector<int> participants;  ///< collective: devices holding the inputs, in ring order
  Slice slice;                    ///< compute/epilogue: the slice of `node` computed

  /// Value ids read. Compute: one per input slot of the node (-1 for a slot
  /// with no producer, e.g. h at t = 0). Epilogue: [sum]. Transfer: [source].
  /// Collective: one per participant, in `participants` order.
  std::vector<int> inputs;
  /// Value ids written. Compute: one per output of the node. Epilogue,
  /// transfer, concat: one. All-gather/all-reduce: one per participant.
  std::vector<int> outputs;
  /// Compute: the parameter value (ValueRole::kParameter) whose weights it
  /// reads, on its own device; -1 for an op without weights. Update: the
  /// parameter value it updates.
  int params = -1;

  int64_t flops = 0;
  int64_t bytes_read = 0;     ///< compute: inputs + parameters read
  int64_t bytes_written = 0;  ///< compute: outputs written
  int64_t param_count = 0;    ///< compute: parameters of this slice
  /// Bytes crossing devices. Transfer: the value. All-gather: what each
  /// participant lacks, summed. Concat: what the root lacks. All-reduce: the
  /// ring algorithm's 2·(N-1)/N·B per participant, summed.
  int64_t bytes_moved = 0;
  /// Collective: bytes of the whole tensor (nccl-tests' "size").
  int64_t payload_bytes = 0;
  /// Compute: the forward op whose slice this one runs again, for the
  /// backward pass to read instead of a stashed activation (recompute.hpp);
  /// -1 for an op that is no re-run.
  int recomputes = -1;
  /// A collective of a plan holding its replicas once (Plan::replicas):
  /// it spans every replica. It lists replica 0's participants, inputs and
  /// outputs; replica r's are the same with its devices and values
  /// (expand_replicas, plan_replicas.hpp), and bytes_moved is the whole
  /// collective's.
  bool spans_replicas = false;
};

/// Memory one device needs to run its part of the plan (bytes).
struct DeviceMemory {
  int64_t params = 0;            ///< weight slices it holds (amp training: their bf16 copies and fp32 masters)
  int64_t activations_peak = 0;  ///< values live at the same time, at the worst point (gradients apart)
  int64_t transfer_buffers = 0;  ///< of that peak, values received from other devices
  int64_t peak = 0;              ///< params + gradients + optimizer_state + activations_peak
  int64_t gradients = 0;         ///< training: one gradient buffer per weight slice, summed over micro-batches
  int64_t optimizer_state = 0;   ///< training: the optimizer's state (a momentum buffer per weight), at its precision
};

/// What callers may need to know of the strategy that made a plan, rather
/// than testing its name.
struct StrategyTraits {
  bool baseline = false;      ///< one device: the reference every other strategy is judged against
  bool microbatched = false;  ///< takes micro-batches; its plan is a fill-drain pipeline of stages
  bool trains = false;        ///< partitions training graphs (forward, backward, update)
  /// Every device holds the whole network and a share of the batch (data
  /// parallelism): the other baseline of a training comparison.
  bool replicated = false;
  /// Training: each replica's gradients stay on it, summed over its own
  /// rows, for parameter-server shards to aggregate and apply outside the
  /// plan (exec/parameter_server.hpp): no all-reduce, no update op.
  bool parameter_server = false;
  /// Takes `--sequence-parallel` (PartitionOptions::sequence_parallel): tensor, hybrid.
  bool sequence_parallel = false;
};

/// The order in which a pipeline stage runs the forward and backward passes
/// of its micro-batches (training only).
enum class PipelineSchedule {
  kGpipe,  ///< all forwards, then all backwards: every micro-batch's activations stashed
  kOneForwardOneBackward,  ///< PipeDream-Flush: warm-up, one forward one backward, cool-down
};
std::string_view to_string(PipelineSchedule schedule);

/// A hybrid plan's three degrees (Megatron's t, p, d; partitioners/hybrid.hpp):
/// the devices form `data` replicas of `pipeline` stages of `tensor` devices
/// each, numbered tensor innermost: device t + T·(p + P·d).
struct ParallelDegrees {
  int tensor = 1;
  int pipeline = 1;
  int data = 1;
  bool operator==(const ParallelDegrees&) const = default;
};

struct Plan;

/// Data-parallel replicas held once (Plan::replicas, docs/plan.md "Replicas
/// held once"): the plan's ops, values, schedules and memory are replica
/// 0's, on devices 0..devices_each-1; replica r runs the same on devices
/// r·devices_each + d, over its own rows of the batch. The collectives that
/// span the replicas (the gradient all-reduces) are single ops marked
/// PlanOp::spans_replicas. expand_replicas() writes the whole plan.
struct ReplicaSet {
  int count = 1;         ///< R
  int devices_each = 1;  ///< each replica's devices (the device stride)
  std::vector<Range> rows;  ///< each replica's rows of the batch (the first B mod R one longer)
  /// How the whole plan lists them: the ops (and values) come in runs, each
  /// starting at the compact id listed here (ascending, from 0). The whole
  /// plan writes a run R times in a row, replica by replica, except a run of
  /// one spanning collective, written once. (`data` interleaves its
  /// replicas op by op; `--replicas` writes replica by replica.)
  std::vector<int> op_runs;
  std::vector<int> value_runs;
  /// Plan::inputs, parameters and outputs of the whole plan: replica by
  /// replica (true), or in value id order (false; outputs then ordered by
  /// their first channel, as PlanBuilder orders them).
  bool lists_by_replica = false;
  /// Replicas `short_from`.. have one row fewer: their ops and values are
  /// `short_replica`'s (the same ids, built over their rows), not this plan's.
  int short_from = 1;
  std::shared_ptr<const Plan> short_replica;
};

struct Plan {
  std::string strategy;
  StrategyTraits traits;
  int devices = 1;
  int microbatches = 1;
  /// `ps`: the last this many devices are parameter-server shards holding
  /// the weights and the optimizer's state (plan/parameter_shards.hpp);
  /// the plan runs nothing on them (exec/parameter_server.hpp runs them).
  int parameter_servers = 0;
  std::shared_ptr<const Graph> graph;
  /// Training plans: the order of each stage's forwards and backwards.
  PipelineSchedule pipeline_schedule = PipelineSchedule::kGpipe;
  /// `hybrid`: its degrees, which say which group each device's traffic
  /// stays in (plan_traffic.hpp) and how many stages the pipeline has;
  /// absent for the other strategies.
  std::optional<ParallelDegrees> degrees;
  /// What each tensor class is stored in (the bytes of every value, op and
  /// DeviceMemory field) and the math of the products (plan_precision.hpp).
  Precision precision = Precision::kFp32;
  /// ZeRO stage (`--zero`): 1 shards each weight slice's optimizer state
  /// (and amp's fp32 masters) over the replicas that all-reduce its gradient,
  /// each keeping 1/d (plan_memory.cpp); 0 keeps a whole copy on every replica.
  int zero_stage = 0;

  std::vector<Value> values;
  std::vector<PlanOp> ops;  ///< every op's inputs are written by earlier ops (or are inputs)
  std::vector<int> inputs;  ///< network-input values, provided before the run
  std::vector<int> parameters;  ///< parameter values, resident before the run (untimed)
  std::vector<int> outputs; ///< values that together tile the network output
  /// Per device, its compute and epilogue ops in the order it runs them (for
  /// pipelines, the fill-drain order of the micro-batches). Every backend
  /// obeys it; it need not follow `ops`, only the data flow.
  std::vector<std::vector<int>> schedule;
  std::vector<DeviceMemory> memory;
  /// Why some ops were not split (e.g. "softmax runs whole on device 0").
  std::vector<std::string> notes;
  /// Set when the plan holds its data-parallel replicas once (see
  /// ReplicaSet): `devices` counts every replica's; `ops`, `values`,
  /// `schedule` and `memory` are replica 0's. Absent: the plan lists every op.
  std::optional<ReplicaSet> replicas;

  const Value& value(int id) const { return values.at(static_cast<size_t>(id)); }
  const PlanOp& op(int id) const { return ops.at(static_cast<size_t>(id)); }
};

/// Devices an op touches: compute/epilogue its device, transfer source and
/// destination, collective its participants (and the concat root).
std::vector<int> op_devices(const PlanOp& op);

/// A short human name: "fc1 mb2 [0, 2048)", "transfer fc1 0->1", "all-gather fc1".
std::string op_label(const Plan& plan, const PlanOp& op);

/// Per-sample shape of a value's slice (axis 0 replaced by its channel count).
Shape value_shape(const Plan& plan, const Value& value);
/// Elements of a value's slice: batch rows × channels × the node output's
/// inner elements; for a parameter, the weights its slices read.
int64_t value_elements(const Graph& graph, const Value& value);
/// Its float32 bytes (Value::bytes of a plan at fp32 or tf32).
int64_t value_bytes(const Graph& graph, const Value& value);
/// Bytes per element of `value` at the plan's precision: its activation,
/// weight or gradient storage (ir/precision.hpp).
int64_t value_element_bytes(const Plan& plan, const Value& value);

/// The node whose weights `slice` of `node` reads (or writes the gradient
/// of), and the forward slice of them: `node` itself and `slice` for a
/// forward op; the differentiated node and OpDef::param_slice for a backward one.
std::pair<NodeId, Slice> weight_slice_of(const Graph& graph, NodeId node, const Slice& slice);

/// Adds to `plan` the parameter value holding the weights `slice` of `node`
/// reads on `device`, lists it in Plan::parameters and returns its id. (The
/// partitioners share one per distinct slice; plans made by hand call this.)
int add_parameter_value(Plan& plan, int device, NodeId node, const Slice& slice);

/// The channels (axis 0 of the input tensor) that a compute op reads from
/// input slot `slot`: the reduce range of a dense slice; the channels of the
/// groups a conv slice's filters belong to; the matching channels of a
/// channel-local op (for flatten, out / inner); its own hidden units of a
/// cell's c; everything otherwise.
Range needed_input_channels(const Graph& graph, NodeId node, const Slice& slice, int slot);

/// The features (last axis) of input slot `slot` that a compute op reads:
/// whole, but for the head-wise split (ir/feature_cut.hpp), where the value
/// read holds exactly these.
FeatureCut needed_input_features(const Graph& graph, NodeId node, const Slice& slice, int slot);

/// For each op, the ops producing its inputs (sorted, without repeats).
std::vector<std::vector<int>> op_predecessors(const Plan& plan);
/// For each op, the ops reading its outputs (sorted, without repeats).
std::vector<std::vector<int>> op_successors(const Plan& plan);

/// Plan totals, as `plan --json` reports them.
struct PlanTotals {
  int64_t transfer_count = 0;
  int64_t transfer_bytes = 0;
  int64_t collective_count = 0;
  int64_t collective_bytes = 0;  ///< bytes_moved summed
  std::vector<int64_t> device_ops;    ///< compute + epilogue ops per device
  std::vector<int64_t> device_flops;
};
PlanTotals plan_totals(const Plan& plan);

/// (N-1)/(M+N-1) for a micro-batched pipeline of N stages (the devices, or
/// a hybrid's pipeline degree) and M micro-batches; nullopt for the other strategies.
std::optional<double> ideal_bubble(const Plan& plan);

}  // namespace splitscope
