// `search --budget-s` bounds the search's time: no candidate starts past the
// budget and one being simulated then is cut off unpriced; the named
// strategies are priced to their end whatever the budget, so the best is
// never slower than the best of them.

#include <gtest/gtest.h>

#include <algorithm>

#include "search/plan_search.hpp"
#include "search/search_report.hpp"
#include "search_test_support.hpp"

namespace splitscope {
namespace {

/// Past the budget (or the named strategies' own time, if longer): the
/// candidate whose plan was being built when it ran out, up to
/// SimulationDeadline::kEventsBetweenLooks events, and the ranking. Loose
/// for a loaded 2-core host; the search below takes several times this
/// without a budget.
constexpr double kBudgetOvershootSeconds = 0.25;

/// Every ranked plan priced again without a deadline: its price is the one
/// reported, so no plan cut off by the budget is among them.
void expect_prices_are_whole(const SearchProblem& problem, const SearchResult& result) {
  const Simulator simulator(problem.machine);
  EXPECT_EQ(result.ranked.size(), static_cast<size_t>(result.simulated));
  for (const PricedPlan& plan : result.ranked) {
    RefusedPlan refused;
    const auto again = price_plan(plan.spec, problem.graph, simulator, problem.memory_limit_bytes, refused);
    ASSERT_TRUE(again.has_value()) << describe(plan.spec) << ": " << refused.reason;
    EXPECT_EQ(again->makespan_us, plan.makespan_us) << describe(plan.spec);
  }
}

void expect_within_budget(const SearchProblem& problem, const SearchResult& result) {
  EXPECT_LE(result.named_seconds, result.seconds);
  EXPECT_LE(result.seconds, std::max(problem.budget_s, result.named_seconds) + kBudgetOvershootSeconds)
      << "budget " << problem.budget_s << " s, the named strategies " << result.named_seconds << " s";
}

TEST(SearchBudget, ATinyBudgetStillPricesTheNamedStrategiesAndStopsThere) {
  SearchProblem problem = testing::search_problem("uneven", true, 8);
  const SearchResult whole = search_plans(problem);
  ASSERT_FALSE(whole.budget_ran_out);
  ASSERT_NE(whole.best_named(), nullptr);

  problem.budget_s = 1e-6;
  const SearchResult tiny = search_plans(problem);
  EXPECT_TRUE(tiny.budget_ran_out);
  expect_within_budget(problem, tiny);
  ASSERT_NE(tiny.best(), nullptr);
  ASSERT_NE(tiny.best_named(), nullptr);
  // The named strategies priced as without a budget; nothing priced past it.
  EXPECT_EQ(tiny.best_named()->makespan_us, whole.best_named()->makespan_us);
  EXPECT_LE(tiny.best()->makespan_us, tiny.best_named()->makespan_us);
  EXPECT_TRUE(std::all_of(tiny.ranked.begin(), tiny.ranked.end(), [](const PricedPlan& plan) { return plan.named; }));
  EXPECT_LT(tiny.simulated, whole.simulated);
  expect_prices_are_whole(problem, tiny);
}

TEST(SearchBudget, ABudgetThatRunsOutMidwayBoundsTheSearchAndPricesOnlyWholeSimulations) {
  SearchProblem problem = testing::search_problem("uneven", true, 8);
  const SearchResult whole = search_plans(problem);
  ASSERT_FALSE(whole.budget_ran_out);
  ASSERT_GT(whole.seconds, whole.named_seconds);
  // Half way through the candidates after the named ones (as this host ran them just now).
  problem.budget_s = whole.named_seconds + (whole.seconds - whole.named_seconds) / 2;
  const SearchResult half = search_plans(problem);
  expect_within_budget(problem, half);
  ASSERT_NE(half.best(), nullptr);
  ASSERT_NE(half.best_named(), nullptr);
  EXPECT_EQ(half.best_named()->makespan_us, whole.best_named()->makespan_us);
  EXPECT_LE(half.best()->makespan_us, half.best_named()->makespan_us);
  EXPECT_GE(half.best()->makespan_us, whole.best()->makespan_us);
  EXPECT_LE(half.cut_off, 1) << "one simulation at a time: at most the one running when the budget ran out";
  expect_prices_are_whole(problem, half);
}

TEST(SearchBudget, TheNoteSaysWhatTheBudgetLeftOut) {
  SearchProblem problem = testing::search_problem("mlp", false, 2);
  problem.budget_s = 2;
  SearchResult result;
  EXPECT_EQ(budget_note(problem, result), "");
  result.budget_ran_out = true;
  EXPECT_EQ(budget_note(problem, result), "; the budget ran out before every candidate was priced");
  result.cut_off = 1;
  EXPECT_EQ(budget_note(problem, result), "; the budget ran out before every candidate was priced (1 cut off midway)");
  result.named_seconds = 3.5;
  EXPECT_EQ(budget_note(problem, result),
            "; the budget ran out before every candidate was priced (1 cut off midway); the named strategies alone "
            "took 3.50 s, over the budget (they are always priced)");
}

}  // namespace
}  // namespace splitscope
