// `splitscope search MODEL --devices N --machine M [--train] [--batch B]
// [--memory-limit GiB] [--objective time|throughput|memory] [--budget-s S]
// [--top K] [--out plan.json] [--html page.html] [--json]`: the fastest
// plan the partitioners can express, priced by the simulator (docs/search.md).

#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>

#include "cli/chakra_output.hpp"
#include "cli/command.hpp"
#include "cli/command_outputs.hpp"
#include "cli/host_machine.hpp"
#include "cli/network_loading.hpp"
#include "cli/strategy_choice.hpp"
#include "cli/training_options.hpp"
#include "plan_file/plan_file.hpp"
#include "search/plan_search.hpp"
#include "report/report_context.hpp"
#include "search/search_html.hpp"
#include "search/search_report.hpp"
#include "sim/costs/machine_cost_function.hpp"
#include "sim/machine/machine_file.hpp"
#include "util/errors.hpp"
#include "util/json_dump.hpp"
#include "util/output_batch.hpp"
#include "util/strings.hpp"

namespace splitscope::cli {
namespace {

struct SearchOptions {
  std::string model;
  int devices = 0;
  std::string machine;
  std::optional<int64_t> batch;
  std::optional<double> memory_limit_gib;
  std::string objective = "time";
  double budget_s = 60;
  int top = 5;
  std::string out;
  std::string html;  ///< --html: the Pareto chart, the best plan's breakdown and the top k as a page
  std::string chakra_dir;  ///< --chakra: the best plan's Chakra execution traces
  bool json = false;
  TrainingOptions training;
};

SearchProblem search_problem(const SearchOptions& options) {
  if (options.devices < 1) throw InputError("--devices", "", "must be at least 1");
  if (!(options.budget_s > 0) || !std::isfinite(options.budget_s)) {
    throw InputError("--budget-s", "", fmt::format("must be a positive number of seconds, got {}", options.budget_s));
  }
  if (options.top < 1) throw InputError("--top", "", "must be at least 1");
  // The search chooses these itself: a fixed one would be silently searched over.
  if (options.training.schedule_given) throw InputError("--schedule", "", "is searched (gpipe and 1f1b); drop it");
  if (options.training.recompute) throw InputError("--recompute", "", "is searched (with and without); drop it");
  SearchProblem problem;
  problem.objective = objective_named(options.objective);
  problem.machine = load_machine(resolve_machine(options.machine));
  if (options.devices > problem.machine.devices) {
    throw InputError("--devices", "",
                     fmt::format("{} has {} devices, fewer than {}; give at most {} or a larger machine",
                                 problem.machine.name, problem.machine.devices, options.devices,
                                 problem.machine.devices));
  }
  problem.devices = options.devices;
  problem.graph = graph_to_run(load_network(options.model, options.batch), options.training);
  problem.memory_limit_bytes = problem.machine.device.memory_bytes();
  if (options.memory_limit_gib) {
    const double gib = *options.memory_limit_gib;
    if (!(gib > 0) || gib > 1 << 30) {
      throw InputError("--memory-limit", "", fmt::format("must be a positive number of GiB, got {}", gib));
    }
    problem.memory_limit_bytes = static_cast<int64_t>(gib * double(int64_t{1} << 30));
  }
  problem.budget_s = options.budget_s;
  problem.named_microbatches = default_microbatches(problem.graph->batch(), problem.devices);
  problem.bucket_bytes = bucket_bytes(options.training);
  return problem;
}

int search_command(const SearchOptions& options, const std::vector<std::string>& command_line) {
  check_command_outputs({{"--out", options.out}, {"--html", options.html}},
                        {input_file(ZooShelf::kNetworks, options.model), input_file(ZooShelf::kMachines, options.machine)});
  const SearchProblem problem = search_problem(options);
  const SearchResult result = search_plans(problem);
  if (options.json) {
    std::cout << dump_json(search_json(problem, result, options.top), 2) << "\n";
  } else {
    std::cout << search_text(problem, result, options.top);
  }
  const PricedPlan* best = result.best();
  if (best == nullptr) {
    throw RunError(fmt::format("no plan of {} over {} fits in {:.1f} GiB a device; raise --memory-limit, "
                               "use more devices or a smaller --batch",
                               problem.graph->name(), counted(problem.devices, "device"),
                               double(problem.memory_limit_bytes) / double(int64_t{1} << 30)));
  }
  if (options.chakra_dir.empty() && options.out.empty() && options.html.empty()) return 0;
  OutputBatch files;
  if (!options.chakra_dir.empty() || !options.out.empty()) {
    // Built once for both outputs: the best plan as the search priced it.
    const Plan plan = build_plan(best->spec, problem.graph, std::make_shared<MachineCostFunction>(problem.machine));
    if (!options.chakra_dir.empty()) write_plan_chakra(plan, problem.machine, options.chakra_dir);
    if (!options.out.empty()) {
      const PlanFile file = plan_file_of(best->spec, plan, PlanPrediction{problem.machine.name, best->makespan_us});
      files.add("--out", options.out, dump_json(to_json(file), 2) + "\n");
    }
  }
  if (!options.html.empty()) {
    files.add("--html", options.html,
              search_html(problem, result, options.top, make_report_context(command_line),
                          options.memory_limit_gib.has_value()));
  }
  publish_outputs(files, options.json);
  if (!options.out.empty() && !options.json) {
    std::cout << fmt::format("\nrun the best plan: splitscope run {} --plan {}{} --backend sim --machine {}\n",
                             options.model, options.out, options.training.train ? " --train" : "", options.machine);
  }
  return 0;
}

}  // namespace

Command add_search_command(CLI::App& app) {
  auto options = std::make_shared<SearchOptions>();
  CLI::App* sub = app.add_subcommand(
      "search", "Find the fastest plan (mixes of data, tensor and pipeline parallelism) the simulator predicts");
  sub->add_option("MODEL", options->model, "network file, or a name from models/networks")->required();
  sub->add_option("--devices,-n", options->devices, "devices to plan over")->required();
  sub->add_option("--machine", options->machine, "the machine that prices every plan (name or file)")->required();
  sub->add_option("--batch", options->batch, "override the network file's batch");
  sub->add_option("--memory-limit", options->memory_limit_gib,
                  "GiB a device may use (default: the machine's device memory); plans needing more are refused");
  sub->add_option("--objective", options->objective, "time | throughput | memory (the least peak memory)")
      ->capture_default_str();
  sub->add_option("--budget-s", options->budget_s,
                  "stop pricing new candidates after this many seconds (the named strategies are always priced)")
      ->capture_default_str();
  sub->add_option("--top", options->top, "how many of the best plans to list")->capture_default_str();
  sub->add_option("--out", options->out, "write the best plan as a plan file (docs/plan.md), for run --plan");
  sub->add_option("--html", options->html,
                  "write a self-contained HTML page: time against peak memory of every plan priced (the Pareto "
                  "front joined), the best plan's breakdown and the top k");
  sub->add_option("--chakra", options->chakra_dir,
                  "also write the best plan as Chakra execution traces, one per device, timed on --machine "
                  "(DIR/splitscope.<device>.et, for ASTRA-sim: docs/chakra.md)");
  sub->add_flag("--json", options->json, "print JSON (splitscope.search/1, docs/search.md) instead of tables");
  add_training_options(*sub, options->training, false);
  return {sub, [options](const std::vector<std::string>& command_line) {
            return search_command(*options, command_line);
          }};
}

}  // namespace splitscope::cli
