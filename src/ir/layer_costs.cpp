#include "ir/layer_costs.hpp"

#include <stdexcept>

#include "ir/ops/layer_def.hpp"
#include "util/check.hpp"

namespace splitscope {

int64_t count_product(std::initializer_list<int64_t> factors) {
  int64_t result = 1;
  for (int64_t factor : factors) {
    if (__builtin_mul_overflow(result, factor, &result)) throw std::overflow_error("a count exceeds 64 bits");
  }
  return result;
}

int64_t count_sum(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_add_overflow(a, b, &result)) throw std::overflow_error("a count exceeds 64 bits");
  return result;
}

int64_t dense_flops(int64_t in, int64_t out, int64_t batch) { return count_product({2, in, out, batch}); }

int64_t conv2d_flops(int64_t filters, int64_t out_h, int64_t out_w, int64_t in_per_group,
                     int64_t kernel_h, int64_t kernel_w, int64_t batch) {
  return count_product({2, filters, out_h, out_w, in_per_group, kernel_h, kernel_w, batch});
}

int64_t gate_count(OpKind cell) {
  SPLITSCOPE_CHECK(is_recurrent(cell), "gate_count of a non-recurrent layer");
  return cell == OpKind::kLstmCell ? 4 : 3;
}

int64_t recurrent_cell_flops(OpKind cell, int64_t input, int64_t hidden, int64_t batch) {
  return count_product({2, gate_count(cell), hidden, count_sum(input, hidden), batch});
}

int64_t layer_params(const Layer& layer) {
  const LayerDef& def = layer_def(layer.kind);
  return def.params != nullptr ? def.params(layer) : 0;
}

int64_t layer_flops(const Layer& layer, int64_t batch) {
  const LayerDef& def = layer_def(layer.kind);
  return def.flops != nullptr ? def.flops(layer, batch) : 0;
}

}  // namespace splitscope
