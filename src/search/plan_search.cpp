#include "search/plan_search.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <set>

#include "partitioners/stage_units.hpp"

#include "search/candidate_space.hpp"

namespace splitscope {
namespace {

/// Pipelines simulated per replica count, best estimates first, before the local search.
constexpr int kPipelineFinalistsPerReplicas = 2;
/// The local search moves stage cuts only of pipelines of at most this many
/// stages (each step prices 2 · (stages - 1) neighbours).
constexpr int kMostStagesForLocalSearch = 8;

/// What makes two specs the same plan (the description holds every parameter).
std::string spec_key(const PlanSpec& spec) { return std::to_string(spec.devices) + " " + describe(spec); }

/// Prices candidates once each, keeping the clock.
class Pricer {
 public:
  Pricer(const SearchProblem& problem, SearchResult& result)
      : problem_(problem), result_(result), simulator_(problem.machine), start_(Clock::now()) {}

  bool out_of_time() const { return elapsed() >= problem_.budget_s; }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  /// Prices `spec` unless seen or (`always` false) the budget is spent; the priced plan, if it fits.
  const PricedPlan* price(const PlanSpec& spec, bool named, bool always = false) {
    if (!seen_.insert(spec_key(spec)).second) return find(spec);
    result_.enumerated += 1;
    if (!always && out_of_time()) {
      result_.budget_ran_out = true;
      return nullptr;
    }
    RefusedPlan refused;
    auto priced = price_plan(spec, problem_.graph, simulator_, problem_.memory_limit_bytes, refused);
    if (!priced) {
      result_.refused.push_back(refused);
      return nullptr;
    }
    // A balanced cut pinned may be one the search also tries: keep one of each plan.
    if (!priced->spec.stage_starts.empty() && !seen_.insert(spec_key(priced->spec)).second && !named) {
      return find(priced->spec);
    }
    result_.simulated += 1;
    priced->named = named;
    priced_.push_back(*priced);
    return &priced_.back();
  }

  std::vector<PricedPlan> take() { return {priced_.begin(), priced_.end()}; }

 private:
  using Clock = std::chrono::steady_clock;

  const PricedPlan* find(const PlanSpec& spec) const {
    const std::string key = spec_key(spec);
    for (const PricedPlan& plan : priced_) {
      if (spec_key(plan.spec) == key) return &plan;
    }
    return nullptr;
  }

  const SearchProblem& problem_;
  SearchResult& result_;
  Simulator simulator_;
  Clock::time_point start_;
  std::set<std::string> seen_;
  std::deque<PricedPlan> priced_;  // stable addresses for the pointers handed out
};

/// The training variants of `spec`: both schedules (pipelines) and recomputation.
std::vector<PlanSpec> training_variants(const PlanSpec& spec, bool training) {
  if (!training) return {spec};
  std::vector<PlanSpec> variants;
  const bool pipelined = spec.microbatches > 1;
  for (const PipelineSchedule schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kOneForwardOneBackward}) {
    if (!pipelined && schedule != PipelineSchedule::kGpipe) continue;
    for (const bool recompute : {false, true}) {
      PlanSpec variant = spec;
      variant.schedule = schedule;
      variant.recompute = recompute;
      variants.push_back(variant);
    }
  }
  return variants;
}

/// Moves one stage cut of `start` by one unit at a time while the simulator
/// says the plan gets faster (first improvement), from the best priced.
void improve_stage_cuts(Pricer& pricer, const PricedPlan& start, size_t units) {
  PricedPlan best = start;
  bool improved = true;
  while (improved && !pricer.out_of_time()) {
    improved = false;
    for (size_t cut = 1; cut < best.spec.stage_starts.size() && !improved; ++cut) {
      for (const int step : {-1, 1}) {
        PlanSpec moved = best.spec;
        int& start_unit = moved.stage_starts[cut];
        start_unit += step;
        const int low = moved.stage_starts[cut - 1];
        const int high = cut + 1 < moved.stage_starts.size() ? moved.stage_starts[cut + 1] : static_cast<int>(units);
        if (start_unit <= low || start_unit >= high) continue;
        const PricedPlan* priced = pricer.price(moved, false);
        if (priced != nullptr && priced->makespan_us < best.makespan_us) {
          best = *priced;
          improved = true;
          break;
        }
      }
    }
  }
}

}  // namespace

