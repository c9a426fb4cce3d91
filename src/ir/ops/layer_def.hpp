#pragma once
/// \file
/// The layer type of network files that lowers to an op kind (OpDef::layer):
/// its name and fields in the file, how it reads them, checks its inputs'
/// shapes and infers its output's, and what the whole layer counts
/// (parameters and FLOPs, docs/network-format.md "Counting"). The parser,
/// `inspect`, the model limits and lowering ask it, so that a layer type is
/// written in its op kind's file and nowhere else.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace splitscope {

class NetworkFields;
struct Layer;

struct LayerDef {
  /// Its "type" in network files: "dense", "lstm".
  std::string_view name;
  /// The fields it reads, beside those of every layer (type, name, comment, inputs).
  std::vector<std::string> fields;
  /// Reads two or more inputs (add, concat); every other type reads exactly one.
  bool joins = false;
  /// Reads its fields into `layer` (whose kind, inputs and input shapes are
  /// set), checks its inputs' shapes and sets layer.output_shape; a problem
  /// is `fields.fail(...)`, naming the field and what to do.
  void (*read)(const NetworkFields& fields, Layer& layer) = nullptr;
  /// Parameters of the whole layer (all stacked cells of a recurrent one); null: none.
  int64_t (*params)(const Layer& layer) = nullptr;
  /// FLOPs of the whole layer for `batch` samples; null: none counted (the
  /// element-wise kinds are priced by their bytes).
  int64_t (*flops)(const Layer& layer, int64_t batch) = nullptr;
};

}  // namespace splitscope
