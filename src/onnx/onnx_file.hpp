#pragma once
/// \file
/// Reads an ONNX file into a ModelProto and checks what the importer relies
/// on before it looks at a node: that it is ONNX at all, that its default
/// opset is one the mapping was written for (11 to 17, what PyTorch 1.13
/// exports), and that weights kept in external files are there.

#include <onnx/onnx_pb.h>

#include <string>

namespace splitscope {

inline constexpr int64_t kOldestOnnxOpset = 11;
inline constexpr int64_t kNewestOnnxOpset = 17;

/// The file's model; InputError (exit 2) naming the file and what to do when
/// it is unreadable, not ONNX, truncated, of another opset, or missing its
/// external weights.
::onnx::ModelProto read_onnx_file(const std::string& path);

/// The version of the default (ai.onnx) operator set the model imports.
int64_t onnx_default_opset(const ::onnx::ModelProto& model);

}  // namespace splitscope
