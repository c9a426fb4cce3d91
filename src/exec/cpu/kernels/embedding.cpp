#include "exec/cpu/kernels/embedding.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "util/check.hpp"

namespace splitscope {

int64_t embedding_row(float id, int64_t vocab) {
  const auto row = static_cast<int64_t>(std::lround(id));
  // Network inputs that feed an embedding are drawn in [0, vocab) (params.hpp): any other value is a bug.
  SPLITSCOPE_CHECK(row >= 0 && row < vocab && static_cast<float>(row) == id,
                   fmt::format("token id {} is not a whole number in [0, {})", id, vocab));
  return row;
}

void embedding(const EmbeddingArgs& a) {
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t t = 0; t < a.positions; ++t) {
      const float* row = a.table + embedding_row(a.ids[r * a.ids_stride + t], a.vocab) * a.features;
      float* y = a.out + r * a.out_stride + t * a.features;
      std::copy_n(row, a.features, y);
      if (a.positional != nullptr) {
        const float* p = a.positional + t * a.features;
        for (int64_t f = 0; f < a.features; ++f) y[f] += p[f];
      }
    }
  }
}

void embedding_grad_weight(const EmbeddingGradArgs& a) {
  const int64_t table = a.vocab * a.features;
  const int64_t total = table + (a.positional ? a.positions * a.features : 0);
  if (a.previous != nullptr) {
    std::copy_n(a.previous, total, a.gradient);
  } else {
    std::fill_n(a.gradient, total, 0.0f);
  }
  // Samples in order, then positions: a fixed order of the sums, whatever the slice.
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t t = 0; t < a.positions; ++t) {
      const float* dy = a.dy + r * a.dy_stride + t * a.features;
      float* dw = a.gradient + embedding_row(a.ids[r * a.ids_stride + t], a.vocab) * a.features;
      for (int64_t f = 0; f < a.features; ++f) dw[f] += dy[f];
      if (a.positional) {
        float* dp = a.gradient + table + t * a.features;
        for (int64_t f = 0; f < a.features; ++f) dp[f] += dy[f];
      }
    }
  }
}

}  // namespace splitscope
