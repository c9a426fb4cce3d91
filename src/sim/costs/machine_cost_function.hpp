#pragma once
/// \file
/// The simulator's op cost model behind the partitioners' CostFunction, so
/// that a split balances the times predicted (or measured, through the
/// calibration table) for the machine it will run on.

#include "partitioners/cost_function.hpp"
#include "sim/machine/machine.hpp"
#include "sim/costs/op_cost_model.hpp"

namespace splitscope {

class MachineCostFunction : public CostFunction {
 public:
  explicit MachineCostFunction(const Machine& machine, Precision precision = Precision::kFp32)
      : model_(machine, precision) {}
  double seconds(const Graph& graph, NodeId node, const Slice& slice) const override {
    return model_.slice_seconds(graph, node, slice);
  }

 private:
  OpCostModel model_;
};

}  // namespace splitscope
