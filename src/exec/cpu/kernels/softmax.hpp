#pragma once
/// \file
/// Softmax over each row of a matrix (a network's softmax layer takes a flat
/// [features] input: one row per sample).

#include <cstdint>

#include "ir/range.hpp"

namespace splitscope {

struct SoftmaxArgs {
  int64_t rows = 0;    ///< vectors (samples)
  int64_t length = 0;  ///< elements in each vector
  const float* input = nullptr;  ///< row r at input + r·input_stride
  int64_t input_stride = 0;
  Range columns;  ///< the elements of each vector written (a slice of [0, length))
  float* output = nullptr;  ///< element columns.begin + j of row r at output[r·output_stride + j]
  int64_t output_stride = 0;
};

/// out = exp(x - max x) / Σ exp(x - max x) over each whole row; only
/// `columns` are written, so a device holding a slice of the output computes
/// just its part (reading the whole row).
void softmax(const SoftmaxArgs& args);

}  // namespace splitscope
