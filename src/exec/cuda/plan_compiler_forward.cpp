// The plan compiler: the steps of each forward compute op.
#include "exec/cuda/plan_compiler_state.hpp"

namespace splitscope::gpu {

namespace plan_compilation {

void Compiler::dense(const PlanOp& op, int span) {
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

ConvStep Compiler::conv_piece(ConvStep step, Range piece, int64_t first, const GroupSizes& sizes, const ValueView& x,
                           const ValueView& y, Ref filter) {
  const Range channels = group_channels(piece, sizes.filters_per_group, sizes.channels_per_group);
  step.geometry.in_channels = channels.size();
  step.geometry.groups = channels.size() / sizes.channels_per_group;
  step.geometry.filters = piece.size();
  step.x = x.at_channel(channels.begin);
  step.y = y.at_channel(piece.begin);
  step.filter = Ref{filter.buffer, filter.offset + (piece.begin - first) * sizes.per_filter};
  return step;
}

void Compiler::conv2d(const PlanOp& op, int span) {
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
  ConvStep base = conv_step(node, input_shape, node.output_shapes[0], rows);
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

void Compiler::pool(const PlanOp& op, int span) {
  const OpNode& node = graph_.node(op.node);
  const ValueView x = input(op, 0);
  const ValueView y = output(op, 0, op.slice.out);
  PoolStep step;
  step.max = node.kind == OpKind::kMaxPool;
  step.batch = op.slice.batch.size();
  step.window = pool_geometry(node, op.slice.out.size());
  SPLITSCOPE_CHECK(step.window.out_h() == node.output_shapes[0][1] && step.window.out_w() == node.output_shapes[0][2],
                   node.name + ": a pooling whose output planes its window does not give");
  step.x = x.at_channel(op.slice.out.begin);
  step.x_sample_stride = x.row_stride();
  step.y = y.start();
  step.y_sample_stride = y.row_stride();
  add_step(step, compute_stream(op), span, {x.buffer}, {y.buffer});
}

Activation Compiler::activation_of(OpKind kind) {
  switch (kind) {
    case OpKind::kRelu: return Activation::kRelu;
    case OpKind::kTanh: return Activation::kTanh;
    case OpKind::kSigmoid: return Activation::kSigmoid;
    default: return Activation::kNone;
  }
}

void Compiler::activation(const PlanOp& op, int span) {
  const ValueView x = input(op, 0);
  const ValueView y = output(op, 0, op.slice.out);
  const int64_t width = op.slice.out.size() * y.inner;
  add_step(MapStep{op.slice.batch.size(), width, x.at_channel(op.slice.out.begin), x.row_stride(), y.start(), width,
                   activation_of(graph_.node(op.node).kind)},
           compute_stream(op), span, {x.buffer}, {y.buffer});
}

void Compiler::flatten(const PlanOp& op, int span) {
  const ValueView x = input(op, 0);
  const ValueView y = output(op, 0, op.slice.out);
  // Output feature f of the flattened sample is input element f: channel f / inner.
  const Ref src{x.buffer, op.slice.out.begin - x.channels.begin * x.inner};
  const int64_t width = op.slice.out.size();
  add_step(CopyStep{src, x.row_stride(), y.start(), width, width, op.slice.batch.size()}, compute_stream(op), span,
           {x.buffer}, {y.buffer});
}

void Compiler::softmax(const PlanOp& op, int span) {
  const OpNode& node = graph_.node(op.node);
  const ValueView x = input(op, 0);
  const ValueView y = output(op, 0, op.slice.out);
  const int64_t width = element_count(node.input_shapes[0]);
  add_step(SoftmaxStep{op.slice.batch.size(), width, x.at_channel(0), x.row_stride(), op.slice.out.begin * y.inner,
                       op.slice.out.size() * y.inner, y.start(), y.row_stride()},
           compute_stream(op), span, {x.buffer}, {y.buffer});
}

void Compiler::stack(const PlanOp& op, int span) {
  const ValueView y = output(op, 0, op.slice.out);
  const int64_t features = y.inner;
  for (int64_t t = op.slice.out.begin; t < op.slice.out.end; ++t) {
    const ValueView x = input(op, static_cast<int>(t));
    add_step(CopyStep{x.at_channel(0), x.row_stride(), Ref{y.buffer, (t - op.slice.out.begin) * features},
                      y.row_stride(), features, op.slice.batch.size()},
             compute_stream(op), span, {x.buffer}, {y.buffer});
  }
}

void Compiler::step_slice(const PlanOp& op, int span) {
  const OpNode& node = graph_.node(op.node);
  const ValueView x = input(op, 0);
  const ValueView y = output(op, 0, op.slice.out);
  SPLITSCOPE_CHECK(node.step >= x.channels.begin && node.step < x.channels.end,
                   "step slice input lacks its step");
  const Ref src{x.buffer, (node.step - x.channels.begin) * x.inner + op.slice.out.begin};
  add_step(CopyStep{src, x.row_stride(), y.start(), y.row_stride(), op.slice.out.size(), op.slice.batch.size()},
           compute_stream(op), span, {x.buffer}, {y.buffer});
}

void Compiler::add(const PlanOp& op, int span) {
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

void Compiler::concat(const PlanOp& op, int span) {
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

Compiler::CellWeights Compiler::cell_weights(const PlanOp& op) {
  return CellWeights{weight(op, kInputWeight), weight(op, kRecurrentWeight), weight(op, kCellBias)};
}

void Compiler::lstm_cell(const PlanOp& op, int span) {
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

void Compiler::gru_cell(const PlanOp& op, int span) {
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

}  // namespace plan_compilation

}  // namespace splitscope::gpu
