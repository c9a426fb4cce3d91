#pragma once
/// \file
/// What `splitscope search` prints: the best plan with its breakdown and why
/// it beats the best named strategy, the top k, the Pareto front of time
/// against peak memory, and what the search did (text, or JSON
/// `splitscope.search/1`, docs/search.md).

#include <nlohmann/json.hpp>
#include <string>

#include "search/plan_search.hpp"

namespace splitscope {

/// A plan as a reader wants it: a named strategy by its name and "(named)"
/// (its cuts are the partitioner's own), a long list of cuts shortened (the
/// plan file has them all).
std::string plan_label(const PricedPlan& plan, bool mark_named = true);

/// One sentence: how much faster `best` is than `named` and where the time
/// went (the breakdown term that shrank most), or that the named one is best.
std::string why_it_wins(const PricedPlan& best, const PricedPlan* named);

/// What the budget left out, to end the "priced N plan(s) ... in S s" line:
/// "" when nothing; else "; the budget ran out before every candidate was
/// priced" (with how many simulations it cut off midway), and where the
/// named strategies alone took longer than the budget, how long.
std::string budget_note(const SearchProblem& problem, const SearchResult& result);

std::string search_text(const SearchProblem& problem, const SearchResult& result, int top);
nlohmann::json search_json(const SearchProblem& problem, const SearchResult& result, int top);

}  // namespace splitscope
