#pragma once
/// \file
/// The plan compiler's working state (plan_compiler.hpp compiles a Plan into
/// a DeviceProgram): one class, its member functions defined by what they
/// emit, in plan_compiler.cpp (buffers, steps, weights; the kernel table),
/// plan_compiler_forward.cpp (forward compute ops),
/// plan_compiler_backward.cpp (backward ops and updates) and
/// plan_compiler_movement.cpp (epilogues, transfers, collectives).
/// Private to those files.

#include "exec/cuda/plan_compiler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <utility>

#include "ir/layer_costs.hpp"
#include "ir/ops/cell_rules.hpp"
#include "ir/ops/concat_rules.hpp"
#include "ir/ops/conv2d_rules.hpp"
#include "ir/ops/norm_rules.hpp"
#include "ir/params.hpp"
#include "plan/collective_schedule.hpp"
#include "plan/plan_walk.hpp"
#include "util/check.hpp"

namespace splitscope::gpu::plan_compilation {

/// A value as the compiler addresses it.
struct ValueView {
  int id = -1;
  int buffer = -1;
  int device = 0;
  Range batch;
  Range channels;
  int64_t inner = 1;
  int64_t elements() const { return batch.size() * channels.size() * inner; }
  int64_t row_stride() const { return channels.size() * inner; }
  /// Where channel `channel` (absolute, along axis 0) of row 0 starts.
  Ref at_channel(int64_t channel) const {
    SPLITSCOPE_CHECK(channel >= channels.begin && channel <= channels.end,
                     "channel outside value " + std::to_string(id));
    return Ref{buffer, (channel - channels.begin) * inner};
  }
  Ref start() const { return Ref{buffer, 0}; }
};

/// "[a, b)" — Range::to_string inlined here trips GCC 12's false -Wrestrict at -O3.
inline std::string text(Range range) { return fmt::format("[{}, {})", range.begin, range.end); }

/// A weight buffer: (parameter value, tensor of params.hpp).
using WeightKey = std::pair<int, int>;
class Compiler {
 public:
  Compiler(const Plan& plan, const CompileOptions& options)
      : plan_(plan), graph_(*plan.graph), options_(options) {}

  DeviceProgram run();

 private:
  // --- buffers and steps -------------------------------------------------

  int add_buffer(BufferSpec spec);

  ValueView view(int value_id) const;

  /// A span as plan_walk.hpp names it.
  int new_span(const SpanSlot& slot);

  /// Appends a step; derives its waits from the buffers it reads and writes.
  void add_step(StepAction action, StreamId stream, int span, std::vector<int> reads, std::vector<int> writes);

  /// How tensor `tensor` of parameter value `params` lies in its weight
  /// buffer: the rows and columns of params.hpp's tensor that a slice with the
  /// value's output and reduction ranges reads, as the cpu backend's
  /// WeightSlice lays them out (so a weight gradient, its tensors end to end,
  /// matches tensor by tensor). nullopt for a tensor the value does not hold
  /// (no bias; a row-split product's bias lives with the slice starting the reduction).
  std::optional<WeightGather> parameter_gather(const Value& params, int tensor) const;

  std::optional<WeightGather> parameter_layout(const Value& params, int tensor) const;

  std::string tensor_label(const Value& params, int tensor) const;

  /// The buffer holding tensor `tensor` of parameter value `params_id`,
  /// filled before the runs (and updated in place by a training step's
  /// update op); shared by every op reading that value (a recurrent layer's
  /// steps, a stage's micro-batches, the backward ops). Invalid when the
  /// value holds no such tensor.
  Ref weight(int params_id, int tensor);

  /// Tensor `tensor` of the weights compute op `op` reads (PlanOp::params, on its device).
  Ref weight(const PlanOp& op, int tensor);

  /// The device's gate scratch, grown to at least `elements`.
  int scratch(int device, int64_t elements);

  int staging(int64_t elements, const std::string& label);

  /// Copies rows of `width` elements from `src` on device `from` into `dst` on
  /// device `to`: directly, or with `--link host` through pinned host memory.
  void copy_between(const PlanOp& op, int span, int from, int to, Ref src, int64_t src_pitch, Ref dst,
                    int64_t dst_pitch, int64_t width, int64_t height);

