#pragma once
/// \file
/// `hybrid` (`--degrees T,P,D`): Megatron's three-way parallelism. The
/// network's layers are cut into P pipeline stages as `pipeline` cuts them,
/// the batch into micro-batches that flow through them (GPipe or 1F1B);
/// each stage's ops are split over its T devices as `tensor` splits them
/// (dense pairs column-then-row with one all-reduce a pair, the rest as
/// `vertical`); and the whole runs as D data-parallel replicas
/// (replicas.hpp), every weight slice's gradient all-reduced across them.
///
/// Devices are numbered tensor innermost, then pipeline, then data:
/// device t + T·(s + P·r) is the t-th device of stage s of replica r. The T
/// devices of a tensor group are neighbours, so on a machine of nodes of at
/// least T GPUs its all-reduces (the heaviest, several per layer) stay inside
/// an NVLink domain; stage hand-offs and the data all-reduce cross nodes.

#include <memory>
#include <string>

#include "partitioners/partitioner.hpp"

namespace splitscope {

/// The `hybrid` strategy; its degrees come from PartitionOptions::degrees.
std::unique_ptr<Partitioner> make_hybrid_partitioner();

/// "T,P,D" as degrees; InputError naming --degrees unless it is three whole
/// numbers (their checks against a network and devices are partition()'s).
ParallelDegrees parse_degrees(const std::string& text);

/// "hybrid t2 p2 d2".
std::string hybrid_plan_name(const ParallelDegrees& degrees);

}  // namespace splitscope
