#include "cli/plan_file_options.hpp"

#include <fmt/format.h>

#include "util/errors.hpp"

namespace splitscope::cli {

CLI::Option* add_plan_file_option(CLI::App& command, std::string& path) {
  return command.add_option("--plan", path,
                            "a plan file (plan --out, search --out; docs/plan.md): its strategy and parameters, "
                            "checked against MODEL and --devices");
}

CLI::Option* add_stages_option(CLI::App& command, std::vector<int>& stages) {
  return command
      .add_option("--stages", stages,
                  "horizontal, pipeline, hybrid: the first layer of each stage, from 0, one per device (hybrid: per "
                  "pipeline stage; default: balanced by cost)")
      ->delimiter(',');
}

void check_stages_option(const std::vector<int>& stages, const std::string& strategy) {
  if (!stages.empty() && !is_layer_split(strategy)) {
    throw InputError("--stages", "",
                     "cuts a layer split into stages; use it with --strategy horizontal, pipeline or hybrid");
  }
}

void refuse_with_plan_file(const std::vector<std::string>& given) {
  if (given.empty()) return;
  throw InputError(given.front(), "",
                   "comes from the plan file with --plan (which holds the strategy and its parameters); drop " +
                       given.front() + " or --plan");
}

void adopt_plan_file_precision(const PlanFile& file, const std::string& path, std::string& precision) {
  const Precision held = file.spec.precision;
  if (precision.empty()) {
    if (held != Precision::kFp32) precision = std::string(to_string(held));
    return;
  }
  if (parse_precision(precision) != held) {
    throw InputError("--precision", precision,
                     fmt::format("the plan file {} holds a plan at {}; drop --precision, or write the plan again with "
                                 "`plan ... --precision {} --out FILE`",
                                 path, to_string(held), precision));
  }
}

int64_t plan_file_batch(const PlanFile& file, const std::optional<int64_t>& batch) {
  return batch.value_or(file.network.batch);
}

std::shared_ptr<const Plan> plan_from_file(const PlanFile& file, const std::string& path,
                                           const std::shared_ptr<const Graph>& graph, int devices,
                                           const ExecutionOptions& execution, const RunTarget& target) {
  const PartitionOptions pricing = partition_options(execution, target, file.spec.devices, file.spec.microbatches);
  return std::make_shared<const Plan>(rebuild_plan(file, path, graph, devices, pricing.cost));
}

std::shared_ptr<const Plan> labelled_plan(const Plan& plan, const std::string& label) {
  auto copy = std::make_shared<Plan>(plan);
  copy->strategy = label;
  return copy;
}

}  // namespace splitscope::cli
