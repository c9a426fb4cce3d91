#include "ir/layer_costs.hpp"

#include <initializer_list>
#include <stdexcept>

#include "util/check.hpp"

namespace splitscope {
namespace {

// Counts of a huge layer must fail loudly rather than wrap around (model_limits reports them).
int64_t product(std::initializer_list<int64_t> factors) {
  int64_t result = 1;
  for (int64_t factor : factors) {
    if (__builtin_mul_overflow(result, factor, &result)) throw std::overflow_error("a count exceeds 64 bits");
  }
  return result;
}

int64_t sum(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_add_overflow(a, b, &result)) throw std::overflow_error("a count exceeds 64 bits");
  return result;
}

}  // namespace

int64_t dense_flops(int64_t in, int64_t out, int64_t batch) { return product({2, in, out, batch}); }

int64_t conv2d_flops(int64_t filters, int64_t out_h, int64_t out_w, int64_t in_per_group,
                     int64_t kernel_h, int64_t kernel_w, int64_t batch) {
  return product({2, filters, out_h, out_w, in_per_group, kernel_h, kernel_w, batch});
}

int64_t gate_count(LayerKind kind) {
  SPLITSCOPE_CHECK(is_recurrent(kind), "gate_count of a non-recurrent layer");
  return kind == LayerKind::kLstm ? 4 : 3;
}

int64_t recurrent_cell_flops(LayerKind kind, int64_t input, int64_t hidden, int64_t batch) {
  return product({2, gate_count(kind), hidden, sum(input, hidden), batch});
}

int64_t layer_params(const Layer& layer) {
  switch (layer.kind) {
    case LayerKind::kDense: {
      const int64_t in = layer.input_shape.at(0);
      return sum(product({in, layer.units}), layer.bias ? layer.units : 0);
    }
    case LayerKind::kConv2d: {
      const int64_t in_per_group = layer.input_shape.at(0) / layer.groups;
      return sum(product({layer.filters, in_per_group, layer.kernel.h, layer.kernel.w}),
                 layer.bias ? layer.filters : 0);
    }
    case LayerKind::kLstm:
    case LayerKind::kGru: {
      // In closed form: the first layer reads the input, the other stacked-1 the
      // hidden state below. A loop over `stacked` would run 2^40 times on a bad file.
      const int64_t gates = gate_count(layer.kind);
      const int64_t hidden = layer.hidden;
      const int64_t bias = layer.bias ? product({gates, hidden}) : 0;
      const auto cell = [&](int64_t input) { return sum(product({gates, hidden, sum(input, hidden)}), bias); };
      return sum(cell(layer.input_shape.at(1)), product({layer.stacked - 1, cell(hidden)}));
    }
    case LayerKind::kBatchNorm: return product({2, layer.input_shape.at(0)});  // gamma, beta per channel
    case LayerKind::kLayerNorm: return product({2, layer.input_shape.back()});  // gamma, beta per feature
    case LayerKind::kLinear: {
      const int64_t in = layer.input_shape.at(1);
      return sum(product({in, layer.units}), layer.bias ? layer.units : 0);
    }
    case LayerKind::kEmbedding:  // the token table, and the position table if it has one
      return product({sum(layer.vocab, layer.positions ? layer.input_shape.at(0) : 0), layer.features});
    default:
      return 0;
  }
}

int64_t layer_flops(const Layer& layer, int64_t batch) {
  switch (layer.kind) {
    case LayerKind::kDense:
      return dense_flops(layer.input_shape.at(0), layer.units, batch);
    case LayerKind::kConv2d:
      return conv2d_flops(layer.filters, layer.output_shape.at(1), layer.output_shape.at(2),
                          layer.input_shape.at(0) / layer.groups, layer.kernel.h, layer.kernel.w,
                          batch);
    case LayerKind::kLstm:
    case LayerKind::kGru: {
      // Closed form, as for the parameters: first layer, then stacked-1 alike.
      const int64_t steps = layer.input_shape.at(0);
      const int64_t input = layer.input_shape.at(1);
      const int64_t first = product({steps, recurrent_cell_flops(layer.kind, input, layer.hidden, batch)});
      const int64_t other = product({steps, recurrent_cell_flops(layer.kind, layer.hidden, layer.hidden, batch)});
      return sum(first, product({layer.stacked - 1, other}));
    }
    case LayerKind::kLinear:  // a dense layer's product at each position
      return product({layer.input_shape.at(0), dense_flops(layer.input_shape.at(1), layer.units, batch)});
    case LayerKind::kAttention:
      // Scores Q·Kᵀ and context P·V: 2·T·T·d FLOPs each, per head (4·T²·H a sample).
      return product({4, layer.output_shape.at(0), layer.output_shape.at(0), layer.output_shape.at(1), batch});
    default:
      return 0;
  }
}

}  // namespace splitscope
