#pragma once
/// \file
/// Which strategies a comparison runs, and how many micro-batches a pipeline
/// gets by default: `compare` and `validate` choose alike, so that a
/// validation scores the very runs a comparison makes.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/execution_options.hpp"
#include "cli/training_options.hpp"
#include "ir/graph.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan.hpp"

namespace splitscope::cli {

/// The strategies to run on `devices`: `asked` (checked, each once), or every
/// one that applies to `graph` when `asked` is empty; the baseline (`single`)
/// always, first, since every speedup is against it. InputError (naming
/// `option`) for an unknown strategy, or when no split applies at all.
/// With `replicas` R > 1 (`compare --replicas`), the strategies that do not
/// replicate the network run as R copies over devices / R each, and apply
/// where they apply to devices / R.
std::vector<std::string> chosen_strategies(const std::vector<std::string>& asked, int devices, const Graph& graph,
                                           const std::string& option = "--strategies", int replicas = 1);

/// GPipe's rule of thumb, M >= 4N, but no micro-batch under 8 rows, for a
/// pipeline of `batch` rows over `devices` stages.
int default_microbatches(int64_t batch, int devices);

/// The checked plans of `strategies` (chosen_strategies()' order): the
/// baseline on one device, the splits on `devices`, micro-batched ones in
/// `microbatches`, priced for `target` (partition_options()); with
/// `replicas` > 1 the splits that do not replicate run as that many copies
/// (partitioners/replicas.hpp), micro-batched ones with `microbatches` each;
/// `training` says what training plans add (set_training_plan_options());
/// `sequence_parallel` goes to the strategies that take it (StrategyTraits).
std::vector<std::shared_ptr<const Plan>> comparison_plans(const std::shared_ptr<const Graph>& graph,
                                                          const std::vector<std::string>& strategies, int devices,
                                                          int microbatches, const ExecutionOptions& execution,
                                                          const RunTarget& target,
                                                          const TrainingOptions& training = {}, int replicas = 1,
                                                          bool sequence_parallel = false);

}  // namespace splitscope::cli
