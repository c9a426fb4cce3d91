#pragma once
/// \file
/// What `splitscope search` is asked: a network (its batch and training
/// fixed), a device count, the machine that prices the plans, how much
/// memory a device may use, what to optimise and for how long.

#include <cstdint>
#include <memory>
#include <string>

#include "ir/graph.hpp"
#include "sim/machine/machine.hpp"

namespace splitscope {

enum class SearchObjective {
  kTime,        ///< the shortest step (makespan)
  kThroughput,  ///< the most samples a second: with the batch fixed, the same order as kTime
  kMemory,      ///< the least peak memory on any device; ties by time
};

/// "time", "throughput", "memory"; InputError naming `--objective` for another.
SearchObjective objective_named(const std::string& name);
std::string_view to_string(SearchObjective objective);

struct SearchProblem {
  std::shared_ptr<const Graph> graph;
  int devices = 1;
  Machine machine;
  /// A plan whose peak on any device exceeds this is refused.
  int64_t memory_limit_bytes = 0;
  SearchObjective objective = SearchObjective::kTime;
  /// Stop pricing after this many seconds: no candidate starts after it,
  /// and one being simulated then is cut off unpriced (the named strategies
  /// are always priced to their end).
  double budget_s = 60;
  /// The micro-batches a named `pipeline` gets (compare's default, strategy_choice.hpp).
  int named_microbatches = 1;
  /// Training replicas' all-reduce bucket size (PartitionOptions::bucket_bytes).
  int64_t bucket_bytes = int64_t{25} << 20;
};

}  // namespace splitscope
