#include "search/search_report.hpp"

#include <fmt/format.h>

#include "util/strings.hpp"

#include <algorithm>

#include "report/text_table.hpp"
#include "report/units.hpp"

namespace splitscope {
namespace {

std::string ms(double us) { return format_ms(us / 1000); }

}  // namespace

std::string plan_label(const PricedPlan& plan, bool mark_named) {
  constexpr size_t kMostCutsShown = 8;
  PlanSpec shown = plan.spec;
  if (plan.named) shown.stage_starts.clear();
  std::string text = describe(shown) + (plan.named && mark_named ? " (named)" : "");
  if (shown.stage_starts.size() > kMostCutsShown) {
    shown.stage_starts.clear();
    const auto& cuts = plan.spec.stage_starts;
    text = describe(shown) + fmt::format(", stages {},{},{},...,{},{} ({} stages)", cuts[0], cuts[1], cuts[2],
                                         cuts[cuts.size() - 2], cuts.back(), cuts.size());
  }
  return text;
}

namespace {

std::string peak_list(const PricedPlan& plan) {
  const auto [low, high] = std::minmax_element(plan.peak_memory_bytes.begin(), plan.peak_memory_bytes.end());
  if (binary_bytes(double(*low)) == binary_bytes(double(*high))) return binary_bytes(double(*high)) + " on every device";
  return fmt::format("{} to {} a device", binary_bytes(double(*low)), binary_bytes(double(*high)));
}

std::string plan_table(const std::vector<PricedPlan>& plans, size_t count) {
  using Align = TextTable::Align;
  TextTable table({"#", "plan", "devices", "makespan", "samples/s", "compute", "transfer", "idle", "peak memory"},
                  {Align::kRight, Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                   Align::kRight, Align::kRight, Align::kRight});
  for (size_t i = 0; i < std::min(count, plans.size()); ++i) {
    const PricedPlan& plan = plans[i];
    table.add_row({std::to_string(i + 1), plan_label(plan),
                   std::to_string(plan.spec.devices), ms(plan.makespan_us), si_count(plan.samples_per_second),
                   ms(plan.compute_us), ms(plan.transfer_us), ms(plan.idle_us),
                   binary_bytes(double(plan.peak_memory_max))});
  }
  return table.render();
}

nlohmann::json plan_json(const PricedPlan& plan) {
  nlohmann::json strategy = {{"name", plan.spec.strategy},
                             {"replicas", plan.spec.replicas},
                             {"microbatches", plan.spec.microbatches},
                             {"schedule", std::string(to_string(plan.spec.schedule))},
                             {"recompute", plan.spec.recompute}};
  if (!plan.spec.stage_starts.empty()) strategy["stage_starts"] = plan.spec.stage_starts;
  return {{"plan", plan_label(plan)},
          {"named", plan.named},
          {"devices", plan.spec.devices},
          {"strategy", strategy},
          {"makespan_us", plan.makespan_us},
          {"samples_per_second", plan.samples_per_second},
          {"compute_us", plan.compute_us},
          {"transfer_us", plan.transfer_us},
          {"idle_us", plan.idle_us},
          {"peak_memory_bytes", plan.peak_memory_bytes}};
}

}  // namespace

std::string why_it_wins(const PricedPlan& best, const PricedPlan* named) {
  if (named == nullptr) return "no named strategy fits in the memory limit; this plan does";
  if (best.named) return plan_label(best, false) + " is itself the best named strategy: no mix the search tried beats it";
  const double speedup = best.makespan_us > 0 ? named->makespan_us / best.makespan_us : 1.0;
  // The term of the breakdown that shrank most says where the time went.
  const std::pair<double, const char*> terms[] = {
      {named->compute_us - best.compute_us, "compute on the busiest device"},
      {named->idle_us - best.idle_us, "waiting (bubble and exposed transfers)"},
  };
  const auto& [saved, what] = *std::max_element(std::begin(terms), std::end(terms));
  std::string text = fmt::format("{} against {}, the best named strategy ({} against {})", format_speedup(speedup),
                                 plan_label(*named, false), ms(best.makespan_us), ms(named->makespan_us));
  if (saved > 0) text += fmt::format(": {} less {}", ms(saved), what);
  if (best.peak_memory_max < named->peak_memory_max) {
    text += fmt::format("; peak memory {} against {}", binary_bytes(double(best.peak_memory_max)),
                        binary_bytes(double(named->peak_memory_max)));
  }
  return text;
}

std::string budget_note(const SearchProblem& problem, const SearchResult& result) {
  std::string note;
  if (result.budget_ran_out) {
    note += "; the budget ran out before every candidate was priced";
    if (result.cut_off > 0) note += fmt::format(" ({} cut off midway)", result.cut_off);
  }
  if (result.named_seconds > problem.budget_s) {
    note += fmt::format("; the named strategies alone took {:.2f} s, over the budget (they are always priced)",
                        result.named_seconds);
  }
  return note;
}

std::string search_text(const SearchProblem& problem, const SearchResult& result, int top) {
  std::string text = fmt::format("search: {} on {} of {}{}, batch {}, objective {}, memory limit {}\n",
                                 problem.graph->name(), counted(problem.devices, "device"), problem.machine.name,
                                 problem.graph->is_training() ? " (training)" : "", problem.graph->batch(),
                                 to_string(problem.objective), binary_bytes(double(problem.memory_limit_bytes)));
  text += fmt::format("priced {} plan(s) by the simulator ({} refused), {} pipeline cut(s) by the estimate, in {:.2f} s{}\n\n",
                      result.simulated, result.refused.size(), result.estimated, result.seconds,
                      budget_note(problem, result));
  if (!result.left_out.empty()) {
    text.pop_back();  // the left-out list belongs to the paragraph above
    text += "named strategies left out (they do not apply here; compare leaves them out too):\n";
    for (const LeftOutStrategy& left : result.left_out) text += fmt::format("  {}: {}\n", left.strategy, left.reason);
    text += "\n";
  }
  const PricedPlan* best = result.best();
  if (best == nullptr) {
    text += "no plan fits in the memory limit\n";
    return text;
  }
  text += fmt::format("best: {}\n", plan_label(*best));
  text += fmt::format("  makespan {} ({} samples/s); on the busiest device compute {}, transfers {}, idle {}\n",
                      ms(best->makespan_us), si_count(best->samples_per_second), ms(best->compute_us),
                      ms(best->transfer_us), ms(best->idle_us));
  text += fmt::format("  peak memory {}\n", peak_list(*best));
  text += "  " + why_it_wins(*best, result.best_named()) + "\n\n";
  text += fmt::format("top {}:\n", std::min<size_t>(static_cast<size_t>(top), result.ranked.size()));
  text += plan_table(result.ranked, static_cast<size_t>(top));
  text += "\nPareto front (time against peak memory):\n";
  text += plan_table(result.pareto, result.pareto.size());
  return text;
}

nlohmann::json search_json(const SearchProblem& problem, const SearchResult& result, int top) {
  nlohmann::json ranked = nlohmann::json::array();
  for (size_t i = 0; i < std::min(static_cast<size_t>(top), result.ranked.size()); ++i) {
    ranked.push_back(plan_json(result.ranked[i]));
  }
  nlohmann::json pareto = nlohmann::json::array();
  for (const PricedPlan& plan : result.pareto) pareto.push_back(plan_json(plan));
  nlohmann::json left_out = nlohmann::json::array();
  for (const LeftOutStrategy& left : result.left_out) {
    left_out.push_back({{"strategy", left.strategy}, {"reason", left.reason}});
  }
  const PricedPlan* best = result.best();
  const PricedPlan* named = result.best_named();
  return {{"schema", "splitscope.search/1"},
          {"network", problem.graph->name()},
          {"batch", problem.graph->batch()},
          {"training", problem.graph->is_training()},
          {"devices", problem.devices},
          {"machine", problem.machine.name},
          {"objective", std::string(to_string(problem.objective))},
          {"memory_limit_bytes", problem.memory_limit_bytes},
          {"simulated", result.simulated},
          {"refused", result.refused.size()},
          {"estimated", result.estimated},
          {"left_out", left_out},
          {"budget_ran_out", result.budget_ran_out},
          {"cut_off", result.cut_off},
          {"seconds", result.seconds},
          {"named_seconds", result.named_seconds},
          {"best", best ? plan_json(*best) : nlohmann::json(nullptr)},
          {"best_named", named ? plan_json(*named) : nlohmann::json(nullptr)},
          {"speedup_vs_best_named",
           best && named && best->makespan_us > 0 ? nlohmann::json(named->makespan_us / best->makespan_us)
                                                  : nlohmann::json(nullptr)},
          {"why", best ? nlohmann::json(why_it_wins(*best, named)) : nlohmann::json(nullptr)},
          {"top", ranked},
          {"pareto", pareto}};
}

}  // namespace splitscope
