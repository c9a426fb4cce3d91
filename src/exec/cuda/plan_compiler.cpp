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
#include "partitioners/collective_schedule.hpp"
#include "partitioners/plan_walk.hpp"
#include "util/check.hpp"

namespace splitscope::gpu {

int64_t WeightGather::row_width() const {
  int64_t width = 0;
  for (const Range& block : column_blocks) width += block.size();
  return width;
}

std::vector<int64_t> device_bytes(const DeviceProgram& program) {
  std::vector<int64_t> bytes(static_cast<size_t>(program.devices), 0);
  for (const BufferSpec& buffer : program.buffers) {
    if (buffer.device >= 0) bytes.at(static_cast<size_t>(buffer.device)) += buffer.elements * 4;
  }
  return bytes;
}

namespace {

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
std::string text(Range range) { return fmt::format("[{}, {})", range.begin, range.end); }

/// A weight buffer: (parameter value, tensor of params.hpp).
using WeightKey = std::pair<int, int>;

class Compiler {
 public:
  Compiler(const Plan& plan, const CompileOptions& options)
      : plan_(plan), graph_(*plan.graph), options_(options) {}

  DeviceProgram run() {
    program_.devices = plan_.devices;
    program_.value_buffer.assign(plan_.values.size(), -1);
    for (const Value& value : plan_.values) {
      SPLITSCOPE_CHECK(value.device >= 0 && value.device < plan_.devices,
                       "value " + std::to_string(value.id) + " on an unknown device");
      if (value.role == ValueRole::kParameter) continue;  // its tensors get weight buffers (weight())
      BufferSpec spec;
      spec.kind = BufferKind::kValue;
      spec.device = value.device;
      spec.elements = value_elements(*plan_.graph, value);
      spec.value = value.id;
      spec.label = fmt::format("value {} ({})", value.id, graph_.node(value.node).name);
      program_.value_buffer[static_cast<size_t>(value.id)] = add_buffer(std::move(spec));
    }
    // The walk issues each device's compute ops in its schedule's order: a
    // stream runs what it is given in order, so this is what obeys the schedule.
    for (int id : walk_plan(plan_).order) {
      const PlanOp& op = plan_.op(id);
      switch (op.role) {
        case OpRole::kCompute: compute(op); break;
        case OpRole::kEpilogue: epilogue(op); break;
        case OpRole::kTransfer: transfer(op); break;
        case OpRole::kCollective: collective(op); break;
        case OpRole::kUpdate: update(op); break;
      }
    }
    for (const SpanSpec& span : program_.spans) {
      SPLITSCOPE_CHECK(!span.steps.empty(), "op " + std::to_string(span.op) + " compiled to no device work");
    }
    return std::move(program_);
  }

 private:
  // --- buffers and steps -------------------------------------------------

  int add_buffer(BufferSpec spec) {
    program_.buffers.push_back(std::move(spec));
    last_writer_.push_back(-1);
    readers_.emplace_back();
    return static_cast<int>(program_.buffers.size()) - 1;
  }

  ValueView view(int value_id) const {
    SPLITSCOPE_CHECK(value_id >= 0 && value_id < static_cast<int>(plan_.values.size()),
                     "op refers to an unknown value");
    const Value& value = plan_.value(value_id);
    ValueView view;
    view.id = value_id;
    view.buffer = program_.value_buffer[static_cast<size_t>(value_id)];
    view.device = value.device;
    view.batch = value.batch;
    view.channels = value.channels;
    if (value.role == ValueRole::kGradient) {
      // A weight gradient lies flat (its tensors end to end), whatever rows it summed over.
      view.batch = {0, 1};
      view.channels = {0, value_elements(graph_, value)};
      return view;
    }
    view.inner = inner_count(graph_.node(value.node).output_shapes.at(static_cast<size_t>(value.output)));
    return view;
  }

  /// A span as plan_walk.hpp names it.
  int new_span(const SpanSlot& slot) {
    program_.spans.push_back(SpanSpec{slot.op, slot.device, slot.lane, slot.kind, slot.flops, slot.bytes, {}});
    return static_cast<int>(program_.spans.size()) - 1;
  }

  /// Appends a step; derives its waits from the buffers it reads and writes.
  void add_step(StepAction action, StreamId stream, int span, std::vector<int> reads, std::vector<int> writes) {
    const int index = static_cast<int>(program_.steps.size());
    Step step;
    step.action = std::move(action);
    step.stream = stream;
    step.span = span;
    auto wait_for = [&](int other) {
      if (other >= 0 && !(program_.steps[static_cast<size_t>(other)].stream == stream)) step.waits.push_back(other);
    };
    for (int buffer : reads) wait_for(last_writer_[static_cast<size_t>(buffer)]);
    for (int buffer : writes) {
      wait_for(last_writer_[static_cast<size_t>(buffer)]);
      for (int reader : readers_[static_cast<size_t>(buffer)]) wait_for(reader);
    }
    std::sort(step.waits.begin(), step.waits.end());
    step.waits.erase(std::unique(step.waits.begin(), step.waits.end()), step.waits.end());
    for (int buffer : reads) readers_[static_cast<size_t>(buffer)].push_back(index);
    for (int buffer : writes) {
      last_writer_[static_cast<size_t>(buffer)] = index;
      readers_[static_cast<size_t>(buffer)].clear();
    }
    step.reads = std::move(reads);
    step.writes = std::move(writes);
    program_.spans[static_cast<size_t>(span)].steps.push_back(index);
    program_.steps.push_back(std::move(step));
  }

  /// How tensor `tensor` of parameter value `params` lies in its weight
  /// buffer: the rows and columns of params.hpp's tensor that a slice with the
  /// value's output and reduction ranges reads, as the cpu backend's
  /// WeightSlice lays them out (so a weight gradient, its tensors end to end,
  /// matches tensor by tensor). nullopt for a tensor the value does not hold
  /// (no bias; a row-split product's bias lives with the slice starting the reduction).
  std::optional<WeightGather> parameter_gather(const Value& params, int tensor) const {
    std::optional<WeightGather> gather = parameter_layout(params, tensor);
    if (gather) gather->loaded = ParamElements(graph_, params.node, tensor, 0).loaded();
    return gather;
  }

  std::optional<WeightGather> parameter_layout(const Value& params, int tensor) const {
    const OpNode& node = graph_.node(params.node);
    const auto tensors = param_tensors(graph_, params.node);
    if (tensor >= static_cast<int>(tensors.size())) return std::nullopt;
    const float scale = tensors[static_cast<size_t>(tensor)].scale;
    const Range out = params.channels;
    if (const auto range_of = op_def(node.kind).param_range) {
      // A 1-D tensor, the range its definition gives (a normalization's gamma and beta).
      const Range elements = range_of(node, Slice{{0, 1}, params.channels, params.reduce, params.features}, tensor);
      const int64_t length = element_count(tensors[static_cast<size_t>(tensor)].shape);
      return WeightGather{node.param_key, tensor, scale, {0, 1}, length, {elements},
                          tensors[static_cast<size_t>(tensor)].offset};
    }
    if (node.kind == OpKind::kDense) {
      const int64_t units = node.output_shapes.at(0).at(0);
      if (tensor == kWeight) return WeightGather{node.param_key, kWeight, scale, params.reduce, units, {out}};
      if (!slice_carries_bias(node, params.reduce)) return std::nullopt;
      return WeightGather{node.param_key, kBias, scale, {0, 1}, units, {out}};
    }
    if (node.kind == OpKind::kConv2d) {
      const Shape& shape = tensors[kWeight].shape;
      const int64_t per_filter = shape.at(1) * shape.at(2) * shape.at(3);
      if (tensor == kWeight) return WeightGather{node.param_key, kWeight, scale, out, per_filter, {{0, per_filter}}};
      return WeightGather{node.param_key, kBias, scale, {0, 1}, node.output_shapes.at(0).at(0), {out}};
    }
    SPLITSCOPE_CHECK(is_cell(node.kind), "weights of an unexpected op kind " + std::string(to_string(node.kind)));
    const int64_t hidden = node.attrs.hidden;
    const int64_t gates = tensors.at(kInputWeight).shape.at(1) / hidden;
    std::vector<Range> blocks;  // columns g·H + u for u in the slice, per gate, packed [.., G·U]
    for (int64_t g = 0; g < gates; ++g) blocks.push_back({g * hidden + out.begin, g * hidden + out.end});
    const Range rows = tensor == kInputWeight ? Range{0, tensors[kInputWeight].shape.at(0)}
                       : tensor == kRecurrentWeight ? Range{0, hidden}
                                                    : Range{0, 1};
    return WeightGather{node.param_key, tensor, scale, rows, gates * hidden, blocks};
  }

