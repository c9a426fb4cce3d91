// Which strategies a comparison runs (strategy_choice.hpp).

#include "cli/strategy_choice.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "util/errors.hpp"

namespace splitscope::cli {
namespace {

/// `name`, as `replicas` copies where it is a split that does not replicate
/// the network itself (the baseline and data run as they are).
std::unique_ptr<Partitioner> replicated(const std::string& name, int replicas) {
  auto partitioner = make_partitioner(name);
  const StrategyTraits traits = partitioner->traits();
  if (replicas <= 1 || traits.baseline || traits.replicated) return partitioner;
  return make_partitioner(name, replicas);
}

}  // namespace

std::vector<std::string> chosen_strategies(const std::vector<std::string>& asked, int devices, const Graph& graph,
                                           const std::string& option, int replicas) {
  std::vector<std::string> chosen;
  if (replicas > 1 && devices % replicas != 0) {
    throw InputError("--replicas", "",
                     std::to_string(replicas) + " replicas need a multiple of " + std::to_string(replicas) +
                         " devices; got --devices " + std::to_string(devices));
  }
  if (asked.empty()) {
    for (const auto& name : strategy_names()) {
      const auto partitioner = replicated(name, replicas);
      // A training comparison runs the strategies that can train.
      if (graph.is_training() && !partitioner->traits().trains) continue;
      if (partitioner->applies(graph, devices)) chosen.push_back(name);
    }
    if (chosen.size() == 1 && devices > 1) {
      // Only `single` would run: a comparison of nothing. Say how far the splits go.
      // The largest count any split takes, read off each strategy's maximum
      // (not found by counting down from --devices, which may be 2^31 - 1).
      int most = 1;
      for (const auto& name : strategy_names()) {
        const auto partitioner = make_partitioner(name);
        if (partitioner->traits().baseline || !partitioner->applies(graph, 2)) continue;
        most = std::max(most, std::min(partitioner->max_devices(graph), devices - 1));
      }
      throw InputError("--devices", "",
                       fmt::format("no strategy can split {} over {} devices (at most {}); give fewer",
                                   graph.model().name, devices, most));
    }
    return chosen;
  }
  const std::vector<std::string> known = strategy_names();
  const std::string baseline = baseline_strategy();
  for (const auto& name : asked) {
    if (name == "ps") {
      throw InputError(option, "",
                       "ps runs its workers and shards through `splitscope run NET --train --strategy ps`; "
                       "a comparison cannot repeat it (compare data instead)");
    }
    if (name == "hybrid") {
      throw InputError(option, "",
                       "hybrid takes its degrees from `splitscope run|plan NET --strategy hybrid --degrees T,P,D`; "
                       "a comparison does not run it yet");
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string listed;
      for (const auto& strategy : known) listed += (listed.empty() ? "" : ", ") + strategy;
      throw InputError(option, "", "unknown strategy '" + name + "'; use some of " + listed);
    }
    // Each once: the speedups are against the baseline (`single`), which always runs first.
    if (name != baseline && std::find(chosen.begin(), chosen.end(), name) == chosen.end()) {
      chosen.push_back(name);
    }
  }
  chosen.insert(chosen.begin(), baseline);
  return chosen;
}

/// GPipe's rule of thumb, M >= 4N, keeps the bubble under a fifth; but
/// micro-batches of fewer than 8 rows turn matrix products memory-bound
/// (every micro-batch reads the weights again), so no smaller than that.
int default_microbatches(int64_t batch, int devices) {
  constexpr int64_t kMinRows = 8;
  const int64_t by_bubble = 4 * static_cast<int64_t>(devices);
  const int64_t by_rows = std::max<int64_t>(1, batch / kMinRows);
  return static_cast<int>(std::min(by_bubble, by_rows));
}

std::vector<std::shared_ptr<const Plan>> comparison_plans(const std::shared_ptr<const Graph>& graph,
                                                          const std::vector<std::string>& strategies, int devices,
                                                          int microbatches, const ExecutionOptions& execution,
                                                          const RunTarget& target,
                                                          const TrainingOptions& training, int replicas,
                                                          bool sequence_parallel) {
  std::vector<std::shared_ptr<const Plan>> plans;
  for (const std::string& strategy : strategies) {
    const auto partitioner = replicated(strategy, replicas);
    const StrategyTraits traits = partitioner->traits();
    PartitionOptions options =
        partition_options(execution, target, traits.baseline ? 1 : devices, traits.microbatched ? microbatches : 1);
    set_training_plan_options(training, options);
    options.sequence_parallel = sequence_parallel && traits.sequence_parallel;
    auto plan = std::make_shared<const Plan>(make_plan(*partitioner, graph, options));
    check(*plan);
    plans.push_back(std::move(plan));
  }
  return plans;
}

}  // namespace splitscope::cli
