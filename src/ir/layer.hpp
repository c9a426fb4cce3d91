#pragma once
/// \file
/// One layer of a network file, with its fields resolved to their defaults
/// and its shapes inferred (docs/network-format.md).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/op_attrs.hpp"
#include "ir/shape.hpp"

namespace splitscope {

enum class LayerKind {
  kDense,
  kConv2d,
  kMaxPool,
  kAvgPool,
  kFlatten,
  kSoftmax,
  kRelu,
  kTanh,
  kSigmoid,
  kLstm,
  kGru,
  kAdd,     ///< element-wise sum of two or more inputs of one shape (a residual join)
  kConcat,  ///< inputs laid end to end along axis 0 (channels of images, features of vectors)
  kBatchNorm,  ///< per-channel normalization (after conv2d [C, H, W] or dense [F])
  kLayerNorm,  ///< per-sample normalization over the last axis ([F] or [T, F])
  kDropout,    ///< a random mask in training, the identity in inference
  kEmbedding,  ///< token ids [T] -> rows of a learned table: [T, features]
  kGelu,       ///< x·Φ(x) (the erf form), element-wise
  kAttention,  ///< multi-head self-attention from [T, 3·H] (Q | K | V) to [T, H]
  kLinear,     ///< a dense layer at each position of a sequence: [T, in] -> [T, units]
};

/// The name used in network files: "dense", "conv2d", "lstm", ...
std::string_view to_string(LayerKind kind);
std::optional<LayerKind> layer_kind_from_string(std::string_view name);
std::string_view to_string(Activation activation);
std::optional<Activation> activation_from_string(std::string_view name);

/// True for lstm and gru.
bool is_recurrent(LayerKind kind);

/// A layer with every field resolved. Fields that do not apply to its kind
/// keep their defaults and are ignored.
struct Layer {
  LayerKind kind = LayerKind::kDense;
  std::string name;

  // dense, linear
  int64_t units = 0;
  // conv2d
  int64_t filters = 0;
  int64_t groups = 1;
  Extent2 kernel{0, 0};
  Extent2 stride{1, 1};
  Extent2 padding{0, 0};
  // dense, conv2d
  Activation activation = Activation::kNone;
  bool bias = true;
  // lstm, gru
  int64_t hidden = 0;
  int64_t stacked = 1;  ///< `layers` in the file: how many cells are stacked
  bool return_sequences = true;
  // batch_norm, layer_norm
  double epsilon = 1e-5;
  double momentum = 0.1;  ///< batch_norm's running statistics
  // dropout
  double rate = 0.5;
  // embedding
  int64_t vocab = 0;      ///< rows of the table: token ids are in [0, vocab)
  int64_t features = 0;   ///< the width of each row
  bool positions = false; ///< adds a learned position table [T, features] (GPT-2's wpe)
  // attention
  int64_t heads = 1;
  bool causal = false;

  /// What it reads, in slot order: earlier layers' names or the network's
  /// input names. The file's `inputs`, or the previous layer (the network
  /// input for the first layer) when it gives none.
  std::vector<std::string> inputs;
  std::vector<Shape> input_shapes;  ///< per sample, one per input
  Shape input_shape;   ///< per sample, of the first input
  Shape output_shape;  ///< per sample, as inferred
};

}  // namespace splitscope
