#include "search/candidate_space.hpp"

#include <algorithm>
#include <set>

#include "partitioners/stage_units.hpp"
#include "search/stage_costs.hpp"
#include "search/stage_cut_search.hpp"
#include "sim/costs/machine_cost_function.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

/// The stage-cut programme is O(stages · units²); past this many units only the partitioners' balance is tried.
constexpr size_t kMostUnitsForCutSearch = 2000;

PlanSpec base_spec(const SearchProblem& problem, const std::string& strategy, int devices, int replicas) {
  PlanSpec spec;
  spec.strategy = strategy;
  spec.devices = devices;
  spec.replicas = replicas;
  spec.bucket_bytes = problem.bucket_bytes;
  return spec;
}

/// The bytes a second one stage sends the next: the machine's device link.
double stage_link_bytes_per_second(const Machine& machine) {
  const TopologySpec& topology = machine.topology;
  const LinkSpec& link = topology.kind == TopologyKind::kHostStaged ? topology.bus : topology.link;
  return std::max(1.0, link.bytes_per_second());
}

}  // namespace

std::vector<Candidate> named_candidates(const SearchProblem& problem) {
  std::vector<Candidate> named;
  const Graph& graph = *problem.graph;
  for (const std::string& name : strategy_names()) {
    if (name == "ps") continue;
    const auto partitioner = make_partitioner(name);
    const StrategyTraits traits = partitioner->traits();
    if (graph.is_training() && !traits.trains) continue;
    if (!traits.baseline && !partitioner->applies(graph, problem.devices)) continue;
    PlanSpec spec = base_spec(problem, name, traits.baseline ? 1 : problem.devices, 1);
    if (traits.microbatched) spec.microbatches = problem.named_microbatches;
    named.push_back({spec, true});
  }
  return named;
}

std::vector<LeftOutStrategy> named_left_out(const SearchProblem& problem) {
  std::vector<LeftOutStrategy> left_out;
  const Graph& graph = *problem.graph;
  for (const std::string& name : strategy_names()) {
    if (name == "ps") continue;
    const auto partitioner = make_partitioner(name);
    const StrategyTraits traits = partitioner->traits();
    if (traits.baseline) continue;
    if (graph.is_training() && !traits.trains) {
      left_out.push_back({name, "does not train"});
      continue;
    }
    if (partitioner->applies(graph, problem.devices)) continue;
    // Batch-split inference is searched all the same (replicated_candidates).
    if (name == "data" && !graph.is_training() && problem.devices > 1 && problem.devices <= graph.batch()) continue;
    // The plan it would make says why (a refusal naming its limit, or a note
    // that it is another strategy under its name here).
    std::string reason = "it would be another strategy under its name here";
    try {
      PlanSpec spec = base_spec(problem, name, problem.devices, 1);
      if (traits.microbatched) spec.microbatches = problem.named_microbatches;
      const Plan plan = build_plan(spec, problem.graph, std::make_shared<MachineCostFunction>(problem.machine));
      if (!plan.notes.empty()) reason = plan.notes.front();
    } catch (const InputError& error) {
      reason = error.problem();
    }
    left_out.push_back({name, reason});
  }
  return left_out;
}

std::vector<int> replica_counts(const SearchProblem& problem) {
  std::vector<int> counts;
  for (int r = 2; r < problem.devices; ++r) {
    if (problem.devices % r == 0 && problem.graph->batch() >= r) counts.push_back(r);
  }
  return counts;
}

