#pragma once
/// \file
/// The search: prices the named strategies, then the candidates of
/// candidate_space.hpp in order of promise (pipelines by their estimate,
/// the best few simulated per replica count, then a local search moving one
/// stage cut at a time while the simulator says it helps), until the
/// budget runs out (a candidate being simulated then is cut off, unpriced);
/// ranks what fits by the objective.

#include <cstdint>
#include <vector>

#include "search/candidate_space.hpp"
#include "search/priced_plan.hpp"
#include "search/search_problem.hpp"

namespace splitscope {

struct SearchResult {
  std::vector<PricedPlan> ranked;  ///< every priced plan that fits, best first by the objective (no repeats)
  std::vector<RefusedPlan> refused;
  std::vector<LeftOutStrategy> left_out;  ///< named strategies that do not apply here, with why
  std::vector<PricedPlan> pareto;  ///< time against peak memory: none is both faster and smaller; fastest first
  int enumerated = 0;              ///< candidates considered
  int simulated = 0;               ///< of them priced by the simulator
  int estimated = 0;               ///< pipelines priced by the estimate only
  bool budget_ran_out = false;     ///< some candidates were left unpriced (skipped or cut off)
  int cut_off = 0;                 ///< of them, simulations the budget stopped midway (no price)
  double seconds = 0;              ///< the search's own time
  /// Of it, pricing the named strategies, which runs whatever the budget:
  /// past the budget, they alone overran it.
  double named_seconds = 0;

  /// The best plan, or null if nothing fits.
  const PricedPlan* best() const { return ranked.empty() ? nullptr : &ranked.front(); }
  /// The best named strategy that fits, or null.
  const PricedPlan* best_named() const;
};

/// Whether `a` ranks before `b` under `objective`.
bool ranks_before(const PricedPlan& a, const PricedPlan& b, SearchObjective objective);

/// The plans of `priced` that no other is both at least as fast and at most
/// as large as, and strictly better in one; fastest first.
std::vector<PricedPlan> pareto_front(const std::vector<PricedPlan>& priced);

SearchResult search_plans(const SearchProblem& problem);

}  // namespace splitscope
