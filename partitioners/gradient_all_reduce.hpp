#pragma once
/// \file
/// The ring all-reduce that completes a weight slice's gradient held in
/// parts by several replicas (`data`'s devices, `--replicas` groups): one
/// collective op appended to a plan, each participant getting the sum over
/// the whole batch.

#include <vector>

#include "partitioners/plan.hpp"

namespace splitscope {

/// Appends to `plan` the all-reduce of `partials` (gradient values of one
/// weight slice, one per device, whose rows together cover the batch) and
/// returns its outputs, one per participant in `partials` order.
std::vector<int> add_gradient_all_reduce(Plan& plan, const std::vector<int>& partials);

}  // namespace splitscope