std::vector<Candidate> replicated_candidates(const SearchProblem& problem) {
  std::vector<Candidate> candidates;
  const Graph& graph = *problem.graph;
  // Batch-split inference: `compare` leaves data out of forward comparisons
  // (it is training's other baseline), but it is a plan like any other.
  if (!graph.is_training() && problem.devices > 1 && problem.devices <= graph.batch()) {
    candidates.push_back({base_spec(problem, "data", problem.devices, 1), false});
  }
  for (int replicas : replica_counts(problem)) {
    const int each = problem.devices / replicas;
    for (const std::string& name : strategy_names()) {
      const auto partitioner = make_partitioner(name);
      const StrategyTraits traits = partitioner->traits();
      if (traits.baseline || traits.replicated || traits.microbatched || traits.parameter_server) continue;
      if (graph.is_training() && !traits.trains) continue;
      if (!partitioner->applies(graph, each)) continue;
      candidates.push_back({base_spec(problem, name, problem.devices, replicas), false});
    }
  }
  return candidates;
}

std::vector<int> microbatch_counts(int stages, int64_t rows) {
  std::set<int64_t> counts;
  for (int64_t factor : {1, 2, 4, 8}) counts.insert(factor * stages);
  counts.insert(rows / 8);
  counts.insert(rows);
  std::vector<int> kept;
  for (int64_t count : counts) {
    if (count >= 2 && count <= rows) kept.push_back(static_cast<int>(count));
  }
  return kept;
}

std::vector<int> pipeline_microbatches(const SearchProblem& problem, int replicas) {
  const int stages = problem.devices / replicas;
  const int64_t rows = (problem.graph->batch() + replicas - 1) / replicas;
  std::vector<int> counts = microbatch_counts(stages, rows);
  if (replicas == 1 && std::find(counts.begin(), counts.end(), problem.named_microbatches) == counts.end()) {
    counts.insert(std::upper_bound(counts.begin(), counts.end(), problem.named_microbatches),
                  problem.named_microbatches);
  }
  return counts;
}

std::vector<PipelineEstimate> pipeline_estimates(const SearchProblem& problem) {
  const Graph& graph = *problem.graph;
  const size_t units = stage_units(graph).size();
  const auto pipeline = make_partitioner("pipeline");
  if (graph.is_training() && !pipeline->traits().trains) return {};
  const MachineCostFunction cost(problem.machine);
  const double link = stage_link_bytes_per_second(problem.machine);
  std::vector<int> counts = replica_counts(problem);
  counts.insert(counts.begin(), 1);
  std::vector<PipelineEstimate> estimates;
  for (int replicas : counts) {
    const int stages = problem.devices / replicas;
    if (stages < 2 || static_cast<size_t>(stages) > units) continue;
    // The first replica has the most rows (split_evenly), and so the most work.
    const int64_t rows = (graph.batch() + replicas - 1) / replicas;
    const std::vector<int> balanced = balanced_stage_starts(graph, stages, cost, "pipeline");
    for (int microbatches : pipeline_microbatches(problem, replicas)) {
      const StageCosts costs = stage_costs(graph, cost, (rows + microbatches - 1) / microbatches);
      std::vector<std::vector<int>> cuts = {balanced};
      if (units <= kMostUnitsForCutSearch) {
        const std::vector<int> searched = best_stage_cuts(costs, stages, link);
        if (searched != balanced) cuts.push_back(searched);
      }
      for (const auto& starts : cuts) {
        double total = 0;
        for (size_t s = 0; s < starts.size(); ++s) {
          const size_t end = s + 1 < starts.size() ? static_cast<size_t>(starts[s + 1]) : units;
          total += stage_seconds(costs, static_cast<size_t>(starts[s]), end, link);
        }
        const double slowest = slowest_stage_seconds(costs, starts, link);
        PlanSpec spec = base_spec(problem, "pipeline", problem.devices, replicas);
        spec.microbatches = microbatches;
        spec.stage_starts = starts;
        estimates.push_back({spec, total + (microbatches - 1) * slowest});
      }
    }
  }
  std::stable_sort(estimates.begin(), estimates.end(),
                   [](const PipelineEstimate& a, const PipelineEstimate& b) { return a.estimate_s < b.estimate_s; });
  return estimates;
}

}  // namespace splitscope
