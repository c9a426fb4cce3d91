#include "partitioners/cost_function.hpp"

#include <algorithm>

namespace splitscope {

RooflineCost::RooflineCost(double flops_per_second, double bytes_per_second, double seconds_per_op)
    : flops_per_second_(flops_per_second),
      bytes_per_second_(bytes_per_second),
      seconds_per_op_(seconds_per_op) {}

double RooflineCost::seconds(const Graph& graph, NodeId node, const Slice& slice) const {
  const SliceCost cost = slice_cost(graph, node, slice);
  if (cost.flops == 0 && cost.bytes_read == 0 && cost.bytes_written == 0) return 0.0;
  const double compute = static_cast<double>(cost.flops) / flops_per_second_;
  const double memory = static_cast<double>(cost.bytes_read + cost.bytes_written) / bytes_per_second_;
  return std::max(compute, memory) + seconds_per_op_;
}

}  // namespace splitscope