const PricedPlan* SearchResult::best_named() const {
  for (const PricedPlan& plan : ranked) {
    if (plan.named) return &plan;
  }
  return nullptr;
}

bool ranks_before(const PricedPlan& a, const PricedPlan& b, SearchObjective objective) {
  if (objective == SearchObjective::kMemory && a.peak_memory_max != b.peak_memory_max) {
    return a.peak_memory_max < b.peak_memory_max;
  }
  if (a.makespan_us != b.makespan_us) return a.makespan_us < b.makespan_us;
  if (a.peak_memory_max != b.peak_memory_max) return a.peak_memory_max < b.peak_memory_max;
  return a.named && !b.named;  // a tie goes to the named strategy: nothing to explain
}

std::vector<PricedPlan> pareto_front(const std::vector<PricedPlan>& priced) {
  std::vector<PricedPlan> sorted = priced;
  std::stable_sort(sorted.begin(), sorted.end(), [](const PricedPlan& a, const PricedPlan& b) {
    if (a.makespan_us != b.makespan_us) return a.makespan_us < b.makespan_us;
    return a.peak_memory_max < b.peak_memory_max;
  });
  // Fastest first: a plan is on the front if it needs less memory than every faster one.
  std::vector<PricedPlan> front;
  for (const PricedPlan& plan : sorted) {
    if (front.empty() || plan.peak_memory_max < front.back().peak_memory_max) front.push_back(plan);
  }
  return front;
}

SearchResult search_plans(const SearchProblem& problem) {
  SearchResult result;
  Pricer pricer(problem, result);
  const bool training = problem.graph->is_training();

  // 1. The named strategies, whatever the budget: the search answers against them.
  for (const Candidate& candidate : named_candidates(problem)) pricer.price(candidate.spec, true, true);

  // 2. Pipelines by estimate: the best few per replica count go to the simulator.
  const std::vector<PipelineEstimate> estimates = pipeline_estimates(problem);
  result.estimated = static_cast<int>(estimates.size());
  std::map<int, int> finalists;
  std::vector<const PricedPlan*> pipelines;
  for (const PipelineEstimate& estimate : estimates) {
    if (finalists[estimate.spec.replicas] >= kPipelineFinalistsPerReplicas) continue;
    finalists[estimate.spec.replicas] += 1;
    for (const PlanSpec& variant : training_variants(estimate.spec, training)) {
      if (const PricedPlan* priced = pricer.price(variant, false)) pipelines.push_back(priced);
    }
  }

  // 3. Replicated splits, and (training) their recomputing variants.
  for (const Candidate& candidate : replicated_candidates(problem)) {
    for (const PlanSpec& variant : training_variants(candidate.spec, training)) pricer.price(variant, false);
  }

  // 4. The stage cuts of the fastest pipeline, moved while the simulator says it helps.
  if (!pipelines.empty()) {
    const PricedPlan fastest = **std::min_element(pipelines.begin(), pipelines.end(),
                                                  [](const PricedPlan* a, const PricedPlan* b) {
                                                    return a->makespan_us < b->makespan_us;
                                                  });
    const int stages = fastest.spec.devices / fastest.spec.replicas;
    if (stages <= kMostStagesForLocalSearch) {
      improve_stage_cuts(pricer, fastest, stage_units(*problem.graph).size());
    }
  }

  // 5. The named strategies' recomputing variants (a smaller footprint for the front).
  if (training) {
    for (const Candidate& candidate : named_candidates(problem)) {
      PlanSpec variant = candidate.spec;
      variant.recompute = true;
      pricer.price(variant, false);
    }
  }

  result.ranked = pricer.take();
  std::stable_sort(result.ranked.begin(), result.ranked.end(), [&](const PricedPlan& a, const PricedPlan& b) {
    return ranks_before(a, b, problem.objective);
  });
  result.pareto = pareto_front(result.ranked);
  result.seconds = pricer.elapsed();
  return result;
}

}  // namespace splitscope
