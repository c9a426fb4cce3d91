#pragma once
/// \file
/// What the calibrators time by default: the op slices of zoo networks, as
/// their splits on 2 and 4 devices and pipeline micro-batches make them.

#include <cstdint>
#include <string>
#include <vector>

#include "partitioners/op_samples.hpp"

namespace splitscope::cli {

/// The zoo's small networks (names ending in `-small`, the test miniatures):
/// quick anywhere. gpt2-small is GPT-2's own size name, not a miniature
/// (2.3 TFLOP a batch): a network above kMiniatureFlops is left out.
inline constexpr int64_t kMiniatureFlops = 10'000'000'000;
std::vector<std::string> small_zoo_networks();

/// The distinct op samples (by signature) of `names` (zoo names or files):
/// every op whole, split 2 and 4 ways, and in 2, 4 and 8 micro-batches.
std::vector<OpSample> zoo_samples(const std::vector<std::string>& names);

}  // namespace splitscope::cli