  std::string tensor_label(const Value& params, int tensor) const {
    const OpNode& node = graph_.node(params.node);
    if (is_cell(node.kind)) {
      static constexpr std::array<const char*, 3> kCellNames{".Wx", ".Wh", ".b"};
      return fmt::format("{}/l{}{}", node.layer_name, node.sublayer, kCellNames.at(static_cast<size_t>(tensor)));
    }
    if (op_def(node.kind).param_range != nullptr) {
      return node.layer_name + "." + param_tensors(graph_, params.node).at(static_cast<size_t>(tensor)).name;
    }
    return node.layer_name + (tensor == kWeight ? ".W" : ".b");
  }

  /// The buffer holding tensor `tensor` of parameter value `params_id`,
  /// filled before the runs (and updated in place by a training step's
  /// update op); shared by every op reading that value (a recurrent layer's
  /// steps, a stage's micro-batches, the backward ops). Invalid when the
  /// value holds no such tensor.
  Ref weight(int params_id, int tensor) {
    const Value& params = plan_.value(params_id);
    SPLITSCOPE_CHECK(params.role == ValueRole::kParameter, fmt::format("value {} holds no weights", params_id));
    const std::optional<WeightGather> gather = parameter_gather(params, tensor);
    if (!gather) return {};
    const WeightKey key{params_id, tensor};
    auto found = weights_.find(key);
    if (found != weights_.end()) return Ref{found->second, 0};
    BufferSpec spec;
    spec.kind = BufferKind::kWeight;
    spec.device = params.device;
    spec.elements = gather->elements();
    spec.weight = *gather;
    spec.label = tensor_label(params, tensor);
    const int buffer = add_buffer(std::move(spec));
    weights_.emplace(key, buffer);
    return Ref{buffer, 0};
  }

  /// Tensor `tensor` of the weights compute op `op` reads (PlanOp::params, on its device).
  Ref weight(const PlanOp& op, int tensor) {
    SPLITSCOPE_CHECK(op.params >= 0 && plan_.value(op.params).device == op.device,
                     "op " + std::to_string(op.id) + " has weights but no parameter value on its device");
    return weight(op.params, tensor);
  }

  /// The device's gate scratch, grown to at least `elements`.
  int scratch(int device, int64_t elements) {
    auto found = scratch_.find(device);
    if (found == scratch_.end()) {
      BufferSpec spec;
      spec.kind = BufferKind::kScratch;
      spec.device = device;
      spec.label = fmt::format("gate scratch on device {}", device);
      found = scratch_.emplace(device, add_buffer(std::move(spec))).first;
    }
    BufferSpec& spec = program_.buffers[static_cast<size_t>(found->second)];
    spec.elements = std::max(spec.elements, elements);
    return found->second;
  }

  int staging(int64_t elements, const std::string& label) {
    BufferSpec spec;
    spec.kind = BufferKind::kStaging;
    spec.device = -1;
    spec.elements = elements;
    spec.label = label;
    return add_buffer(std::move(spec));
  }

  /// Copies rows of `width` elements from `src` on device `from` into `dst` on
  /// device `to`: directly, or with `--link host` through pinned host memory.
  void copy_between(const PlanOp& op, int span, int from, int to, Ref src, int64_t src_pitch, Ref dst,
                    int64_t dst_pitch, int64_t width, int64_t height) {
    const StreamId copy_in{to, StreamLane::kCopyIn};
    if (from == to || options_.link == LinkMode::kDevice) {
      add_step(CopyStep{src, src_pitch, dst, dst_pitch, width, height}, copy_in, span, {src.buffer}, {dst.buffer});
      return;
    }
    const int host = staging(width * height, fmt::format("staging for op {} ({} -> {})", op.id, from, to));
    add_step(CopyStep{src, src_pitch, Ref{host, 0}, width, width, height}, StreamId{from, StreamLane::kCopyOut}, span,
             {src.buffer}, {host});
    add_step(CopyStep{Ref{host, 0}, width, dst, dst_pitch, width, height}, copy_in, span, {host}, {dst.buffer});
  }

  void check_rows(const ValueView& value, Range batch) const {
    SPLITSCOPE_CHECK(value.batch == batch, fmt::format("value {} holds rows {}, the op needs {}", value.id,
                                                       text(value.batch), text(batch)));
  }

  /// An input of a compute op, checked to hold the op's rows and the channels it reads.
  ValueView input(const PlanOp& op, int slot) const {
    const int id = op.inputs.at(static_cast<size_t>(slot));
    const ValueView value = view(id);
    check_rows(value, op.slice.batch);
    const Range needed = needed_input_channels(graph_, op.node, op.slice, slot);
    SPLITSCOPE_CHECK(value.channels.contains(needed),
                     fmt::format("value {} holds channels {}, op {} reads {}", id, text(value.channels), op.id,
                                 text(needed)));
    return value;
  }

  ValueView output(const PlanOp& op, int index, Range channels) const {
    const ValueView value = view(op.outputs.at(static_cast<size_t>(index)));
    check_rows(value, op.slice.batch);
    SPLITSCOPE_CHECK(value.channels == channels, fmt::format("op {} writes channels {} into value {} holding {}",
                                                             op.id, text(channels), value.id,
                                                             text(value.channels)));
    return value;
  }

  bool has_input(const PlanOp& op, int slot) const {
    return static_cast<size_t>(slot) < op.inputs.size() && op.inputs[static_cast<size_t>(slot)] >= 0;
  }

  // --- compute ops --------------------------------------------------------

  /// Emits the steps of one compute op of some kind.
  using Emit = void (Compiler::*)(const PlanOp& op, int span);

 public:
  /// The cuda backend's kernels, by OpKind. A kind left empty is one this
  /// backend declares unsupported (the network input is provided, never run).
  static const std::array<Emit, kOpKindCount>& kernels() {
    static const std::array<Emit, kOpKindCount> table = [] {
      std::array<Emit, kOpKindCount> t{};
      const auto set = [&](OpKind kind, Emit emit) { t[static_cast<size_t>(kind)] = emit; };
      set(OpKind::kDense, &Compiler::dense);
      set(OpKind::kConv2d, &Compiler::conv2d);
      set(OpKind::kMaxPool, &Compiler::pool);
      set(OpKind::kAvgPool, &Compiler::pool);
      set(OpKind::kRelu, &Compiler::activation);
      set(OpKind::kTanh, &Compiler::activation);
      set(OpKind::kSigmoid, &Compiler::activation);
      set(OpKind::kFlatten, &Compiler::flatten);
      set(OpKind::kSoftmax, &Compiler::softmax);
      set(OpKind::kLstmCell, &Compiler::lstm_cell);
      set(OpKind::kGruCell, &Compiler::gru_cell);
      set(OpKind::kStack, &Compiler::stack);
      set(OpKind::kStepSlice, &Compiler::step_slice);
      set(OpKind::kAdd, &Compiler::add);
      set(OpKind::kConcat, &Compiler::concat);
      set(OpKind::kLoss, &Compiler::loss);
      set(OpKind::kActivationGrad, &Compiler::activation_grad);
      set(OpKind::kDenseGradInput, &Compiler::dense_grad_input);
      set(OpKind::kDenseGradWeight, &Compiler::dense_grad_weight);
      set(OpKind::kConv2dGradInput, &Compiler::conv2d_grad_input);
      set(OpKind::kConv2dGradWeight, &Compiler::conv2d_grad_weight);
      set(OpKind::kMaxPoolGrad, &Compiler::pool_grad);
      set(OpKind::kAvgPoolGrad, &Compiler::pool_grad);
      set(OpKind::kUnflatten, &Compiler::copy_from_first_channel);
      set(OpKind::kChannelSlice, &Compiler::copy_from_first_channel);
      set(OpKind::kLstmCellGrad, &Compiler::cell_grad);
      set(OpKind::kGruCellGrad, &Compiler::cell_grad);
      set(OpKind::kCellGradInput, &Compiler::cell_grad_input);
      set(OpKind::kCellGradHidden, &Compiler::cell_grad_hidden);
      set(OpKind::kCellGradWeight, &Compiler::cell_grad_weight);
      set(OpKind::kBatchNorm, &Compiler::batch_norm);
      set(OpKind::kLayerNorm, &Compiler::layer_norm);
      set(OpKind::kDropout, &Compiler::dropout);
      set(OpKind::kBatchNormGradInput, &Compiler::batch_norm);
      set(OpKind::kBatchNormGradWeight, &Compiler::batch_norm);
      set(OpKind::kLayerNormGradInput, &Compiler::layer_norm);
      set(OpKind::kLayerNormGradWeight, &Compiler::layer_norm);
      return t;
    }();
    return table;
  }

