#include "search/plan_search.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <set>

#include "partitioners/head_split.hpp"
#include "partitioners/stage_units.hpp"

#include "search/candidate_space.hpp"
#include "sim/engine/simulation_deadline.hpp"

namespace splitscope {
namespace {

/// Pipelines simulated per replica count, best estimates first, before the local search.
constexpr int kPipelineFinalistsPerReplicas = 2;
/// Training: the 1F1B and recomputing variants are priced of the named plans and of this many of the fastest others.
constexpr size_t kPlansWithMemoryVariants = 8;
/// The local search moves stage cuts only of pipelines of at most this many stages.
constexpr int kMostStagesForLocalSearch = 8;
/// ... of this many of the fastest pipelines (distinct cuts) ...
constexpr size_t kPipelinesForLocalSearch = 2;
/// ... trying every place for a cut on networks of at most this many units (else one or two units either way).
constexpr size_t kMostUnitsForWholeMoves = 32;

/// What makes two specs the same plan (the description holds every parameter).
std::string spec_key(const PlanSpec& spec) { return std::to_string(spec.devices) + " " + describe(spec); }

/// Prices candidates once each, keeping the clock.
class Pricer {
  using Clock = SimulationDeadline::Clock;

 public:
  Pricer(const SearchProblem& problem, SearchResult& result)
      : problem_(problem),
        result_(result),
        simulator_(problem.machine),
        start_(Clock::now()),
        deadline_(start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(problem.budget_s))) {}

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
    bool cut_off = false;
    // The named strategies run to their end whatever the clock; any other is cut off at the budget.
    auto priced = price_plan_until(spec, problem_.graph, simulator_, problem_.memory_limit_bytes,
                                   always ? SimulationDeadline() : deadline_, refused, cut_off);
    if (cut_off) {
      result_.cut_off += 1;
      result_.budget_ran_out = true;
      return nullptr;
    }
    if (!priced) {
      result_.refused.push_back(refused);
      return nullptr;
    }
    // A balanced cut pinned may be one the search also tries: keep one of each plan.
    const std::string pinned = spec_key(priced->spec);
    if (pinned != spec_key(spec) && !seen_.insert(pinned).second && !named) return find(priced->spec);
    result_.simulated += 1;
    priced->named = named;
    priced_.push_back(*priced);
    return &priced_.back();
  }

  std::vector<PricedPlan> take() { return {priced_.begin(), priced_.end()}; }
  std::vector<PricedPlan> snapshot() const { return {priced_.begin(), priced_.end()}; }
  size_t refused_count() const { return result_.refused.size(); }

 private:
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
  SimulationDeadline deadline_;  ///< start_ + the budget
  std::set<std::string> seen_;
  std::deque<PricedPlan> priced_;  // stable addresses for the pointers handed out
};

/// The variants of `spec` that trade time for memory in training: 1F1B
/// (pipelines; as fast as GPipe ideally, stashing fewer micro-batches) and
/// recomputation (one more forward, no stashed activations).
std::vector<PlanSpec> memory_variants(const PlanSpec& spec) {
  std::vector<PlanSpec> variants;
  for (const PipelineSchedule schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kOneForwardOneBackward}) {
    if (spec.microbatches <= 1 && schedule != PipelineSchedule::kGpipe) continue;
    for (const bool recompute : {false, true}) {
      if (schedule == spec.schedule && recompute == spec.recompute) continue;
      PlanSpec variant = spec;
      variant.schedule = schedule;
      variant.recompute = recompute;
      variants.push_back(variant);
    }
  }
  return variants;
}

