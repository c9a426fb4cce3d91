// Claim 12: model parallelism can pay off, but only with care: the best
// split depends on the architecture and on the machine. The experiment
// finds the fastest named strategy for three architectures on two machines.

#include <fmt/format.h>

#include <set>

#include "lessons/experiment.hpp"
#include "lessons/lesson_list.hpp"
#include "partitioners/partitioner.hpp"
#include "sim/machine_file.hpp"
#include "util/errors.hpp"

namespace splitscope {

LessonResult lesson_best_split(const LessonSettings& settings) {
  constexpr int kDevices = 4;
  std::vector<std::string> machines{"h100-nvlink-8", "h100-pcie-4"};
  if (!settings.machine.empty()) machines = {settings.machine};
  nlohmann::ordered_json best = nlohmann::ordered_json::array();
  std::set<std::string> winners;
  for (const std::string& machine_name : machines) {
    const Machine machine = load_machine(machine_name);
    for (const std::string network : {"mlp", "cnn", "lstm"}) {
      const auto graph = lesson_graph(network, false);
      std::string winner;
      double fastest = 0;
      for (const std::string& strategy : strategy_names()) {
        const auto partitioner = make_partitioner(strategy);
        if (partitioner->traits().parameter_server) continue;
        const int devices = partitioner->traits().baseline ? 1 : kDevices;
        double us = 0;
        try {
          us = simulate_trial(graph, strategy, devices, machine, partitioner->traits().microbatched ? 8 : 1).makespan_us;
        } catch (const InputError&) {
          continue;  // the strategy does not split this network
        }
        if (winner.empty() || us < fastest) {
          winner = strategy;
          fastest = us;
        }
      }
      winners.insert(winner);
      best.push_back({{"network", network}, {"machine", machine_name}, {"best", winner}, {"makespan_ms", fastest / 1e3}});
    }
  }
  std::string machine_list;
  for (const std::string& name : machines) machine_list += (machine_list.empty() ? "" : " and ") + name;
  LessonResult result;
  result.setup = fmt::format("mlp, cnn, lstm forward over {} devices, every named strategy, on {}", kDevices,
                             machine_list);
  result.verdict = winners.size() > 1 ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold;
  std::string cases;
  for (const auto& row : best) {
    cases += fmt::format("{}{} on {}: {}", cases.empty() ? "" : "; ", row["network"].get<std::string>(),
                         row["machine"].get<std::string>(), row["best"].get<std::string>());
  }
  result.why = winners.size() > 1 ? fmt::format("{} different strategies win ({})", winners.size(), cases)
                                  : fmt::format("{} wins every case here ({})", *winners.begin(), cases);
  result.numbers = {{"best", best}};
  return result;
}

}  // namespace splitscope
