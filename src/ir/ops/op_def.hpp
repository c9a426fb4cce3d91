#pragma once
/// \file
/// One definition per op kind: everything the stages after lowering need to
/// know about what an op is, so that none of them switches on the kind.
///
/// A definition holds the kind's traits, how a slice of it costs (FLOPs,
/// bytes, parameters), which part of each input a slice reads, how it may be
/// split, the key that prices it in the simulator (its calibration signature
/// and its efficiency key in machine files), the layout of its parameters, and
/// a slot for its gradient rule. Each kind is one file in this folder;
/// op_table.cpp lists them in OpKind order. Backends keep their own kernel per
/// kind (exec/cpu/kernels, exec/cuda) and say which kinds they support.
///
/// Adding a kind: an OpKind value, a file here, a row in op_table.cpp, and a
/// kernel (or a declared "unsupported") per backend; a kind that network
/// files name as a layer type defines that too, in its file (layer_def.hpp).
/// docs/op-table.md walks through it.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/feature_cut.hpp"
#include "ir/graph.hpp"
#include "ir/op.hpp"
#include "ir/range.hpp"
#include "ir/shape.hpp"

namespace splitscope {

struct Slice;
struct LayerDef;
class GradientBuilder;

/// What a slice costs: FLOPs, bytes and parameters read, bytes written.
struct SliceCost {
  int64_t flops = 0;
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  int64_t param_count = 0;
};

/// One weight tensor of a weighted op, in its row-major layout.
struct ParamTensor {
  std::string name;  ///< "W", "b", "Wx", "Wh"
  Shape shape;
  float scale = 0;   ///< initial values are offset + uniform in [-scale, scale)
  float offset = 0;  ///< a normalization's gain starts near 1, not near 0
};

/// How an op's time is best estimated: at the device's matrix peak
/// (products), by the bytes it streams (element-wise), or not at all (a
/// reshape that moves nothing).
enum class CostClass { kMatrix, kElementwise, kFree };

/// Which pass of a convolution a kind is: the simulator prices each by its
/// own rule (cuDNN's forward, data-gradient and filter-gradient algorithms).
enum class ConvPass { kNone, kForward, kDataGradient, kFilterGradient };

/// The axes a slice may cut, beside the batch (which every op splits).
struct SplitAxes {
  /// Axis 0 of the output (dense units, conv filters, cell hidden units,
  /// channels of a channel-local op). A weighted op takes the matching
  /// slice of its weights along with it.
  bool out = false;
  /// The reduction axis (a dense op's input features): each slice then holds a
  /// partial sum over its part of that axis, to be all-reduced.
  bool reduce = false;
};

/// The matrix product a kMatrix slice is: `count` products of m×k by k×n
/// (the simulator prices products by their shape, gemm_efficiency.hpp).
struct GemmDims {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t count = 1;
};

/// What the count of a slice's device calls depends on besides the node and
/// the slice: how the plan placed it (OpDef::device_calls).
struct SliceCalls {
  const OpNode& node;
  const Slice& slice;
  /// A weight-gradient slice adds the running sum of earlier micro-batches
  /// (its extra last input), which it first copies in.
  bool adds_running_sum = false;
  /// Bit `slot` set where input slot `slot` has a producer (a cell's h and
  /// c at t = 0 have none).
  uint64_t inputs_present = 0;
  /// Every input value holds exactly the slice's output channels; where one
  /// holds more, an element-wise op reads its rows strided apart.
  bool inputs_match_slice = true;

  bool has_input(int slot) const { return slot >= 0 && slot < 64 && ((inputs_present >> slot) & 1U) != 0; }
};

struct OpDef {
  OpKind kind = OpKind::kInput;
  /// The name in op lists and reports, the first field of its calibration
  /// signature, and its efficiency key in machine files: "dense", "lstm_cell".
  std::string_view name;
  CostClass cost_class = CostClass::kElementwise;
  /// The kind whose efficiency prices this one where a machine file gives it
  /// none of its own (a calibration measures the forward kinds): a backward
  /// kind runs the library kernels of its forward kind — a product's backward
  /// is two products of the same family (cuBLAS GEMMs, cuDNN convolutions),
  /// pooling's backward reads the windows the forward read — so the fraction
  /// of the roofline measured for one carries over. Empty: the file's `default`.
  std::string_view efficiency_like;
  /// Carries weights that are sliced with its output channels.
  bool weighted = false;
  /// A slice of the output needs only the matching slice of each input
  /// (element-wise ops, per-channel pooling, flatten).
  bool channel_local = false;
  /// A recurrent cell (one stacked layer at one time step).
  bool cell = false;
  /// An activation function alone (the rate of a tensor-parallel epilogue).
  bool activation = false;
  SplitAxes split;

