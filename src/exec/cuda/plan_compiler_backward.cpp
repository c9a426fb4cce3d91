// The plan compiler: the steps of the backward ops and the optimizer updates.
#include "exec/cuda/plan_compiler_state.hpp"

namespace splitscope::gpu {

namespace plan_compilation {

Ref Compiler::needed_start(const PlanOp& op, const ValueView& value, int slot) const {
  return value.at_channel(needed_input_channels(graph_, op.node, op.slice, slot).begin);
}

Compiler::GradientTarget Compiler::gradient_output(const PlanOp& op, int span) {
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

void Compiler::batch_norm(const PlanOp& op, int span) {
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

void Compiler::layer_norm(const PlanOp& op, int span) {
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

void Compiler::norm_step(const PlanOp& op, int span, NormStep step) {
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

void Compiler::dropout(const PlanOp& op, int span) {
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

void Compiler::loss(const PlanOp& op, int span) {
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

void Compiler::activation_grad(const PlanOp& op, int span) {
  const ValueView dy = input(op, 0);
  const ValueView y = input(op, 1);
  const ValueView dx = output(op, 0, op.slice.out);
  add_step(ActivationGradStep{op.slice.batch.size(), dx.row_stride(), needed_start(op, dy, 0), dy.row_stride(),
                              needed_start(op, y, 1), y.row_stride(), dx.start(), dx.row_stride(),
                              graph_.node(op.node).attrs.activation},
           compute_stream(op), span, {dy.buffer, y.buffer}, {dx.buffer});
}

void Compiler::dense_grad_input(const PlanOp& op, int span) {
  const ValueView dz = input(op, 0);
  const ValueView dx = output(op, 0, op.slice.out);
  const Ref w = weight(op, kWeight);
  const int64_t units = op.slice.reduce.size();
  MatMulStep step{op.slice.batch.size(), op.slice.out.size(), units, needed_start(op, dz, 0), dz.row_stride(), w,
                  units, dx.start(), dx.row_stride(), false};
  step.transpose_w = true;
  add_step(step, compute_stream(op), span, {dz.buffer, w.buffer}, {dx.buffer});
}

void Compiler::dense_grad_weight(const PlanOp& op, int span) {
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

ConvStep Compiler::conv_step(const OpNode& node, const Shape& input_shape, const Shape& output_shape, int64_t rows) const {
  ConvStep step;
  step.batch = rows;
  step.geometry = conv_geometry(node.attrs, input_shape, output_shape.at(0));
  SPLITSCOPE_CHECK(step.geometry.out_h() == output_shape.at(1) && step.geometry.out_w() == output_shape.at(2),
                   node.name + ": a convolution whose output planes its window does not give");
  return step;
}

void Compiler::conv2d_grad_input(const PlanOp& op, int span) {
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
  ConvStep base = conv_step(node, x_shape, z_shape, slice.batch.size());
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

void Compiler::conv2d_grad_weight(const PlanOp& op, int span) {
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
  ConvStep base = conv_step(node, x_shape, z_shape, slice.batch.size());
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

void Compiler::pool_grad(const PlanOp& op, int span) {
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
  step.window = pool_geometry(attrs, x_shape, op.slice.out.size());
  SPLITSCOPE_CHECK(step.window.out_h() == y_shape.at(1) && step.window.out_w() == y_shape.at(2),
                   node.name + ": a pooling gradient whose output planes its window does not give");
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

void Compiler::copy_from_first_channel(const PlanOp& op, int span) {
  const ValueView x = input(op, 0);
  const ValueView y = output(op, 0, op.slice.out);
  add_step(CopyStep{needed_start(op, x, 0), x.row_stride(), y.start(), y.row_stride(), y.row_stride(),
                    op.slice.batch.size()},
           compute_stream(op), span, {x.buffer}, {y.buffer});
}

std::pair<std::array<int, 4>, int> Compiler::gate_columns(bool gru, bool recurrent) {
  if (!gru) return {{0, 1, 2, 3}, 4};
  return {recurrent ? std::array<int, 4>{0, 1, 3, 0} : std::array<int, 4>{0, 1, 2, 0}, 3};
}

void Compiler::cell_grad(const PlanOp& op, int span) {
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

Ref Compiler::gather_gates(const PlanOp& op, int span, int slot, bool recurrent, int64_t at) {
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

void Compiler::cell_grad_input(const PlanOp& op, int span) {
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

void Compiler::cell_grad_hidden(const PlanOp& op, int span) {
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

void Compiler::cell_grad_weight(const PlanOp& op, int span) {
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

void Compiler::update(const PlanOp& op) {
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

int Compiler::state_buffer(int device, int64_t elements, std::string label) {
  BufferSpec spec;
  spec.kind = BufferKind::kState;
  spec.device = device;
  spec.elements = elements;
  spec.label = std::move(label);
  return add_buffer(std::move(spec));
}

}  // namespace plan_compilation

}  // namespace splitscope::gpu
