// The op table: every kind's definition, in OpKind order.
#include <array>

#include "ir/ops/op_def.hpp"
#include "util/check.hpp"

namespace splitscope {

const OpDef& input_def();
const OpDef& dense_def();
const OpDef& conv2d_def();
const OpDef& maxpool_def();
const OpDef& avgpool_def();
const OpDef& flatten_def();
const OpDef& softmax_def();
const OpDef& relu_def();
const OpDef& tanh_def();
const OpDef& sigmoid_def();
const OpDef& lstm_cell_def();
const OpDef& gru_cell_def();
const OpDef& stack_def();
const OpDef& step_slice_def();
const OpDef& add_def();
const OpDef& concat_def();
const OpDef& loss_def();
const OpDef& activation_grad_def();
const OpDef& dense_grad_input_def();
const OpDef& dense_grad_weight_def();
const OpDef& conv2d_grad_input_def();
const OpDef& conv2d_grad_weight_def();
const OpDef& maxpool_grad_def();
const OpDef& avgpool_grad_def();
const OpDef& unflatten_def();
const OpDef& channel_slice_def();
const OpDef& lstm_cell_grad_def();
const OpDef& gru_cell_grad_def();
const OpDef& cell_grad_input_def();
const OpDef& cell_grad_hidden_def();
const OpDef& cell_grad_weight_def();
const OpDef& batch_norm_def();
const OpDef& layer_norm_def();
const OpDef& dropout_def();
const OpDef& batch_norm_grad_input_def();
const OpDef& batch_norm_grad_weight_def();
const OpDef& layer_norm_grad_input_def();
const OpDef& layer_norm_grad_weight_def();
const OpDef& gelu_def();
const OpDef& gelu_grad_def();
const OpDef& embedding_def();
const OpDef& embedding_grad_weight_def();
const OpDef& attention_def();
const OpDef& attention_grad_def();
const OpDef& linear_def();
const OpDef& linear_grad_input_def();
const OpDef& linear_grad_weight_def();

namespace {

using Table = std::array<const OpDef*, kOpKindCount>;

Table make_table() {
  const Table table{&input_def(),   &dense_def(),   &conv2d_def(),    &maxpool_def(), &avgpool_def(),
                    &flatten_def(), &softmax_def(), &relu_def(),      &tanh_def(),    &sigmoid_def(),
                    &lstm_cell_def(), &gru_cell_def(), &stack_def(), &step_slice_def(), &add_def(),
                    &concat_def(),  &loss_def(),    &activation_grad_def(), &dense_grad_input_def(),
                    &dense_grad_weight_def(), &conv2d_grad_input_def(), &conv2d_grad_weight_def(),
                    &maxpool_grad_def(), &avgpool_grad_def(), &unflatten_def(), &channel_slice_def(), &lstm_cell_grad_def(),
                    &gru_cell_grad_def(), &cell_grad_input_def(), &cell_grad_hidden_def(), &cell_grad_weight_def(),
                    &batch_norm_def(), &layer_norm_def(), &dropout_def(), &batch_norm_grad_input_def(),
                    &batch_norm_grad_weight_def(), &layer_norm_grad_input_def(), &layer_norm_grad_weight_def(),
                    &gelu_def(), &gelu_grad_def(), &embedding_def(), &embedding_grad_weight_def(),
                    &attention_def(), &attention_grad_def(), &linear_def(), &linear_grad_input_def(),
                    &linear_grad_weight_def()};
  for (size_t i = 0; i < table.size(); ++i) {
    SPLITSCOPE_CHECK(static_cast<size_t>(table[i]->kind) == i, "the op table is out of OpKind order");
  }
  return table;
}

const Table& table() {
  static const Table instance = make_table();
  return instance;
}

}  // namespace

const OpDef& op_def(OpKind kind) {
  const size_t index = static_cast<size_t>(kind);
  SPLITSCOPE_CHECK(index < kOpKindCount, "an op kind outside the op table");
  return *table()[index];
}

std::span<const OpDef* const> op_defs() { return table(); }

}  // namespace splitscope