 private:
  void compute(const PlanOp& op) {
    const OpNode& node = graph_.node(op.node);
    const Emit emit = kernels().at(static_cast<size_t>(node.kind));
    SPLITSCOPE_CHECK(emit != nullptr, "the cuda backend has no kernel for op " + std::to_string(op.id) + " (" +
                                          std::string(to_string(node.kind)) + ")");
    const int span = new_span(single_span(op));
    (this->*emit)(op, span);
  }

  StreamId compute_stream(const PlanOp& op) const { return {op.device, StreamLane::kCompute}; }

  void dense(const PlanOp& op, int span) {
    const OpNode& layer = graph_.node(op.node);
    const Slice& slice = op.slice;
    const ValueView x = input(op, 0);
    const ValueView y = output(op, 0, slice.out);
    const int64_t rows = slice.batch.size();
    const int64_t cols = slice.out.size();
    const Ref w = weight(op, kWeight);
    add_step(MatMulStep{rows, cols, slice.reduce.size(), x.at_channel(slice.reduce.begin), x.row_stride(), w, cols,
                        y.start(), cols, false},
             compute_stream(op), span, {x.buffer, w.buffer}, {y.buffer});
    const bool partial = slice.is_partial(graph_.node(op.node));
    const Ref bias = weight(op, kBias);
    const Activation act = partial ? Activation::kNone : layer.attrs.activation;
    if (bias.valid() || act != Activation::kNone) {
      std::vector<int> reads{y.buffer};
      if (bias.valid()) reads.push_back(bias.buffer);
      add_step(BiasActivationStep{rows, cols, 1, y.start(), bias, act}, compute_stream(op), span, std::move(reads),
               {y.buffer});
    }
  }

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
                             const ValueView& y, Ref filter) {
    const Range channels = group_channels(piece, sizes.filters_per_group, sizes.channels_per_group);
    step.in_channels = channels.size();
    step.groups = channels.size() / sizes.channels_per_group;
    step.filters = piece.size();
    step.x = x.at_channel(channels.begin);
    step.y = y.at_channel(piece.begin);
    step.filter = Ref{filter.buffer, filter.offset + (piece.begin - first) * sizes.per_filter};
    return step;
  }

  void conv2d(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    const OpAttrs& attrs = node.attrs;
    const Shape& input_shape = node.input_shapes.at(0);
    const int64_t filters = node.output_shapes.at(0).at(0);
    const Slice& slice = op.slice;
    const ValueView x = input(op, 0);
    const ValueView y = output(op, 0, slice.out);
    const int64_t in_per_group = input_shape[0] / attrs.groups;
    const int64_t filters_per_group = filters / attrs.groups;
    const int64_t per_filter = in_per_group * attrs.kernel.h * attrs.kernel.w;
    const int64_t out_h = node.output_shapes[0][1];
    const int64_t out_w = node.output_shapes[0][2];
    const int64_t rows = slice.batch.size();
    const Ref filter = weight(op, kWeight);
    ConvStep base = conv_geometry(node, input_shape, node.output_shapes[0], rows);
    base.x_sample_stride = x.row_stride();
    base.y_sample_stride = y.row_stride();
    for (const Range& piece : group_pieces(slice.out, filters_per_group)) {
      const ConvStep step = conv_piece(base, piece, slice.out.begin, {filters_per_group, in_per_group, per_filter}, x, y,
                                       filter);
      add_step(step, compute_stream(op), span, {x.buffer, filter.buffer}, {y.buffer});
    }
    const Ref bias = weight(op, kBias);
    if (bias.valid() || attrs.activation != Activation::kNone) {
      std::vector<int> reads{y.buffer};
      if (bias.valid()) reads.push_back(bias.buffer);
      add_step(BiasActivationStep{rows, slice.out.size(), out_h * out_w, y.start(), bias, attrs.activation},
               compute_stream(op), span, std::move(reads), {y.buffer});
    }
  }

  void pool(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    const OpAttrs& attrs = node.attrs;
    const ValueView x = input(op, 0);
    const ValueView y = output(op, 0, op.slice.out);
    PoolStep step;
    step.max = node.kind == OpKind::kMaxPool;
    step.batch = op.slice.batch.size();
    step.channels = op.slice.out.size();
    step.height = node.input_shapes[0][1];
    step.width = node.input_shapes[0][2];
    step.x = x.at_channel(op.slice.out.begin);
    step.x_sample_stride = x.row_stride();
    step.kernel_h = attrs.kernel.h;
    step.kernel_w = attrs.kernel.w;
    step.stride_h = attrs.stride.h;
    step.stride_w = attrs.stride.w;
    step.pad_h = attrs.padding.h;
    step.pad_w = attrs.padding.w;
    step.y = y.start();
    step.y_sample_stride = y.row_stride();
    step.out_h = node.output_shapes[0][1];
    step.out_w = node.output_shapes[0][2];
    add_step(step, compute_stream(op), span, {x.buffer}, {y.buffer});
  }

  static Activation activation_of(OpKind kind) {
    switch (kind) {
      case OpKind::kRelu: return Activation::kRelu;
      case OpKind::kTanh: return Activation::kTanh;
      case OpKind::kSigmoid: return Activation::kSigmoid;
      default: return Activation::kNone;
    }
  }

  void activation(const PlanOp& op, int span) {
    const ValueView x = input(op, 0);
    const ValueView y = output(op, 0, op.slice.out);
    const int64_t width = op.slice.out.size() * y.inner;
    add_step(MapStep{op.slice.batch.size(), width, x.at_channel(op.slice.out.begin), x.row_stride(), y.start(), width,
                     activation_of(graph_.node(op.node).kind)},
             compute_stream(op), span, {x.buffer}, {y.buffer});
  }

  void flatten(const PlanOp& op, int span) {
    const ValueView x = input(op, 0);
    const ValueView y = output(op, 0, op.slice.out);
    // Output feature f of the flattened sample is input element f: channel f / inner.
    const Ref src{x.buffer, op.slice.out.begin - x.channels.begin * x.inner};
    const int64_t width = op.slice.out.size();
    add_step(CopyStep{src, x.row_stride(), y.start(), width, width, op.slice.batch.size()}, compute_stream(op), span,
             {x.buffer}, {y.buffer});
  }

  void softmax(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    const ValueView x = input(op, 0);
    const ValueView y = output(op, 0, op.slice.out);
    const int64_t width = element_count(node.input_shapes[0]);
    add_step(SoftmaxStep{op.slice.batch.size(), width, x.at_channel(0), x.row_stride(), op.slice.out.begin * y.inner,
                         op.slice.out.size() * y.inner, y.start(), y.row_stride()},
             compute_stream(op), span, {x.buffer}, {y.buffer});
  }

  void stack(const PlanOp& op, int span) {
    const ValueView y = output(op, 0, op.slice.out);
    const int64_t features = y.inner;
    for (int64_t t = op.slice.out.begin; t < op.slice.out.end; ++t) {
      const ValueView x = input(op, static_cast<int>(t));
      add_step(CopyStep{x.at_channel(0), x.row_stride(), Ref{y.buffer, (t - op.slice.out.begin) * features},
                        y.row_stride(), features, op.slice.batch.size()},
               compute_stream(op), span, {x.buffer}, {y.buffer});
    }
  }

  void step_slice(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    const ValueView x = input(op, 0);
    const ValueView y = output(op, 0, op.slice.out);
    SPLITSCOPE_CHECK(node.step >= x.channels.begin && node.step < x.channels.end,
                     "step slice input lacks its step");
    const Ref src{x.buffer, (node.step - x.channels.begin) * x.inner + op.slice.out.begin};
    add_step(CopyStep{src, x.row_stride(), y.start(), y.row_stride(), op.slice.out.size(), op.slice.batch.size()},
             compute_stream(op), span, {x.buffer}, {y.buffer});
  }

