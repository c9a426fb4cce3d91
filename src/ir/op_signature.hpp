#pragma once
/// \file
/// A stable text key for "this op slice's shape", e.g. "dense:b64:k8192:n4096".
/// Slices with equal signatures do the same work, so a time measured for one
/// (by `calibrate`) prices them all in the simulator.

#include <string>

#include "ir/graph.hpp"
#include "ir/slice.hpp"

namespace splitscope {

/// The signature of `slice` of `node`: its kind and every dimension its cost depends on.
std::string op_signature(const Graph& graph, NodeId node, const Slice& slice);

}  // namespace splitscope
