#pragma once
/// \file
/// An embedding's gather (token ids to rows of its table) and its gradient's
/// scatter-add.

#include <cstdint>

namespace splitscope {

struct EmbeddingArgs {
  int64_t rows = 0;       ///< samples
  int64_t positions = 0;  ///< T: ids per sample
  int64_t features = 0;   ///< F: the width of a row of the table
  int64_t vocab = 0;
  const float* ids = nullptr;  ///< [rows, T] whole numbers in [0, vocab), as floats
  int64_t ids_stride = 0;
  const float* table = nullptr;      ///< W [vocab, F]
  const float* positional = nullptr; ///< P [T, F], or null
  float* out = nullptr;              ///< [rows, T·F]
  int64_t out_stride = 0;
};

/// y[b, t] = W[id(b, t)] (+ P[t]).
void embedding(const EmbeddingArgs& args);

struct EmbeddingGradArgs {
  int64_t rows = 0;
  int64_t positions = 0;
  int64_t features = 0;
  int64_t vocab = 0;
  bool positional = false;
  const float* ids = nullptr;
  int64_t ids_stride = 0;
  const float* dy = nullptr;  ///< [rows, T·F]
  int64_t dy_stride = 0;
  float* gradient = nullptr;        ///< dW [vocab·F], then dP [T·F] where positional
  const float* previous = nullptr;  ///< the running sum of earlier micro-batches, or null
};

/// dW[id(b, t)] += dy[b, t]; dP[t] += Σ_b dy[b, t]; over the previous sum.
void embedding_grad_weight(const EmbeddingGradArgs& args);

/// The row of the table that id value `id` names (a whole number in [0, vocab)).
int64_t embedding_row(float id, int64_t vocab);

}  // namespace splitscope
