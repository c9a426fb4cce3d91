// Claim 12: model parallelism can pay off, but only with care: the best
// split depends on the architecture and on the machine. The experiment asks
// `search` (docs/search.md) for the fastest plan of four architectures (an
// MLP, a CNN, an RNN, a transformer) on a machine with fast links and one
// with slow ones, the same device count on both, and sets it against the
// best named strategy; the claim holds where the plans chosen differ both
// across the networks and across the machines.

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "lessons/experiment.hpp"
#include "lessons/lesson_list.hpp"
#include "search/plan_search.hpp"
#include "sim/machine/machine_file.hpp"

namespace splitscope {
namespace {

constexpr int kBestSplitDevices = 4;
/// Far more than the searches take here (under half a second each on 2
/// cores): none runs out, so the search is deterministic.
constexpr double kBestSplitBudgetS = 20;

/// The plan's shape without its stage cuts, which differ with every network:
/// "tensor x2", "pipeline, 8 micro-batches".
std::string best_split_kind(PlanSpec spec) {
  spec.stage_starts.clear();
  return describe(spec);
}

/// The search over `devices` of `machine` for `graph`, as `splitscope search` asks it.
SearchResult search_best_split(const std::shared_ptr<const Graph>& graph, const Machine& machine, int devices) {
  SearchProblem problem;
  problem.graph = graph;
  problem.devices = devices;
  problem.machine = machine;
  problem.memory_limit_bytes = machine.device.memory_bytes();
  problem.budget_s = kBestSplitBudgetS;
  // search's default for a named pipeline (cli/strategy_choice.hpp): M = 4N,
  // but no micro-batch under 8 rows.
  problem.named_microbatches =
      static_cast<int>(std::min<int64_t>(4 * devices, std::max<int64_t>(1, graph->batch() / 8)));
  return search_plans(problem);
}

}  // namespace

LessonResult lesson_best_split(const LessonSettings& settings) {
  // Fast links against slow ones, the same four GPUs on each.
  std::vector<std::string> machines{"h100-nvlink-8", "h100-pcie-4"};
  if (!settings.machine.empty()) machines = {settings.machine};
  const std::vector<std::string> networks{"mlp", "cnn", "lstm", "gpt-small"};
  LessonResult result;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::map<std::string, std::set<std::string>> kinds_on_machine, kinds_of_network;
  bool never_slower = true;
  for (const std::string& machine_name : machines) {
    const Machine machine = load_machine(machine_name);
    const int devices = std::min(kBestSplitDevices, machine.devices);
    LessonBars bars{fmt::format("step time on {} devices of {} (forward)", devices, machine_name), "ms", {}};
    for (const std::string& network : networks) {
      const SearchResult found = search_best_split(lesson_graph(network, false), machine, devices);
      const PricedPlan* best = found.best();
      const PricedPlan* named = found.best_named();
      if (best == nullptr || named == nullptr) continue;  // nothing fits: no row
      const std::string kind = best_split_kind(best->spec);
      kinds_on_machine[machine_name].insert(kind);
      kinds_of_network[network].insert(kind);
      never_slower = never_slower && best->makespan_us <= named->makespan_us;
      rows.push_back({{"network", network},
                      {"machine", machine_name},
                      {"devices", devices},
                      {"search_best", describe(best->spec)},
                      {"search_kind", kind},
                      {"search_ms", best->makespan_us / 1e3},
                      {"best_named", named->spec.strategy},
                      {"best_named_ms", named->makespan_us / 1e3},
                      {"speedup_over_named", named->makespan_us / best->makespan_us},
                      {"plans_simulated", found.simulated},
                      {"budget_ran_out", found.budget_ran_out}});
      bars.bars.push_back({fmt::format("{}: best named ({})", network, named->spec.strategy), named->makespan_us / 1e3});
      bars.bars.push_back({fmt::format("{}: search ({})", network, kind), best->makespan_us / 1e3});
    }
    result.figures.bars.push_back(bars);
  }
  // The architecture matters where one machine's networks get different
  // plans; the machine, where one network's plan changes with the machine.
  bool by_architecture = false, by_machine = false;
  for (const auto& [machine, kinds] : kinds_on_machine) by_architecture = by_architecture || kinds.size() > 1;
  for (const auto& [network, kinds] : kinds_of_network) by_machine = by_machine || kinds.size() > 1;
  std::string machine_list;
  for (const std::string& name : machines) machine_list += (machine_list.empty() ? "" : " and ") + name;
  result.setup = fmt::format("mlp, cnn, lstm, gpt-small forward on {} devices (at most) of {}: `search` (budget {:g} s) "
                             "against the best named strategy",
                             kBestSplitDevices, machine_list, kBestSplitBudgetS);
  const bool machines_compared = machines.size() > 1;
  result.verdict = by_architecture && (by_machine || !machines_compared) && never_slower ? LessonVerdict::kHolds
                                                                                          : LessonVerdict::kDoesNotHold;
  std::string cases;
  for (const auto& row : rows) {
    cases += fmt::format("{}{} on {}: {} ({:.2f}x against {})", cases.empty() ? "" : "; ", row["network"].get<std::string>(),
                         row["machine"].get<std::string>(), row["search_kind"].get<std::string>(),
                         row["speedup_over_named"].get<double>(), row["best_named"].get<std::string>());
  }
  result.why = fmt::format(
      "the search's best plan {} with the network{}{} ({})", by_architecture ? "changes" : "does not change",
      machines_compared ? fmt::format(" and {} with the machine", by_machine ? "changes" : "does not change") : "",
      never_slower ? "" : ", though some is slower than a named strategy", cases);
  result.numbers = {{"rows", rows},
                    {"depends_on_architecture", by_architecture},
                    {"depends_on_machine", machines_compared ? nlohmann::ordered_json(by_machine)
                                                             : nlohmann::ordered_json(nullptr)},
                    {"never_slower_than_named", never_slower}};
  return result;
}

}  // namespace splitscope