/// The tensor splits among `candidates` (the named and replicated ones) with
/// `--sequence-parallel` (Megatron-LM's: the layer norms and residual adds
/// between a block's pairs on a share of the sequence, reduce-scatter and
/// all-gather in place of each all-reduce), where the network has attention
/// blocks; a tensor degree that does not divide the sequence is refused as
/// the partitioner refuses it.
std::vector<PlanSpec> sequence_parallel_variants(const SearchProblem& problem,
                                                const std::vector<Candidate>& candidates) {
  std::vector<PlanSpec> variants;
  if (!has_attention_blocks(*problem.graph)) return variants;
  for (const Candidate& candidate : candidates) {
    if (candidate.spec.strategy != "tensor" || candidate.spec.devices / candidate.spec.replicas < 2) continue;
    PlanSpec variant = candidate.spec;
    variant.sequence_parallel = true;
    variants.push_back(variant);
  }
  return variants;
}

/// Prices `spec`; in training, if it does not fit, its memory variants in turn until one does.
const PricedPlan* price_fitting(Pricer& pricer, const PlanSpec& spec, bool training) {
  const size_t refused = pricer.refused_count();
  if (const PricedPlan* priced = pricer.price(spec, false)) return priced;
  if (!training || pricer.refused_count() == refused) return nullptr;  // seen already, or out of time
  for (const PlanSpec& variant : memory_variants(spec)) {
    if (const PricedPlan* priced = pricer.price(variant, false)) return priced;
  }
  return nullptr;
}

/// Coordinate descent on the stage cuts of `start`: each cut in turn tried
/// at every unit between its neighbours (or, past kMostUnitsForWholeMoves
/// units, one and two units either way), kept where the simulator says the
/// plan is fastest; when no single cut moves, two neighbouring cuts shifted
/// together by one or two units (a stage that slides as a whole); rounds
/// until nothing moves. A local optimum: a better cut that needs two cuts
/// apart, or three, moved at once can be missed.
void improve_stage_cuts(Pricer& pricer, const PricedPlan& start, size_t units) {
  PricedPlan best = start;
  const auto try_spec = [&pricer, &best](const PlanSpec& moved) {
    const PricedPlan* priced = pricer.price(moved, false);
    if (priced == nullptr || priced->makespan_us >= best.makespan_us) return false;
    best = *priced;
    return true;
  };
  bool improved = true;
  while (improved && !pricer.out_of_time()) {
    improved = false;
    for (size_t cut = 1; cut < best.spec.stage_starts.size(); ++cut) {
      const int low = best.spec.stage_starts[cut - 1] + 1;
      const int high = cut + 1 < best.spec.stage_starts.size() ? best.spec.stage_starts[cut + 1] - 1
                                                               : static_cast<int>(units) - 1;
      const int at = best.spec.stage_starts[cut];
      std::vector<int> places;
      if (units <= kMostUnitsForWholeMoves) {
        for (int place = low; place <= high; ++place) places.push_back(place);
      } else {
        for (const int step : {-2, -1, 1, 2}) {
          if (at + step >= low && at + step <= high) places.push_back(at + step);
        }
      }
      for (const int place : places) {
        if (place == at) continue;
        PlanSpec moved = best.spec;
        moved.stage_starts[cut] = place;
        improved = try_spec(moved) || improved;
      }
    }
    if (improved) continue;
    for (size_t cut = 1; cut + 1 < best.spec.stage_starts.size() && !pricer.out_of_time(); ++cut) {
      for (const int step : {-2, -1, 1, 2}) {
        PlanSpec moved = best.spec;
        moved.stage_starts[cut] += step;
        moved.stage_starts[cut + 1] += step;
        const int after = cut + 2 < moved.stage_starts.size() ? moved.stage_starts[cut + 2] : static_cast<int>(units);
        if (moved.stage_starts[cut] <= moved.stage_starts[cut - 1] || moved.stage_starts[cut + 1] >= after) continue;
        improved = try_spec(moved) || improved;
      }
    }
  }
}

