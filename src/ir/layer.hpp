#pragma once
/// \file
/// One layer of a network file, with its fields resolved to their defaults
/// and its shapes inferred (FORMATS.md, "Network file").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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
};

enum class Activation { kNone, kRelu, kTanh, kSigmoid };

/// The name used in network files: "dense", "conv2d", "lstm", ...
std::string_view to_string(LayerKind kind);
std::optional<LayerKind> layer_kind_from_string(std::string_view name);
std::string_view to_string(Activation activation);
std::optional<Activation> activation_from_string(std::string_view name);

/// True for lstm and gru.
bool is_recurrent(LayerKind kind);

/// Height/width pair for kernel, stride and padding.
struct Extent2 {
  int64_t h = 0;
  int64_t w = 0;
  bool operator==(const Extent2&) const = default;
};

/// A layer with every field resolved. Fields that do not apply to its kind
/// keep their defaults and are ignored.
struct Layer {
  LayerKind kind = LayerKind::kDense;
  std::string name;

  // dense
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

  Shape input_shape;   ///< per sample, as inferred
  Shape output_shape;  ///< per sample, as inferred
};

}  // namespace splitscope
