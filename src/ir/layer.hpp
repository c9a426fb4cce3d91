#pragma once
/// \file
/// One layer of a network file, with its fields resolved to their defaults
/// and its shapes inferred (docs/network-format.md). A layer type is the op
/// kind it lowers to: its definition (ops/layer_def.hpp, in that kind's
/// file) says how the file names it and what it reads, infers and counts.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/op.hpp"
#include "ir/op_attrs.hpp"
#include "ir/shape.hpp"

namespace splitscope {

struct LayerDef;

/// The layer type a network file's "type" names (the op kind it lowers to), or nullopt.
std::optional<OpKind> layer_kind_from_type(std::string_view type);
/// Every layer type's name, in op-table order: "dense, conv2d, ...".
std::string layer_type_list();
/// The definition of the layer type that lowers to `kind`.
const LayerDef& layer_def(OpKind kind);
/// Its name in network files: "dense", "lstm".
std::string_view layer_type(OpKind kind);
std::string_view to_string(Activation activation);
std::optional<Activation> activation_from_string(std::string_view name);

/// True for lstm and gru (layers of recurrent cells).
bool is_recurrent(OpKind kind);

/// A layer with every field resolved. Fields that do not apply to its kind
/// keep their defaults and are ignored.
struct Layer {
  /// The op kind it lowers to (a recurrent layer: its cell's), which is its type.
  OpKind kind = OpKind::kDense;
  std::string name;
  /// What its ops carry (activation, bias, kernel, epsilon, heads, ...): the
  /// file's fields that lowering hands on unchanged.
  OpAttrs attrs;

  // Fields of the layer alone, which its ops read through their shapes.
  int64_t units = 0;    ///< dense, linear
  int64_t filters = 0;  ///< conv2d
  int64_t stacked = 1;  ///< lstm, gru: `layers` in the file, how many cells are stacked
  bool return_sequences = true;  ///< lstm, gru
  int64_t features = 0;  ///< embedding: the width of each row

  /// What it reads, in slot order: earlier layers' names or the network's
  /// input names. The file's `inputs`, or the previous layer (the network
  /// input for the first layer) when it gives none.
  std::vector<std::string> inputs;
  std::vector<Shape> input_shapes;  ///< per sample, one per input
  Shape input_shape;   ///< per sample, of the first input
  Shape output_shape;  ///< per sample, as inferred
};

}  // namespace splitscope
