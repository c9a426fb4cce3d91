#pragma once
/// \file
/// Model -> Graph: one op per layer, except that a recurrent layer unrolls into
/// one cell per (stacked layer, time step).

#include "ir/graph.hpp"
#include "ir/model.hpp"

namespace splitscope {

/// Lowers a validated Model. Every node gets its shapes, FLOPs, bytes and
/// weight set; the graph's output is the last layer's output.
Graph lower(const Model& model);

}  // namespace splitscope