  /// add: the sum of the inputs' slice channels, in slot order. One sum kernel
  /// when every input holds exactly the slice (the block is contiguous), else
  /// one per row.
  void add(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    const ValueView y = output(op, 0, op.slice.out);
    const int64_t rows = op.slice.batch.size();
    const int64_t width = op.slice.out.size() * y.inner;
    std::vector<ValueView> xs;
    bool contiguous = true;
    for (size_t slot = 0; slot < node.input_shapes.size(); ++slot) {
      xs.push_back(input(op, static_cast<int>(slot)));
      contiguous = contiguous && xs.back().channels == op.slice.out;
    }
    std::vector<int> reads;
    for (const ValueView& x : xs) reads.push_back(x.buffer);
    for (int64_t row = 0; row < (contiguous ? 1 : rows); ++row) {
      SumStep step;
      step.elements = contiguous ? rows * width : width;
      step.y = Ref{y.buffer, row * y.row_stride()};
      for (const ValueView& x : xs) {
        const Ref at = x.at_channel(op.slice.out.begin);
        step.inputs.push_back(Ref{at.buffer, at.offset + row * x.row_stride()});
      }
      add_step(step, compute_stream(op), span, reads, {y.buffer});
    }
  }

  /// concat: each input's part of the slice, copied to its place in the output.
  void concat(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    const ValueView y = output(op, 0, op.slice.out);
    for (size_t slot = 0; slot < node.input_shapes.size(); ++slot) {
      const Range need = needed_input_channels(graph_, op.node, op.slice, static_cast<int>(slot));
      if (need.size() == 0) continue;
      const ValueView x = input(op, static_cast<int>(slot));
      const int64_t at = concat_offset(node, static_cast<int>(slot)) + need.begin - op.slice.out.begin;
      add_step(CopyStep{x.at_channel(need.begin), x.row_stride(), Ref{y.buffer, at * y.inner}, y.row_stride(),
                        need.size() * y.inner, op.slice.batch.size()},
               compute_stream(op), span, {x.buffer}, {y.buffer});
    }
  }

  /// The cell's three weight slices: columns g·H + u for u in the slice, per gate, packed [.., G·U].
  struct CellWeights {
    Ref input;
    Ref recurrent;
    Ref bias;
  };

  CellWeights cell_weights(const PlanOp& op) {
    return CellWeights{weight(op, kInputWeight), weight(op, kRecurrentWeight), weight(op, kCellBias)};
  }

  void lstm_cell(const PlanOp& op, int span) {
    const int64_t rows = op.slice.batch.size();
    const int64_t units = op.slice.out.size();
    const int64_t cols = 4 * units;
    const CellWeights w = cell_weights(op);
    const int gates = scratch(op.device, rows * cols);
    const ValueView x = input(op, kCellInputSlot);
    const ValueView h_out = output(op, kCellHiddenOutput, op.slice.out);
    const ValueView c_out = output(op, kCellStateOutput, op.slice.out);
    const int64_t input_size = graph_.node(op.node).input_shapes[kCellInputSlot][0];
    add_step(MatMulStep{rows, cols, input_size, x.at_channel(0), x.row_stride(), w.input, cols, Ref{gates, 0}, cols,
                        false},
             compute_stream(op), span, {x.buffer, w.input.buffer}, {gates});
    if (has_input(op, kCellHiddenSlot)) {
      const ValueView h = input(op, kCellHiddenSlot);
      add_step(MatMulStep{rows, cols, h.channels.size(), h.at_channel(0), h.row_stride(), w.recurrent, cols,
                          Ref{gates, 0}, cols, true},
               compute_stream(op), span, {h.buffer, w.recurrent.buffer, gates}, {gates});
    }
    LstmCellStep cell{rows, units, Ref{gates, 0}, w.bias, {}, 0, h_out.start(), c_out.start()};
    std::vector<int> reads{gates};
    if (w.bias.valid()) reads.push_back(w.bias.buffer);
    if (has_input(op, kCellStateSlot)) {
      const ValueView c = input(op, kCellStateSlot);
      cell.c_prev = c.at_channel(op.slice.out.begin);
      cell.c_prev_stride = c.row_stride();
      reads.push_back(c.buffer);
    }
    add_step(cell, compute_stream(op), span, std::move(reads), {h_out.buffer, c_out.buffer});
  }

  void gru_cell(const PlanOp& op, int span) {
    const int64_t rows = op.slice.batch.size();
    const int64_t units = op.slice.out.size();
    const int64_t cols = 3 * units;
    const CellWeights w = cell_weights(op);
    const int gates = scratch(op.device, 2 * rows * cols);
    const Ref input_gates{gates, 0};
    const Ref hidden_gates{gates, rows * cols};
    const ValueView x = input(op, kCellInputSlot);
    const ValueView h_out = output(op, kCellHiddenOutput, op.slice.out);
    const int64_t input_size = graph_.node(op.node).input_shapes[kCellInputSlot][0];
    add_step(MatMulStep{rows, cols, input_size, x.at_channel(0), x.row_stride(), w.input, cols, input_gates, cols,
                        false},
             compute_stream(op), span, {x.buffer, w.input.buffer}, {gates});
    GruCellStep cell{rows, units, input_gates, {}, w.bias, {}, 0, h_out.start()};
    std::vector<int> reads{gates};
    if (w.bias.valid()) reads.push_back(w.bias.buffer);
    if (has_input(op, kCellHiddenSlot)) {
      const ValueView h = input(op, kCellHiddenSlot);
      add_step(MatMulStep{rows, cols, h.channels.size(), h.at_channel(0), h.row_stride(), w.recurrent, cols,
                          hidden_gates, cols, false},
               compute_stream(op), span, {h.buffer, w.recurrent.buffer}, {gates});
      cell.hidden_gates = hidden_gates;
      cell.h_prev = h.at_channel(op.slice.out.begin);
      cell.h_prev_stride = h.row_stride();
      reads.push_back(h.buffer);
    }
    add_step(cell, compute_stream(op), span, std::move(reads), {h_out.buffer});
  }

  // --- the backward pass (training) ----------------------------------------

  /// Where slot `slot` is read from: the first channel the op needs of it.
  Ref needed_start(const PlanOp& op, const ValueView& value, int slot) const {
    return value.at_channel(needed_input_channels(graph_, op.node, op.slice, slot).begin);
  }

  /// A weight-gradient op's output, flat; when the op adds to the running sum
  /// of earlier micro-batches (its extra last input), that sum is first copied
  /// in, and the products then accumulate onto it. Returns whether they must.
  struct GradientTarget {
    ValueView value;
    bool accumulate = false;
  };
  GradientTarget gradient_output(const PlanOp& op, int span) {
    SPLITSCOPE_CHECK(op.outputs.size() == 1, "op " + std::to_string(op.id) + " writes more than one gradient");
    const ValueView out = view(op.outputs[0]);
    SPLITSCOPE_CHECK(plan_.value(out.id).role == ValueRole::kGradient,
                     "op " + std::to_string(op.id) + " writes a weight gradient into a value that is not one");
    if (op.inputs.size() <= graph_.node(op.node).input_shapes.size()) return {out, false};
    const ValueView previous = view(op.inputs.back());
    SPLITSCOPE_CHECK(previous.elements() == out.elements(), "a running gradient sum of another size");
    if (previous.buffer != out.buffer) {
      add_step(CopyStep{previous.start(), out.elements(), out.start(), out.elements(), out.elements(), 1},
               compute_stream(op), span, {previous.buffer}, {out.buffer});
    }
    return {out, true};
  }

  /// Batch norm forward or backward (NormStep), on the slice's channels.
  void batch_norm(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    NormStep step;
    step.mode = node.kind == OpKind::kBatchNorm            ? NormMode::kBatchNorm
                : node.kind == OpKind::kBatchNormGradInput ? NormMode::kBatchNormGradInput
                                                           : NormMode::kBatchNormGradWeight;
    step.rows = op.slice.batch.size();
    step.channels = op.slice.out.size();
    step.inner = norm_rules::channel_inner(node);
    norm_step(op, span, step);
  }