  void check_rows(const ValueView& value, Range batch) const;

  /// An input of a compute op, checked to hold the op's rows and the channels it reads.
  ValueView input(const PlanOp& op, int slot) const;

  ValueView output(const PlanOp& op, int index, Range channels) const;

  bool has_input(const PlanOp& op, int slot) const;

  // --- compute ops --------------------------------------------------------

  /// Emits the steps of one compute op of some kind.
  using Emit = void (Compiler::*)(const PlanOp& op, int span);

 public:
  /// The cuda backend's kernels, by OpKind. A kind left empty is one this
  /// backend declares unsupported (the network input is provided, never run).
  static const std::array<Emit, kOpKindCount>& kernels();

 private:
  void compute(const PlanOp& op);

  StreamId compute_stream(const PlanOp& op) const { return {op.device, StreamLane::kCompute}; }

  void dense(const PlanOp& op, int span);

  /// A grouped layer's sizes, for conv_piece().
  struct GroupSizes {
    int64_t filters_per_group = 1;
    int64_t channels_per_group = 1;
    int64_t per_filter = 1;  ///< weights of one filter: (Cin/groups)·kh·kw
  };

  /// `base` for filters `piece` of a slice of filters starting at `first`
  /// (a group_pieces() piece): the [C][H][W] side `x` from the channels of
  /// its groups, the [F][Ho][Wo] side `y` from its filters, and its rows of
  /// the weights (or of their gradient) from `filter`, whose row 0 is `first`.
  static ConvStep conv_piece(ConvStep step, Range piece, int64_t first, const GroupSizes& sizes, const ValueView& x,
                             const ValueView& y, Ref filter);

  void conv2d(const PlanOp& op, int span);

  void pool(const PlanOp& op, int span);

  static Activation activation_of(OpKind kind);

  void activation(const PlanOp& op, int span);

  void flatten(const PlanOp& op, int span);

  void softmax(const PlanOp& op, int span);

  void stack(const PlanOp& op, int span);

  void step_slice(const PlanOp& op, int span);

  /// add: the sum of the inputs' slice channels, in slot order. One sum kernel
  /// when every input holds exactly the slice (the block is contiguous), else
  /// one per row.
  void add(const PlanOp& op, int span);

  /// concat: each input's part of the slice, copied to its place in the output.
  void concat(const PlanOp& op, int span);

  /// The cell's three weight slices: columns g·H + u for u in the slice, per gate, packed [.., G·U].
  struct CellWeights {
    Ref input;
    Ref recurrent;
    Ref bias;
  };

  CellWeights cell_weights(const PlanOp& op);

  void lstm_cell(const PlanOp& op, int span);

  void gru_cell(const PlanOp& op, int span);

  // --- the backward pass (training) ----------------------------------------

  /// Where slot `slot` is read from: the first channel the op needs of it.
  Ref needed_start(const PlanOp& op, const ValueView& value, int slot) const;

  /// A weight-gradient op's output, flat; when the op adds to the running sum
  /// of earlier micro-batches (its extra last input), that sum is first copied
  /// in, and the products then accumulate onto it. Returns whether they must.
  struct GradientTarget {
    ValueView value;
    bool accumulate = false;
  };
  GradientTarget gradient_output(const PlanOp& op, int span);

  /// Batch norm forward or backward (NormStep), on the slice's channels.
  void batch_norm(const PlanOp& op, int span);

  /// Layer norm forward or backward (NormStep), over runs of the last axis.
  void layer_norm(const PlanOp& op, int span);

  /// The buffers of a NormStep: X (slot 0), dY (slot 1, backward), gamma and
  /// beta, and its output (a weight gradient's running sum included).
  void norm_step(const PlanOp& op, int span, NormStep step);

  void dropout(const PlanOp& op, int span);

  void loss(const PlanOp& op, int span);

  void activation_grad(const PlanOp& op, int span);

  /// dX = dZ·Wᵀ: the forward slice's W [inputs][units], read transposed.
  void dense_grad_input(const PlanOp& op, int span);

