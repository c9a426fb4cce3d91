#pragma once
/// \file
/// How a partitioner prices an op when it balances devices. The default is a
/// roofline on a reference device; the simulator's calibrated cost model can
/// be passed instead, so a split balances measured times.

#include "ir/graph.hpp"
#include "ir/slice.hpp"

namespace splitscope {

class CostFunction {
 public:
  virtual ~CostFunction() = default;
  /// Estimated seconds to run `slice` of `node` on one device.
  virtual double seconds(const Graph& graph, NodeId node, const Slice& slice) const = 0;
};

/// max(FLOPs / peak, bytes / bandwidth) + a fixed launch cost per op, on a
/// reference device (by default an H100-class GPU: 60 TFLOP/s fp32,
/// 3 TB/s, 5 µs per op).
class RooflineCost : public CostFunction {
 public:
  RooflineCost(double flops_per_second = 60e12, double bytes_per_second = 3e12,
               double seconds_per_op = 5e-6);
  double seconds(const Graph& graph, NodeId node, const Slice& slice) const override;

 private:
  double flops_per_second_;
  double bytes_per_second_;
  double seconds_per_op_;
};

}  // namespace splitscope