  /// Cost of `slice`; over slices that tile the op, FLOPs and parameters sum
  /// exactly to the whole op's (docs/op-table.md gives each kind's rule).
  SliceCost (*cost)(const OpNode& node, const Slice& slice) = nullptr;
  /// The channels (axis 0) of input slot `slot` that `slice` reads. An empty
  /// range means the slice does not read that slot at all.
  Range (*input_channels)(const OpNode& node, const Slice& slice, int slot) = nullptr;
  /// The head-wise split (Slice::features, ir/feature_cut.hpp): the features
  /// of input slot `slot` a feature-cut slice reads, and of output 0 it
  /// writes. Null: a channel-local kind reads and writes the slice's own
  /// features; the other kinds cannot be feature-cut.
  FeatureCut (*input_features)(const OpNode& node, const Slice& slice, int slot) = nullptr;
  /// A channel-local kind whose output channels are not its input's (a
  /// reshape, a channel slice), the inverse of input_channels: the output
  /// channels that input channels `input` (slot 0) become, so that a channel
  /// split follows its input's cut through it. An empty range where none of
  /// its output comes from them; nullopt where they are no range of its
  /// output (the op then runs whole). Null: the same channels.
  std::optional<Range> (*channels_from_input)(const OpNode& node, Range input) = nullptr;
  FeatureCut (*output_features)(const OpNode& node, const Slice& slice) = nullptr;
  /// A stable key for "this slice's shape": slices with equal signatures do the
  /// same work, so a time measured for one prices them all.
  std::string (*signature)(const OpNode& node, const Slice& slice) = nullptr;
  /// A backward kind that reads or differentiates weights: its slice that
  /// goes with `forward`, a slice of the op it differentiates, so that a
  /// partitioner placing it beside each forward slice reads and writes the
  /// weights that slice holds (the inverse of param_slice). Throws
  /// InputError where the kind cannot follow such a slice yet.
  Slice (*from_forward)(const OpNode& node, const Slice& forward) = nullptr;
  /// Whether `slice` leaves a partial sum (a kind with split.reduce); null:
  /// when `reduce` is not the whole of input 0's axis 0 (a dense row split).
  /// A convolution's input gradient over whole groups is complete for the
  /// channels of those groups, though it sums over some filters only.
  bool (*partial)(const OpNode& node, const Slice& slice) = nullptr;
  /// A backward kind writing an input gradient: the input slot of its forward
  /// op that it is the gradient of (cell_grad_hidden: h_{t-1}, slot 1), so
  /// that a partitioner can place the readers of its all-reduced sum where
  /// that input lives.
  int input_gradient_slot = 0;
  /// A kMatrix kind's product; null: rows × out by reduce (a dense slice).
  GemmDims (*gemm)(const OpNode& node, const Slice& slice) = nullptr;
  /// Its weight tensors, in index order (params.hpp); null for unweighted kinds.
  std::vector<ParamTensor> (*params)(const OpNode& node) = nullptr;
  /// Its output is the gradient of a weight set (dW, db over its rows), not
  /// an activation: the plan holds it as a gradient value shaped like the
  /// parameter value of the same slice, summed over micro-batches and
  /// applied by the optimizer.
  bool writes_gradient = false;
  /// A weight gradient summed over every position of a sequence (axis 0 of
  /// [T, F]: layer norm's dgamma and dbeta): a slice of the positions
  /// (sequence parallelism) writes a partial sum, all-reduced with the
  /// other slices' before the update.
  bool sums_over_positions = false;
  /// The parameter slice (out, reduce ranges of the forward op) that `slice`
  /// reads or writes the gradient of; null: the slice itself. A transposed
  /// product (dX = dZ·Wᵀ) swaps them.
  Slice (*param_slice)(const OpNode& node, const Slice& slice) = nullptr;
  /// The rule that emits the op's backward ops (training.hpp): given the
  /// gradients of its outputs (nullopt where nothing downstream depends on
  /// one), it adds nodes computing the gradients of its inputs and weights.
  /// Null for a kind that cannot be trained yet (and for backward kinds).
  void (*gradient)(GradientBuilder& builder, NodeId node,
                   const std::vector<std::optional<TensorRef>>& output_gradients) = nullptr;
  /// How a training step runs this forward op, where it differs from
  /// inference (batch norm: batch statistics; dropout: its mask): sets the
  /// node's attributes when training_graph() copies it. Null: the same.
  void (*training_form)(OpNode& node) = nullptr;
  /// The elements of 1-D weight tensor `tensor` that `slice` holds (its
  /// weights laid out by output channel, or whole). Backends materialise a
  /// slice's weights with it; null for the kinds whose layout the backends
  /// still know by hand (dense, conv2d, the cells).
  Range (*param_range)(const OpNode& node, const Slice& slice, int tensor) = nullptr;
  /// The simulator's measured-rate families for it (sim/costs/achieved_rates.hpp),
  /// most specific first: {"pool_gradient.max", "pool.max"}. Empty: its cost
  /// class decides (a cell its own name, a product its rows, else
  /// "elementwise").
  std::vector<std::string_view> rate_families;
  /// A convolution's pass: its rate families are then looked up per math
  /// and kernel class ("conv_forward.{fma|tensor}.{1x1|3x3s1|other}").
  ConvPass conv_pass = ConvPass::kNone;
  /// A layer's product followed by a pass adding its bias and applying its
  /// activation (dense, conv2d): priced as the product plus that pass, and on
  /// a cpu by the timed sgemm grid.
  bool layer_product = false;
  /// A forward pooling window (max, average): a cpu prices it by its timed
  /// windows.
  bool pooling = false;
  /// The library or kernel calls a device makes for one placed slice (the
  /// simulator's host issue cost, sim/costs/host_issue.hpp; the cuda
  /// backend's compiled program makes exactly these, tests/cuda checks it).
  /// Every kind has one: there is no default to fall back on.
  int (*device_calls)(const SliceCalls& calls) = nullptr;
  /// The layer type of network files that lowers to this kind (a recurrent
  /// layer to its cells; ops/layer_def.hpp); null where no file names it.
  const LayerDef* layer = nullptr;
};

/// The definition of `kind`.
const OpDef& op_def(OpKind kind);
/// Every definition, in OpKind order.
std::span<const OpDef* const> op_defs();

}  // namespace splitscope
