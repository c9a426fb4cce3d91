#pragma once
/// \file
/// Multi-head scaled dot-product attention over each sample's positions
/// (ir/ops/attention_rules.hpp gives the layout), forward and backward. Sums
/// in double; the probabilities are recomputed in the backward pass.

#include <cstdint>

namespace splitscope {

struct AttentionArgs {
  int64_t rows = 0;       ///< samples
  int64_t positions = 0;  ///< T
  int64_t features = 0;   ///< H
  int64_t heads = 1;
  bool causal = false;
  const float* qkv = nullptr;  ///< [rows, T·3H]
  int64_t qkv_stride = 0;
  const float* d_context = nullptr;  ///< backward: dO [rows, T·H]
  int64_t d_context_stride = 0;
  float* out = nullptr;  ///< forward: the context [rows, T·H]; backward: d(Q | K | V) [rows, T·3H]
  int64_t out_stride = 0;
};

void attention(const AttentionArgs& args);
void attention_grad(const AttentionArgs& args);

}  // namespace splitscope
