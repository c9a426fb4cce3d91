#pragma once
/// \file
/// Groups of ONNX nodes that are one layer in practice (docs/onnx.md,
/// "Patterns"): PyTorch writes a transformer's layer norm (below opset 17),
/// its GELU and its attention as chains of small ops, each of which alone
/// has no splitscope layer. Found before the nodes are mapped, on the graph
/// and its known constants; each group becomes one layer at its last node.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "onnx/onnx_constants.hpp"

namespace splitscope {

struct OnnxPattern {
  enum class Kind {
    kLayerNorm,  ///< ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div (, Mul, Add)
    kGelu,       ///< Div (or Mul), Erf, Add, Mul, Mul
    kAttention,  ///< Split, Reshape/Transpose into heads, MatMul, scale, mask, Softmax, MatMul, Transpose, Reshape
  };
  Kind kind = Kind::kLayerNorm;
  std::vector<int> nodes;  ///< graph node indices, in order; the last gives `output`
  std::string input;       ///< the tensor the layer reads
  std::string output;      ///< the tensor it gives
  std::string name;        ///< the layer's name: the nodes' common module path and the kind
  /// Where the nodes have the pattern's shape but a form splitscope's layer
  /// does not compute (a mask that is not causal, a scale other than 1/√d):
  /// why; the group is then refused as a whole.
  std::string problem;
  double epsilon = 0;      ///< layer norm
  std::string gamma;       ///< layer norm's Mul constant, "" where none
  std::string beta;        ///< layer norm's Add constant, "" where none
  int64_t features = 0;    ///< layer norm: the normalized axis
  int64_t heads = 0;       ///< attention
  bool causal = false;     ///< attention
  /// Attention whose Q, K and V come from three MatMul (+ Add) of `input` rather than one Split: their weights
  /// [Wq, Wk, Wv] (each [in, width]) and biases [bq, bk, bv] ("" each where none), which become one linear of
  /// 3·width before the attention.
  std::vector<std::string> projections;

  /// What the note on stderr calls it: which ops became which layer.
  std::string description() const;
};

/// Every pattern in the graph; `constant` looks up a known tensor (initializers
/// and folded nodes), `dims` the shape ONNX inference gave a tensor (empty
/// where none); `opset` the file's (Softmax's default axis).
std::vector<OnnxPattern> find_onnx_patterns(
    const ::onnx::GraphProto& graph, const std::function<const OnnxConstant*(const std::string&)>& constant,
    const std::function<std::vector<int64_t>(const std::string&)>& dims, int64_t opset);

}  // namespace splitscope
