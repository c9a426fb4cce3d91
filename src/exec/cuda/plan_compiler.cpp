// The plan compiler: buffers, steps and weights, the kernel table, and the walk
// that emits every op (plan_compiler_state.hpp).
#include "exec/cuda/plan_compiler_state.hpp"

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

namespace plan_compilation {

DeviceProgram Compiler::run() {
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

int Compiler::add_buffer(BufferSpec spec) {
  program_.buffers.push_back(std::move(spec));
  last_writer_.push_back(-1);
  readers_.emplace_back();
  return static_cast<int>(program_.buffers.size()) - 1;
}

ValueView Compiler::view(int value_id) const {
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

int Compiler::new_span(const SpanSlot& slot) {
  program_.spans.push_back(SpanSpec{slot.op, slot.device, slot.lane, slot.kind, slot.flops, slot.bytes, {}});
  return static_cast<int>(program_.spans.size()) - 1;
}

void Compiler::add_step(StepAction action, StreamId stream, int span, std::vector<int> reads, std::vector<int> writes) {
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

std::optional<WeightGather> Compiler::parameter_gather(const Value& params, int tensor) const {
  std::optional<WeightGather> gather = parameter_layout(params, tensor);
  if (gather) gather->loaded = ParamElements(graph_, params.node, tensor, 0).loaded();
  return gather;
}

std::optional<WeightGather> Compiler::parameter_layout(const Value& params, int tensor) const {
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

std::string Compiler::tensor_label(const Value& params, int tensor) const {
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

Ref Compiler::weight(int params_id, int tensor) {
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

Ref Compiler::weight(const PlanOp& op, int tensor) {
  SPLITSCOPE_CHECK(op.params >= 0 && plan_.value(op.params).device == op.device,
                   "op " + std::to_string(op.id) + " has weights but no parameter value on its device");
  return weight(op.params, tensor);
}

int Compiler::scratch(int device, int64_t elements) {
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

int Compiler::staging(int64_t elements, const std::string& label) {
  BufferSpec spec;
  spec.kind = BufferKind::kStaging;
  spec.device = -1;
  spec.elements = elements;
  spec.label = label;
  return add_buffer(std::move(spec));
}

void Compiler::copy_between(const PlanOp& op, int span, int from, int to, Ref src, int64_t src_pitch, Ref dst,
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

void Compiler::check_rows(const ValueView& value, Range batch) const {
  SPLITSCOPE_CHECK(value.batch == batch, fmt::format("value {} holds rows {}, the op needs {}", value.id,
                                                     text(value.batch), text(batch)));
}

ValueView Compiler::input(const PlanOp& op, int slot) const {
  const int id = op.inputs.at(static_cast<size_t>(slot));
  const ValueView value = view(id);
  check_rows(value, op.slice.batch);
  const Range needed = needed_input_channels(graph_, op.node, op.slice, slot);
  SPLITSCOPE_CHECK(value.channels.contains(needed),
                   fmt::format("value {} holds channels {}, op {} reads {}", id, text(value.channels), op.id,
                               text(needed)));
  return value;
}

ValueView Compiler::output(const PlanOp& op, int index, Range channels) const {
  const ValueView value = view(op.outputs.at(static_cast<size_t>(index)));
  check_rows(value, op.slice.batch);
  SPLITSCOPE_CHECK(value.channels == channels, fmt::format("op {} writes channels {} into value {} holding {}",
                                                           op.id, text(channels), value.id,
                                                           text(value.channels)));
  return value;
}

bool Compiler::has_input(const PlanOp& op, int slot) const {
  return static_cast<size_t>(slot) < op.inputs.size() && op.inputs[static_cast<size_t>(slot)] >= 0;
}

const std::array<Compiler::Emit, kOpKindCount>& Compiler::kernels() {
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

void Compiler::compute(const PlanOp& op) {
  const OpNode& node = graph_.node(op.node);
  const Emit emit = kernels().at(static_cast<size_t>(node.kind));
  SPLITSCOPE_CHECK(emit != nullptr, "the cuda backend has no kernel for op " + std::to_string(op.id) + " (" +
                                        std::string(to_string(node.kind)) + ")");
  const int span = new_span(single_span(op));
  (this->*emit)(op, span);
}

}  // namespace plan_compilation

bool has_cuda_kernel(OpKind kind) {
  return plan_compilation::Compiler::kernels().at(static_cast<size_t>(kind)) != nullptr;
}

DeviceProgram compile_plan(const Plan& plan, const CompileOptions& options) {
  SPLITSCOPE_CHECK(plan.graph != nullptr, "plan without a graph");
  return plan_compilation::Compiler(plan, options).run();
}

}  // namespace splitscope::gpu
