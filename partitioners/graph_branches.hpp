#pragma once
/// \file
/// Where a network forks into parts that can run at once. The layers (stage
/// units) of a graph alternate between the trunk, which every path from the
/// inputs to the output passes through, and forks: runs of layers between two
/// trunk layers, made of branches that share no edge (the towers of a
/// two-tower net, the paths of an inception block, a residual block's
/// convolutions beside its projection). The `branches` strategy places the
/// branches of each fork on different devices.
///
/// A layer is on the trunk exactly when no edge of the forward graph jumps
/// over it in a dependency order (then every path from before it to after it
/// runs through it); this does not depend on which dependency order. Network
/// inputs take part as layers placed first, so two towers reading two inputs
/// are two branches, while one input read by two layers forks.

#include <vector>

#include "partitioners/stage_units.hpp"

namespace splitscope {

struct GraphFork {
  /// Each branch's units (indices into stage_units()), in network order;
  /// branches ordered by their first unit.
  std::vector<std::vector<size_t>> branches;
};

struct GraphBranches {
  std::vector<StageUnit> units;     ///< stage_units(graph)
  std::vector<bool> on_trunk;       ///< per unit
  std::vector<int> fork_of;         ///< per unit: its fork, or -1 on the trunk
  std::vector<GraphFork> forks;     ///< in network order
  /// The most branches of any fork (1 for a chain): the most devices they can occupy at once.
  int widest() const;
};

/// The trunk, forks and branches of `graph`'s forward layers. A training
/// graph's backward ops belong to their forward layer's unit and do not
/// change the structure.
GraphBranches graph_branches(const Graph& graph);

}  // namespace splitscope
