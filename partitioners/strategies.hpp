#pragma once
/// \file
/// The strategies, one file each, and the checks they share.

#include <memory>

#include "partitioners/partitioner.hpp"

namespace splitscope {

std::unique_ptr<Partitioner> make_single_partitioner();
std::unique_ptr<Partitioner> make_horizontal_partitioner();
std::unique_ptr<Partitioner> make_pipeline_partitioner();
std::unique_ptr<Partitioner> make_vertical_partitioner();
std::unique_ptr<Partitioner> make_tensor_partitioner();
std::unique_ptr<Partitioner> make_data_partitioner();
std::unique_ptr<Partitioner> make_ps_partitioner();
std::unique_ptr<Partitioner> make_branches_partitioner();
/// hybrid.hpp
std::unique_ptr<Partitioner> make_hybrid_partitioner();

/// The options' cost function, or the default roofline.
const CostFunction& cost_function(const PartitionOptions& options);

/// InputError unless 1 <= devices <= `most` (the message names the maximum and why).
void require_devices(const PartitionOptions& options, int most, const std::string& strategy,
                     const std::string& why);
/// InputError if micro-batches are asked of a strategy that does not use them.
void require_one_microbatch(const PartitionOptions& options, const std::string& strategy);

}  // namespace splitscope
