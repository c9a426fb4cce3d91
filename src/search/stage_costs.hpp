#pragma once
/// \file
/// A network as the layer split sees it: per stage unit (stage_units.hpp)
/// its op time for a micro-batch of some rows, and per cut between two
/// units the bytes a row sends across it. The estimate the stage-cut search
/// balances; the simulator then prices the plans it picks.

#include <cstdint>
#include <vector>

#include "ir/graph.hpp"
#include "partitioners/cost_function.hpp"

namespace splitscope {

struct StageCosts {
  std::vector<double> unit_seconds;  ///< per unit: its ops' time for `rows` rows
  /// Per cut c (between unit c and c + 1; units - 1 of them): bytes per row
  /// that cross it (activations forward, gradients backward).
  std::vector<double> cut_bytes_per_row;
  int64_t rows = 0;
};

/// `graph`'s units priced by `cost` for micro-batches of `rows` rows.
StageCosts stage_costs(const Graph& graph, const CostFunction& cost, int64_t rows);

}  // namespace splitscope
