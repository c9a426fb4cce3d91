#pragma once
/// \file
/// The linear partition problem: cut a sequence of costs into k contiguous,
/// non-empty parts so that the largest part is as small as possible. This is
/// how a layer split balances its stages (the best split, not a greedy one).

#include <cstddef>
#include <vector>

namespace splitscope {

/// First index of each of `parts` parts of `costs`, minimising the largest
/// part's sum (bisection on the bottleneck with a greedy test,
/// O(64 · parts · log n)). Costs must be finite and >= 0. Among equally good splits, the one with the
/// earliest cuts. Requires 1 <= parts <= costs.size().
std::vector<size_t> balanced_contiguous_split(const std::vector<double>& costs, size_t parts);

/// The largest part's sum for a split given by its first indices.
double bottleneck(const std::vector<double>& costs, const std::vector<size_t>& starts);

}  // namespace splitscope
