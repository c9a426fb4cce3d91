#pragma once
/// \file
/// The graph's inputs (those that are not weights) and the batch: which axis
/// of each input holds the samples, and how many. The batch comes from the
/// inputs' own sizes or from `--batch`; every other dimension must be fixed.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace splitscope {

struct OnnxGraphInput {
  std::string name;
  std::vector<int64_t> dims;  ///< batch included
  size_t batch_axis = 0;      ///< 1 for a [steps, batch, features] input an LSTM or GRU reads directly
};

struct OnnxBatch {
  int64_t size = 0;  ///< the samples shape inference runs with
  std::vector<OnnxGraphInput> inputs;
};

/// Finds the inputs and their batch axis, writes the batch into a dynamic
/// batch dimension (so shape inference sees fixed sizes), and refuses (exit 2)
/// a dimension it cannot resolve, naming the input, the axis and `--batch`.
OnnxBatch resolve_onnx_batch(::onnx::ModelProto& model, const std::string& path, std::optional<int64_t> batch);

}  // namespace splitscope
