#pragma once
/// \file
/// One rule per ONNX op type: what layer of a network file a node becomes
/// (docs/onnx.md has the table). A node no rule covers, or a form of it a
/// rule cannot map faithfully, is refused (exit 2) naming the node, its op
/// type and why; nothing is dropped without a rule saying so.

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "onnx/onnx_import_state.hpp"
#include "onnx/onnx_patterns.hpp"

namespace splitscope {

/// Maps one node whose inputs are values (layers' outputs) or constants.
void map_onnx_node(OnnxImportState& state, const ::onnx::NodeProto& node);

/// Maps a group of nodes recognised as one layer (onnx_patterns.hpp), at its last node.
void map_onnx_pattern(OnnxImportState& state, const OnnxPattern& pattern);

/// The op types map_onnx_node has a rule for.
const std::vector<std::string>& onnx_mapped_op_types();

/// The op types the importer covers (mapped or folded), sorted, for messages.
std::string onnx_covered_op_list();

}  // namespace splitscope