  /// Layer norm forward or backward (NormStep), over runs of the last axis.
  void layer_norm(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    NormStep step;
    step.mode = node.kind == OpKind::kLayerNorm            ? NormMode::kLayerNorm
                : node.kind == OpKind::kLayerNormGradInput ? NormMode::kLayerNormGradInput
                                                           : NormMode::kLayerNormGradWeight;
    step.rows = op.slice.batch.size();
    step.inner = norm_rules::features(node);
    // The slice's positions (all of them, but under sequence parallelism).
    step.channels = op.slice.out.size() * inner_count(node.output_shapes.at(0)) / step.inner;
    if (step.mode == NormMode::kLayerNormGradWeight) {
      step.scratch = Ref{scratch(op.device, 2 * step.rows * step.channels), 0};
    }
    norm_step(op, span, step);
  }

  /// The buffers of a NormStep: X (slot 0), dY (slot 1, backward), gamma and
  /// beta, and its output (a weight gradient's running sum included).
  void norm_step(const PlanOp& op, int span, NormStep step) {
    const OpNode& node = graph_.node(op.node);
    const OpDef& def = op_def(node.kind);
    step.epsilon = static_cast<float>(node.attrs.epsilon);
    step.training = node.attrs.training;
    const ValueView x = input(op, 0);
    step.x = needed_start(op, x, 0);
    step.x_stride = x.row_stride();
    std::vector<int> reads{x.buffer};
    std::vector<int> writes;
    if (node.pass == Pass::kBackward) {
      const ValueView dy = input(op, 1);
      step.dy = needed_start(op, dy, 1);
      step.dy_stride = dy.row_stride();
      reads.push_back(dy.buffer);
    }
    if (!def.writes_gradient) {
      step.gamma = weight(op, norm_rules::kGamma);
      reads.push_back(step.gamma.buffer);
      if (node.pass == Pass::kForward) {
        step.beta = weight(op, norm_rules::kBeta);
        reads.push_back(step.beta.buffer);
      }
      const ValueView out = output(op, 0, op.slice.out);
      step.out = out.start();
      step.out_stride = out.row_stride();
      writes.push_back(out.buffer);
    } else {
      const GradientTarget out = gradient_output(op, span);
      step.out = out.value.start();
      if (out.accumulate) {
        step.previous = out.value.start();
        reads.push_back(out.value.buffer);
      }
      writes.push_back(out.value.buffer);
    }
    if (step.scratch.valid()) writes.push_back(step.scratch.buffer);
    add_step(step, compute_stream(op), span, std::move(reads), std::move(writes));
  }

  void dropout(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    const Shape& shape = node.output_shapes.at(0);
    const ValueView x = input(op, 0);
    const ValueView y = output(op, 0, op.slice.out);
    DropoutStep step;
    step.rows = op.slice.batch.size();
    step.width = op.slice.out.size() * inner_count(shape);
    step.first_row = op.slice.batch.begin;
    step.first_element = op.slice.out.begin * inner_count(shape);
    step.sample_elements = element_count(shape);
    step.layer = node.layer;
    step.rate = static_cast<float>(node.attrs.rate);
    step.training = node.attrs.training;
    step.x = needed_start(op, x, 0);
    step.x_stride = x.row_stride();
    step.y = y.start();
    step.y_stride = y.row_stride();
    add_step(step, compute_stream(op), span, {x.buffer}, {y.buffer});
  }

  void loss(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    const ValueView prediction = input(op, 0);
    const ValueView target = input(op, 1);
    const ValueView gradient = output(op, 0, op.slice.out);
    LossGradStep step;
    step.rows = op.slice.batch.size();
    step.width = gradient.row_stride();
    step.cross_entropy = node.attrs.loss == LossKind::kSoftmaxCrossEntropy;
    step.batch = graph_.batch();
    step.prediction = needed_start(op, prediction, 0);
    step.prediction_stride = prediction.row_stride();
    step.target = needed_start(op, target, 1);
    step.target_stride = target.row_stride();
    step.gradient = gradient.start();
    add_step(step, compute_stream(op), span, {prediction.buffer, target.buffer}, {gradient.buffer});
  }

  void activation_grad(const PlanOp& op, int span) {
    const ValueView dy = input(op, 0);
    const ValueView y = input(op, 1);
    const ValueView dx = output(op, 0, op.slice.out);
    add_step(ActivationGradStep{op.slice.batch.size(), dx.row_stride(), needed_start(op, dy, 0), dy.row_stride(),
                                needed_start(op, y, 1), y.row_stride(), dx.start(), dx.row_stride(),
                                graph_.node(op.node).attrs.activation},
             compute_stream(op), span, {dy.buffer, y.buffer}, {dx.buffer});
  }

  /// dX = dZ·Wᵀ: the forward slice's W [inputs][units], read transposed.
  void dense_grad_input(const PlanOp& op, int span) {
    const ValueView dz = input(op, 0);
    const ValueView dx = output(op, 0, op.slice.out);
    const Ref w = weight(op, kWeight);
    const int64_t units = op.slice.reduce.size();
    MatMulStep step{op.slice.batch.size(), op.slice.out.size(), units, needed_start(op, dz, 0), dz.row_stride(), w,
                    units, dx.start(), dx.row_stride(), false};
    step.transpose_w = true;
    add_step(step, compute_stream(op), span, {dz.buffer, w.buffer}, {dx.buffer});
  }

  /// dW (+)= Xᵀ·dZ, then db (+)= Σ rows dZ where the slice starts the reduction.
  void dense_grad_weight(const PlanOp& op, int span) {
    const ValueView x = input(op, 0);
    const ValueView dz = input(op, 1);
    const GradientTarget out = gradient_output(op, span);
    const int64_t inputs = op.slice.reduce.size();
    const int64_t units = op.slice.out.size();
    MatMulStep step{inputs, units, op.slice.batch.size(), needed_start(op, x, 0), x.row_stride(),
                    needed_start(op, dz, 1), dz.row_stride(), out.value.start(), units, out.accumulate};
    step.transpose_x = true;
    std::vector<int> reads{x.buffer, dz.buffer};
    if (out.accumulate) reads.push_back(out.value.buffer);
    add_step(step, compute_stream(op), span, reads, {out.value.buffer});
    if (slice_carries_bias(graph_.node(op.node), op.slice.reduce)) {
      SPLITSCOPE_CHECK(out.value.elements() == inputs * units + units, "a dense gradient without room for its bias");
      add_step(BiasGradStep{op.slice.batch.size(), units, 1, needed_start(op, dz, 1), dz.row_stride(),
                            Ref{out.value.buffer, inputs * units}, out.accumulate},
               compute_stream(op), span, {dz.buffer, out.value.buffer}, {out.value.buffer});
    }
  }

  /// The forward convolution's geometry, from its input [C][H][W] and output [F][Ho][Wo] shapes.
  ConvStep conv_geometry(const OpNode& node, const Shape& input_shape, const Shape& output_shape, int64_t rows) const {
    const OpAttrs& attrs = node.attrs;
    ConvStep step;
    step.batch = rows;
    step.in_channels = input_shape.at(0);
    step.height = input_shape.at(1);
    step.width = input_shape.at(2);
    step.filters = output_shape.at(0);
    step.out_h = output_shape.at(1);
    step.out_w = output_shape.at(2);
    step.kernel_h = attrs.kernel.h;
    step.kernel_w = attrs.kernel.w;
    step.stride_h = attrs.stride.h;
    step.stride_w = attrs.stride.w;
    step.pad_h = attrs.padding.h;
    step.pad_w = attrs.padding.w;
    step.groups = attrs.groups;
    return step;
  }

  /// dX, the convolution's adjoint (cuDNN backward data), over the slice's
  /// filters: one call per piece (conv2d()'s rule), each writing the channels
  /// of its groups; channels of groups no filter of the slice touches (a
  /// partial sum over every channel) are zeroed first.
  void conv2d_grad_input(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    const OpAttrs& attrs = node.attrs;
    // Its shapes are the layer's, swapped: it reads dZ [F][Ho][Wo] and writes dX [C][H][W].
    const Shape& x_shape = node.output_shapes.at(0);
    const Shape& z_shape = node.input_shapes.at(0);
    const Slice& slice = op.slice;
    const ValueView dz = input(op, 0);
    const ValueView dx = output(op, 0, slice.out);
    const int64_t in_per_group = x_shape.at(0) / attrs.groups;
    const int64_t filters_per_group = z_shape.at(0) / attrs.groups;
    const int64_t per_filter = in_per_group * attrs.kernel.h * attrs.kernel.w;
    const Ref filter = weight(op, kWeight);
    ConvStep base = conv_geometry(node, x_shape, z_shape, slice.batch.size());
    base.pass = ConvPass::kBackwardData;
    base.x_sample_stride = dx.row_stride();
    base.y_sample_stride = dz.row_stride();
    if (group_channels(slice.reduce, filters_per_group, in_per_group) != slice.out) {
      add_step(ZeroStep{dx.start(), dx.elements()}, compute_stream(op), span, {}, {dx.buffer});
    }
    for (const Range& piece : group_pieces(slice.reduce, filters_per_group)) {
      const ConvStep step = conv_piece(base, piece, slice.reduce.begin, {filters_per_group, in_per_group, per_filter},
                                       dx, dz, filter);
      add_step(step, compute_stream(op), span, {dz.buffer, filter.buffer}, {dx.buffer});
    }
  }