/// The fastest priced pipelines with distinct stage cuts, at most `count`.
std::vector<PricedPlan> fastest_pipelines(const std::vector<PricedPlan>& priced, size_t count) {
  std::vector<PricedPlan> pipelines;
  for (const PricedPlan& plan : priced) {
    if (plan.spec.strategy == "pipeline" && plan.spec.stage_starts.size() > 1) pipelines.push_back(plan);
  }
  std::stable_sort(pipelines.begin(), pipelines.end(),
                   [](const PricedPlan& a, const PricedPlan& b) { return a.makespan_us < b.makespan_us; });
  std::vector<PricedPlan> distinct;
  for (const PricedPlan& plan : pipelines) {
    const bool seen = std::any_of(distinct.begin(), distinct.end(), [&](const PricedPlan& kept) {
      return kept.spec.stage_starts == plan.spec.stage_starts && kept.spec.replicas == plan.spec.replicas;
    });
    if (!seen) distinct.push_back(plan);
    if (distinct.size() == count) break;
  }
  return distinct;
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
  std::vector<Candidate> candidates = named_candidates(problem);
  for (const Candidate& candidate : candidates) pricer.price(candidate.spec, true, true);
  result.left_out = named_left_out(problem);
  result.named_seconds = pricer.elapsed();

  // 2. Pipelines by estimate: the best few per replica count go to the simulator.
  const std::vector<PipelineEstimate> estimates = pipeline_estimates(problem);
  result.estimated = static_cast<int>(estimates.size());
  std::map<int, int> finalists;
  for (const PipelineEstimate& estimate : estimates) {
    if (finalists[estimate.spec.replicas] >= kPipelineFinalistsPerReplicas) continue;
    finalists[estimate.spec.replicas] += 1;
    price_fitting(pricer, estimate.spec, training);
  }

  // 3. Replicated splits.
  const std::vector<Candidate> replicated = replicated_candidates(problem);
  for (const Candidate& candidate : replicated) price_fitting(pricer, candidate.spec, training);
  candidates.insert(candidates.end(), replicated.begin(), replicated.end());

  // 3b. Transformers: each tensor split again with sequence parallelism
  // (less activation memory; its collectives move what the all-reduces did).
  for (const PlanSpec& variant : sequence_parallel_variants(problem, candidates)) {
    price_fitting(pricer, variant, training);
  }

  // 4. Training: the memory variants of the named plans and of the fastest
  // others (1F1B can also be the faster schedule, and the Pareto front wants
  // the smaller footprints).
  if (training) {
    std::vector<PricedPlan> so_far = pricer.snapshot();
    // The named first, then the others fastest first.
    std::stable_sort(so_far.begin(), so_far.end(), [](const PricedPlan& a, const PricedPlan& b) {
      if (a.named != b.named) return a.named;
      return a.makespan_us < b.makespan_us;
    });
    const auto named = static_cast<size_t>(std::count_if(so_far.begin(), so_far.end(),
                                                         [](const PricedPlan& plan) { return plan.named; }));
    if (so_far.size() - named > kPlansWithMemoryVariants) so_far.resize(named + kPlansWithMemoryVariants);
    for (const PricedPlan& plan : so_far) {
      for (const PlanSpec& variant : memory_variants(plan.spec)) pricer.price(variant, false);
    }
  }

  // 5. The stage cuts of the fastest pipelines, moved while the simulator says it helps.
  // Per schedule: the best cut under 1F1B need not be GPipe's.
  for (const PipelineSchedule schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kOneForwardOneBackward}) {
    std::vector<PricedPlan> scheduled = pricer.snapshot();
    std::erase_if(scheduled, [&](const PricedPlan& plan) { return plan.spec.schedule != schedule || plan.spec.recompute; });
    for (const PricedPlan& pipeline : fastest_pipelines(scheduled, kPipelinesForLocalSearch)) {
      if (pipeline.spec.devices / pipeline.spec.replicas <= kMostStagesForLocalSearch) {
        improve_stage_cuts(pricer, pipeline, stage_units(*problem.graph).size());
      }
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