  /// dW (+)= Xᵀ·dZ, then db (+)= Σ rows dZ where the slice starts the reduction.
  void dense_grad_weight(const PlanOp& op, int span);

  /// The forward convolution's geometry, from its input [C][H][W] and output [F][Ho][Wo] shapes.
  ConvStep conv_step(const OpNode& node, const Shape& input_shape, const Shape& output_shape, int64_t rows) const;

  /// dX, the convolution's adjoint (cuDNN backward data), over the slice's
  /// filters: one call per piece (conv2d()'s rule), each writing the channels
  /// of its groups; channels of groups no filter of the slice touches (a
  /// partial sum over every channel) are zeroed first.
  void conv2d_grad_input(const PlanOp& op, int span);

  /// dW (+)= corr(X, dZ) (cuDNN backward filter) over the slice's filters, one
  /// call per piece as conv2d(), then db (+)= Σ dZ.
  void conv2d_grad_weight(const PlanOp& op, int span);

  void pool_grad(const PlanOp& op, int span);

  /// unflatten and channel_slice: each row a contiguous run from the first
  /// input channel the slice needs (as flatten, its shapes the other way).
  void copy_from_first_channel(const PlanOp& op, int span);

  // --- recurrent cells' backward (a whole layer, or a vertical split's slice of its hidden units) ---

  /// The gate-gradient columns each product of a cell's backward takes
  /// (unit-major dgates, four per unit): LSTM all four; GRU r, z, n on the
  /// input side and r, z, n·r on the recurrent side.
  static std::pair<std::array<int, 4>, int> gate_columns(bool gru, bool recurrent);

  /// dgates and the second output of one step's units: the forward's gate
  /// products over the slice's gathered weight columns recomputed into the
  /// device's scratch, then the element-wise kernel.
  void cell_grad(const PlanOp& op, int span);

  /// Gathers the gate-major matrix of `columns` of the op's units from the dgates input into the scratch at `at`.
  Ref gather_gates(const PlanOp& op, int span, int slot, bool recurrent, int64_t at);

  /// dx = Gx·Wxᵀ over the op's units (a partial sum of dx for a slice).
  void cell_grad_input(const PlanOp& op, int span);

  /// dh_prev = Gh·Whᵀ over the op's units, plus the GRU's direct part dh⊙z
  /// of those units (copied in first; a slice zeroes the rest of dh_prev).
  void cell_grad_hidden(const PlanOp& op, int span);

  /// The step's weight gradient of the op's units, flat (Wx [I × G·U], Wh
  /// [H × G·U], b [G·U]), added to the later steps' running sum: dWx = xᵀ·Gx,
  /// dWh = h_prevᵀ·Gh (nothing at t = 0), db = Σ rows Gx.
  void cell_grad_weight(const PlanOp& op, int span);

  /// The optimizer step of one parameter value: a step per tensor it holds,
  /// reading that tensor's run of the flat gradient, with its optimizer state
  /// (zeros at first, then kept from step to step) in one buffer per value.
  void update(const PlanOp& op);

  int state_buffer(int device, int64_t elements, std::string label);

  // --- epilogue, transfers, collectives ------------------------------------

  void epilogue(const PlanOp& op);

  void transfer(const PlanOp& op);

  /// The sends of the collective's algorithm (collective_schedule.hpp), each
  /// a copy into the receiver on its copy-in stream; a reducing send lands in
  /// a receive buffer and a sum kernel adds the receiver's own chunk.
  void collective(const PlanOp& op);

  /// Copies channels `channels` of every row from `source` into `target`.
  void copy_slice(const PlanOp& op, int span, const ValueView& source, const ValueView& target, Range channels);

  const Plan& plan_;
  const Graph& graph_;
  CompileOptions options_;
  DeviceProgram program_;
  std::vector<int> last_writer_;            ///< per buffer: the step that last wrote it
  std::vector<std::vector<int>> readers_;   ///< per buffer: steps that read it since
  std::map<WeightKey, int> weights_;
  std::map<int, int> scratch_;
};

}  // namespace splitscope::gpu::plan_compilation