  /// dW (+)= corr(X, dZ) (cuDNN backward filter) over the slice's filters, one
  /// call per piece as conv2d(), then db (+)= Σ dZ.
  void conv2d_grad_weight(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    const OpAttrs& attrs = node.attrs;
    const Shape& x_shape = node.input_shapes.at(0);
    const Shape& z_shape = node.input_shapes.at(1);
    const Slice& slice = op.slice;
    const ValueView x = input(op, 0);
    const ValueView dz = input(op, 1);
    const GradientTarget out = gradient_output(op, span);
    const int64_t in_per_group = x_shape.at(0) / attrs.groups;
    const int64_t filters_per_group = z_shape.at(0) / attrs.groups;
    const int64_t per_filter = in_per_group * attrs.kernel.h * attrs.kernel.w;
    ConvStep base = conv_geometry(node, x_shape, z_shape, slice.batch.size());
    base.pass = ConvPass::kBackwardFilter;
    base.accumulate = out.accumulate;
    base.x_sample_stride = x.row_stride();
    base.y_sample_stride = dz.row_stride();
    std::vector<int> reads{x.buffer, dz.buffer};
    if (out.accumulate) reads.push_back(out.value.buffer);
    for (const Range& piece : group_pieces(slice.out, filters_per_group)) {
      const ConvStep step = conv_piece(base, piece, slice.out.begin, {filters_per_group, in_per_group, per_filter}, x,
                                       dz, out.value.start());
      add_step(step, compute_stream(op), span, reads, {out.value.buffer});
    }
    if (attrs.bias) {
      const int64_t filters = slice.out.size();
      const int64_t w_floats = filters * per_filter;
      SPLITSCOPE_CHECK(out.value.elements() == w_floats + filters, "a convolution's gradient without room for its bias");
      add_step(BiasGradStep{slice.batch.size(), filters, z_shape.at(1) * z_shape.at(2), dz.at_channel(slice.out.begin),
                            dz.row_stride(), Ref{out.value.buffer, w_floats}, out.accumulate},
               compute_stream(op), span, {dz.buffer, out.value.buffer}, {out.value.buffer});
    }
  }

  void pool_grad(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    const OpAttrs& attrs = node.attrs;
    const bool max = node.kind == OpKind::kMaxPoolGrad;
    const int dy_slot = max ? 1 : 0;
    const Shape& x_shape = node.output_shapes.at(0);
    const Shape& y_shape = node.input_shapes.at(static_cast<size_t>(dy_slot));
    const ValueView dy = input(op, dy_slot);
    const ValueView dx = output(op, 0, op.slice.out);
    PoolGradStep step;
    step.max = max;
    step.batch = op.slice.batch.size();
    step.channels = op.slice.out.size();
    step.height = x_shape.at(1);
    step.width = x_shape.at(2);
    step.kernel_h = attrs.kernel.h;
    step.kernel_w = attrs.kernel.w;
    step.stride_h = attrs.stride.h;
    step.stride_w = attrs.stride.w;
    step.pad_h = attrs.padding.h;
    step.pad_w = attrs.padding.w;
    step.out_h = y_shape.at(1);
    step.out_w = y_shape.at(2);
    step.dy = dy.at_channel(op.slice.out.begin);
    step.dy_sample_stride = dy.row_stride();
    step.dx = dx.start();
    step.dx_sample_stride = dx.row_stride();
    std::vector<int> reads{dy.buffer};
    if (max) {
      const ValueView x = input(op, 0);
      step.x = x.at_channel(op.slice.out.begin);
      step.x_sample_stride = x.row_stride();
      reads.push_back(x.buffer);
    }
    add_step(step, compute_stream(op), span, std::move(reads), {dx.buffer});
  }

  /// unflatten and channel_slice: each row a contiguous run from the first
  /// input channel the slice needs (as flatten, its shapes the other way).
  void copy_from_first_channel(const PlanOp& op, int span) {
    const ValueView x = input(op, 0);
    const ValueView y = output(op, 0, op.slice.out);
    add_step(CopyStep{needed_start(op, x, 0), x.row_stride(), y.start(), y.row_stride(), y.row_stride(),
                      op.slice.batch.size()},
             compute_stream(op), span, {x.buffer}, {y.buffer});
  }

  // --- recurrent cells' backward (a whole layer, or a vertical split's slice of its hidden units) ---

  /// The gate-gradient columns each product of a cell's backward takes
  /// (unit-major dgates, four per unit): LSTM all four; GRU r, z, n on the
  /// input side and r, z, n·r on the recurrent side.
  static std::pair<std::array<int, 4>, int> gate_columns(bool gru, bool recurrent) {
    if (!gru) return {{0, 1, 2, 3}, 4};
    return {recurrent ? std::array<int, 4>{0, 1, 3, 0} : std::array<int, 4>{0, 1, 2, 0}, 3};
  }

  /// dgates and the second output of one step's units: the forward's gate
  /// products over the slice's gathered weight columns recomputed into the
  /// device's scratch, then the element-wise kernel.
  void cell_grad(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    const bool gru = node.kind == OpKind::kGruCellGrad;
    const int64_t rows = op.slice.batch.size();
    const int64_t units = op.slice.out.size();
    const int64_t inputs = node.attrs.cell_inputs;
    const int64_t cols = (gru ? 3 : 4) * units;
    const Ref wx = weight(op, kInputWeight);
    const Ref wh = weight(op, kRecurrentWeight);
    const Ref bias = weight(op, kCellBias);
    const int gates = scratch(op.device, (gru ? 2 : 1) * rows * cols);
    const ValueView x = input(op, 0);
    add_step(MatMulStep{rows, cols, inputs, needed_start(op, x, 0), x.row_stride(), wx, cols, Ref{gates, 0}, cols,
                        false},
             compute_stream(op), span, {x.buffer, wx.buffer}, {gates});
    CellGradStep step;
    step.gru = gru;
    step.rows = rows;
    step.units = units;
    step.gates = Ref{gates, 0};
    step.bias = bias;
    std::vector<int> reads{gates};
    if (bias.valid()) reads.push_back(bias.buffer);
    if (has_input(op, 1)) {
      const ValueView h = input(op, 1);
      const Ref into{gates, gru ? rows * cols : 0};
      add_step(MatMulStep{rows, cols, node.attrs.hidden, needed_start(op, h, 1), h.row_stride(), wh, cols, into, cols,
                          !gru},
               compute_stream(op), span, {h.buffer, wh.buffer, gates}, {gates});
      if (gru) step.hidden_gates = into;
      step.h_prev = h.at_channel(op.slice.out.begin);  // the GRU mixes each unit with its own h
      step.h_prev_stride = h.row_stride();
      reads.push_back(h.buffer);
    }
    if (!gru && has_input(op, 2)) {
      const ValueView c = input(op, 2);
      step.c_prev = needed_start(op, c, 2);
      step.c_prev_stride = c.row_stride();
      reads.push_back(c.buffer);
    }
    const int dh_slot = gru ? 2 : 3;
    const ValueView dh = input(op, dh_slot);
    step.dh = needed_start(op, dh, dh_slot);
    step.dh_stride = dh.row_stride();
    reads.push_back(dh.buffer);
    if (!gru && has_input(op, 4)) {
      const ValueView dc = input(op, 4);
      step.dc = needed_start(op, dc, 4);
      step.dc_stride = dc.row_stride();
      reads.push_back(dc.buffer);
    }
    const ValueView dgates = output(op, 0, op.slice.out);
    const ValueView second = output(op, 1, op.slice.out);
    step.dgates = dgates.start();
    step.dgates_stride = dgates.row_stride();
    step.second = second.start();
    step.second_stride = second.row_stride();
    add_step(step, compute_stream(op), span, std::move(reads), {dgates.buffer, second.buffer});
  }

