#pragma once
/// \file
/// What the calibrators time by default: the op slices of zoo networks, as
/// their splits on 2 and 4 devices and pipeline micro-batches make them.

#include <string>
#include <vector>

#include "partitioners/op_samples.hpp"

namespace splitscope::cli {

/// The zoo's small networks (names ending in `-small`): quick anywhere.
std::vector<std::string> small_zoo_networks();

/// The distinct op samples (by signature) of `names` (zoo names or files):
/// every op whole, split 2 and 4 ways, and in 2, 4 and 8 micro-batches.
std::vector<OpSample> zoo_samples(const std::vector<std::string>& names);

}  // namespace splitscope::cli