  /// Gathers the gate-major matrix of `columns` of the op's units from the dgates input into the scratch at `at`.
  Ref gather_gates(const PlanOp& op, int span, int slot, bool recurrent, int64_t at) {
    const OpNode& node = graph_.node(op.node);
    const ValueView dgates = input(op, slot);
    const auto [columns, count] = gate_columns(node.attrs.gru, recurrent);
    const int64_t rows = op.slice.batch.size();
    const int64_t units = cell_rules::gradient_units(node, op.slice).size();
    const int buffer = scratch(op.device, at + rows * count * units);
    const Ref out{buffer, at};
    add_step(GateGatherStep{rows, units, count, columns, needed_start(op, dgates, slot), dgates.row_stride(), out},
             compute_stream(op), span, {dgates.buffer, buffer}, {buffer});
    return out;
  }

  /// dx = Gx·Wxᵀ over the op's units (a partial sum of dx for a slice).
  void cell_grad_input(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    const int64_t width = cell_rules::gradient_gates(node) * op.slice.reduce.size();
    const Ref gx = gather_gates(op, span, 0, false, 0);
    const Ref wx = weight(op, kInputWeight);
    const ValueView dx = output(op, 0, op.slice.out);
    MatMulStep step{op.slice.batch.size(), node.attrs.cell_inputs, width, gx, width, wx, width, dx.start(),
                    dx.row_stride(), false};
    step.transpose_w = true;
    add_step(step, compute_stream(op), span, {gx.buffer, wx.buffer}, {dx.buffer});
  }

  /// dh_prev = Gh·Whᵀ over the op's units, plus the GRU's direct part dh⊙z
  /// of those units (copied in first; a slice zeroes the rest of dh_prev).
  void cell_grad_hidden(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    const int64_t rows = op.slice.batch.size();
    const int64_t hidden = node.attrs.hidden;
    const Range units = op.slice.reduce;
    const int64_t width = cell_rules::gradient_gates(node) * units.size();
    const Ref gh = gather_gates(op, span, 0, true, 0);
    const Ref wh = weight(op, kRecurrentWeight);
    const ValueView dh = output(op, 0, op.slice.out);
    const bool direct = node.attrs.gru && has_input(op, 1);
    if (direct) {
      if (units.size() != hidden) add_step(ZeroStep{dh.start(), dh.elements()}, compute_stream(op), span, {}, {dh.buffer});
      const ValueView part = input(op, 1);
      add_step(CopyStep{needed_start(op, part, 1), part.row_stride(), dh.at_channel(units.begin), dh.row_stride(),
                        units.size(), rows},
               compute_stream(op), span, {part.buffer, dh.buffer}, {dh.buffer});
    }
    MatMulStep step{rows, hidden, width, gh, width, wh, width, dh.start(), dh.row_stride(), direct};
    step.transpose_w = true;
    std::vector<int> reads{gh.buffer, wh.buffer};
    if (direct) reads.push_back(dh.buffer);
    add_step(step, compute_stream(op), span, std::move(reads), {dh.buffer});
  }

  /// The step's weight gradient of the op's units, flat (Wx [I × G·U], Wh
  /// [H × G·U], b [G·U]), added to the later steps' running sum: dWx = xᵀ·Gx,
  /// dWh = h_prevᵀ·Gh (nothing at t = 0), db = Σ rows Gx.
  void cell_grad_weight(const PlanOp& op, int span) {
    const OpNode& node = graph_.node(op.node);
    const int64_t rows = op.slice.batch.size();
    const int64_t hidden = node.attrs.hidden;
    const int64_t inputs = node.attrs.cell_inputs;
    const int64_t width = cell_rules::gradient_gates(node) * op.slice.out.size();
    const ValueView x = input(op, 0);
    const GradientTarget out = gradient_output(op, span);
    SPLITSCOPE_CHECK(out.value.elements() == (inputs + hidden) * width + (node.attrs.bias ? width : 0),
                     "a cell's weight gradient of the wrong size (op " + std::to_string(op.id) + ")");
    const Ref gx = gather_gates(op, span, 2, false, 0);
    std::vector<int> reads{x.buffer, gx.buffer};
    if (out.accumulate) reads.push_back(out.value.buffer);
    MatMulStep dwx{inputs, width, rows, needed_start(op, x, 0), x.row_stride(), gx, width, out.value.start(), width,
                   out.accumulate};
    dwx.transpose_x = true;
    add_step(dwx, compute_stream(op), span, reads, {out.value.buffer});
    const Ref dwh_at{out.value.buffer, inputs * width};
    if (has_input(op, 1)) {
      const ValueView h = input(op, 1);
      // The GRU's recurrent side takes other columns; the LSTM's are the input side's.
      const Ref gh = node.attrs.gru ? gather_gates(op, span, 2, true, rows * width) : gx;
      MatMulStep dwh{hidden, width, rows, needed_start(op, h, 1), h.row_stride(), gh, width, dwh_at, width,
                     out.accumulate};
      dwh.transpose_x = true;
      std::vector<int> h_reads{h.buffer, gh.buffer, out.value.buffer};
      add_step(dwh, compute_stream(op), span, std::move(h_reads), {out.value.buffer});
    } else if (!out.accumulate) {
      add_step(ZeroStep{dwh_at, hidden * width}, compute_stream(op), span, {}, {out.value.buffer});
    }
    if (node.attrs.bias) {
      add_step(BiasGradStep{rows, width, 1, gx, width, Ref{out.value.buffer, (inputs + hidden) * width},
                            out.accumulate},
               compute_stream(op), span, {gx.buffer, out.value.buffer}, {out.value.buffer});
    }
  }

  /// The optimizer step of one parameter value: a step per tensor it holds,
  /// reading that tensor's run of the flat gradient, with its optimizer state
  /// (zeros at first, then kept from step to step) in one buffer per value.
  void update(const PlanOp& op) {
    SPLITSCOPE_CHECK(graph_.is_training() && op.inputs.size() == 1, op_label(plan_, op) + " is not an update");
    const int span = new_span(single_span(op));
    const Optimizer& optimizer = graph_.training()->optimizer;
    const Value& params = plan_.value(op.params);
    const ValueView gradient = view(op.inputs[0]);
    const auto tensors = param_tensors(graph_, params.node);
    std::vector<std::pair<Ref, int64_t>> held;  // each tensor's buffer and size
    int64_t total = 0;
    for (int tensor = 0; tensor < static_cast<int>(tensors.size()); ++tensor) {
      const Ref buffer = weight(op.params, tensor);
      if (!buffer.valid()) continue;
      const int64_t elements = program_.buffers[static_cast<size_t>(buffer.buffer)].elements;
      held.emplace_back(buffer, elements);
      total += elements;
    }
    SPLITSCOPE_CHECK(total == gradient.elements(), op_label(plan_, op) + ": its gradient and weights differ in size");
    const int per_weight = optimizer.state_per_param();
    int state = -1;
    int counter = -1;
    if (per_weight > 0) state = state_buffer(params.device, total * per_weight, fmt::format("optimizer state of value {}", params.id));
    if (optimizer.adam()) counter = state_buffer(params.device, static_cast<int64_t>(held.size()), fmt::format("update count of value {}", params.id));
    int64_t offset = 0;
    for (size_t t = 0; t < held.size(); ++t) {
      const auto& [buffer, elements] = held[t];
      UpdateStep step;
      step.elements = elements;
      step.optimizer = optimizer;
      step.weights = buffer;
      step.gradient = Ref{gradient.buffer, offset};
      std::vector<int> touched{buffer.buffer};
      if (state >= 0) {
        step.first = Ref{state, offset};
        if (optimizer.adam()) step.second = Ref{state, total + offset};
        touched.push_back(state);
      }
      if (counter >= 0) {
        step.counter = Ref{counter, static_cast<int64_t>(t)};
        touched.push_back(counter);
      }
      std::vector<int> reads = touched;
      reads.push_back(gradient.buffer);
      add_step(step, compute_stream(op), span, std::move(reads), std::move(touched));
      offset += elements;
    }
  }

  int state_buffer(int device, int64_t elements, std::string label) {
    BufferSpec spec;
    spec.kind = BufferKind::kState;
    spec.device = device;
    spec.elements = elements;
    spec.label = std::move(label);
    return add_buffer(std::move(spec));
  }

  // --- epilogue, transfers, collectives ------------------------------------

  void epilogue(const PlanOp& op) {
    const int span = new_span(single_span(op));
    const ValueView sum = view(op.inputs.at(0));
    const ValueView y = view(op.outputs.at(0));
    SPLITSCOPE_CHECK(sum.batch == y.batch && sum.channels == y.channels, "epilogue changes the value's ranges");
    add_step(MapStep{y.batch.size(), y.row_stride(), sum.start(), sum.row_stride(), y.start(), y.row_stride(),
                     graph_.node(op.node).attrs.activation},
             compute_stream(op), span, {sum.buffer}, {y.buffer});
  }

  void transfer(const PlanOp& op) {
    const ValueView src = view(op.inputs.at(0));
    const ValueView dst = view(op.outputs.at(0));
    SPLITSCOPE_CHECK(src.batch == dst.batch && src.channels == dst.channels && src.inner == dst.inner,
                     "a transfer changes the value's ranges (op " + std::to_string(op.id) + ")");
    SPLITSCOPE_CHECK(src.device == op.src_device && dst.device == op.device, "transfer devices disagree with values");
    const int span = new_span(single_span(op));
    copy_between(op, span, src.device, dst.device, src.start(), src.elements(), dst.start(), dst.elements(),
                 src.elements(), 1);
  }

  /// The sends of the collective's algorithm (collective_schedule.hpp), each
  /// a copy into the receiver on its copy-in stream; a reducing send lands in
  /// a receive buffer and a sum kernel adds the receiver's own chunk.
  void collective(const PlanOp& op) {
    const CollectiveSchedule schedule = collective_schedule(plan_, op);
    const auto at = [&schedule](const std::vector<ValueView>& views, int slot, int segment) -> const ValueView& {
      return views.at(static_cast<size_t>(schedule.index(slot, segment)));
    };
    std::vector<ValueView> inputs;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      inputs.push_back(view(op.inputs[i]));
      SPLITSCOPE_CHECK(inputs.back().device == op.participants[i / static_cast<size_t>(schedule.segments)],
                       "collective input not on its participant");
    }
    std::vector<ValueView> outputs;  // op.outputs order: a delivery's segments in a row
    for (int id : op.outputs) outputs.push_back(view(id));
    std::vector<int> spans;
    for (size_t d = 0; d < schedule.deliveries.size(); ++d) {
      const CollectiveDelivery& delivery = schedule.deliveries[d];
      spans.push_back(new_span(delivery_span(op, delivery)));
      if (delivery.local_copy < 0) continue;
      for (int k = 0; k < schedule.segments; ++k) {
        const ValueView& own = at(inputs, delivery.local_copy, k);
        copy_slice(op, spans.back(), own, at(outputs, static_cast<int>(d), k), own.channels);
      }
    }
    std::map<int, int> receive_buffers;  // receiving delivery -> its buffer for reducing sends
    // A reduce-scatter's partial sums in transit: a copy of the whole tensor on each participant.
    std::vector<int> staging;
    for (size_t i = 0; schedule.staged && i < op.participants.size(); ++i) {
      BufferSpec spec;
      spec.kind = BufferKind::kReceive;
      spec.device = op.participants[i];
      spec.elements = schedule.segment_starts.back();
      spec.label = fmt::format("{} op {}: partial sums on device {}", to_string(op.collective), op.id, spec.device);
      staging.push_back(add_buffer(std::move(spec)));
    }
    for (const CollectiveSend& send : schedule.sends) {
      const int span = spans.at(static_cast<size_t>(send.delivers_to));
      if (send.slice >= 0) {
        const ValueView& source = send.from_input ? inputs.at(static_cast<size_t>(send.from))
                                                  : outputs.at(static_cast<size_t>(send.touches_from));
        copy_slice(op, span, source, outputs.at(static_cast<size_t>(send.delivers_to)),
                   inputs.at(static_cast<size_t>(send.slice)).channels);
        continue;
      }
      // A chunk of a bucket may span several of its values: a copy (and a sum) for each; a
      // reduce-scatter of several rows repeats its chunk in each row (CollectiveSchedule::rows).
      const int64_t first = schedule.deliveries.at(static_cast<size_t>(send.delivers_to)).first_element;
      for (int64_t row = 0; row < schedule.rows; ++row) {
        const int64_t row_start = row * schedule.row_elements;
        for (const SegmentPiece& piece : schedule.pieces(send.elements)) {
          const Range part = piece.elements;
          const Range in_tensor{row_start + part.begin, row_start + part.end};
          const ValueView& source = send.from_input ? at(inputs, send.from, piece.segment)
                                                    : at(outputs, send.touches_from, piece.segment);
          const ValueView& target = at(outputs, send.delivers_to, piece.segment);
          const int64_t row_out = schedule.rows > 1 ? row * target.row_stride() : 0;
          // From the sender's staging or value, into the receiver's staging or (its chunk of) its output.
          SPLITSCOPE_CHECK((send.from_staging || in_tensor.end <= source.elements()) &&
                               (send.to_staging ||
                                (part.begin >= first && row_out + part.end - first <= target.elements())),
                           "collective chunk outside its values (op " + std::to_string(op.id) + ")");
          const Ref from = send.from_staging ? Ref{staging.at(static_cast<size_t>(send.from)), in_tensor.begin}
                                             : Ref{source.buffer, in_tensor.begin};
          const Ref into = send.to_staging ? Ref{staging.at(static_cast<size_t>(send.delivers_to)), in_tensor.begin}
                                           : Ref{target.buffer, row_out + part.begin - first};
          const int64_t count = part.size();
          if (!send.reduces) {
            copy_between(op, span, source.device, target.device, from, count, into, count, count, 1);
            continue;
          }
          auto [slot, fresh] = receive_buffers.try_emplace(send.delivers_to, -1);
          if (fresh) {
            int64_t largest = 0;  // the longest chunk any reducing send carries, of every row
            for (const CollectiveSend& other : schedule.sends) {
              if (other.reduces) largest = std::max(largest, other.elements.size());
            }
            BufferSpec spec;
            spec.kind = BufferKind::kReceive;
            spec.device = target.device;
            spec.elements = largest * schedule.rows;
            spec.label = fmt::format("{} op {}: receives on device {}", to_string(op.collective), op.id, target.device);
            slot->second = add_buffer(std::move(spec));
          }
          const int receive = slot->second;
          const Ref landed{receive, row * send.elements.size() + piece.offset};
          copy_between(op, span, source.device, target.device, from, count, landed, count, count, 1);
          const ValueView& own = at(inputs, send.needs_receiver_input, piece.segment);
          SumStep sum;
          sum.elements = count;
          sum.y = into;
          sum.inputs = {Ref{own.buffer, in_tensor.begin}, landed};
          add_step(std::move(sum), StreamId{target.device, StreamLane::kCopyIn}, span, {own.buffer, receive},
                   {into.buffer});
        }
      }
    }
  }

  /// Copies channels `channels` of every row from `source` into `target`.
  void copy_slice(const PlanOp& op, int span, const ValueView& source, const ValueView& target, Range channels) {
    check_rows(source, target.batch);
    SPLITSCOPE_CHECK(source.channels.contains(channels) && target.channels.contains(channels) &&
                         source.inner == target.inner,
                     "gathered slice outside the gathered value (op " + std::to_string(op.id) + ")");
    copy_between(op, span, source.device, target.device, source.at_channel(channels.begin), source.row_stride(),
                 target.at_channel(channels.begin), target.row_stride(), channels.size() * target.inner,
                 target.batch.size());
  }

  const Plan& plan_;
  const Graph& graph_;
  CompileOptions options_;
  DeviceProgram program_;
  std::vector<int> last_writer_;            ///< per buffer: the step that last wrote it
  std::vector<std::vector<int>> readers_;   ///< per buffer: steps that read it since
  std::map<WeightKey, int> weights_;
  std::map<int, int> scratch_;
};

}  // namespace

bool has_cuda_kernel(OpKind kind) { return Compiler::kernels().at(static_cast<size_t>(kind)) != nullptr; }

DeviceProgram compile_plan(const Plan& plan, const CompileOptions& options) {
  SPLITSCOPE_CHECK(plan.graph != nullptr, "plan without a graph");
  return Compiler(plan, options).run();
}

}  // namespace splitscope::gpu
