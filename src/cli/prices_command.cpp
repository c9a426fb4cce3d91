// `splitscope prices --machine M [NETWORK...]`: what the simulator charges
// for every op slice the zoo's splits make (the slices `calibrate` times),
// with the datasheet rules' price beside it: the pairs
// scripts/fit-achieved-rates fits achieved rates to (docs/cost-model.md).

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/zoo_samples.hpp"
#include "ir/op.hpp"
#include "ir/zoo.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/costs/op_cost_model.hpp"
#include "util/json_dump.hpp"

namespace splitscope::cli {
namespace {

struct PricesOptions {
  std::string machine;
  std::vector<std::string> networks;
};

nlohmann::json prices_json(const Machine& machine, const std::vector<OpSample>& samples) {
  const OpCostModel model(machine);
  nlohmann::json ops = nlohmann::json::array();
  for (const OpSample& sample : samples) {
    const SliceCost cost = slice_cost(*sample.graph, sample.node, sample.slice);
    const OpCostModel::RulePricing pricing = model.rule_pricing(*sample.graph, sample.node, sample.slice);
    nlohmann::json op{{"signature", sample.signature},
                      {"kind", std::string(to_string(sample.graph->node(sample.node).kind))},
                      {"flops", cost.flops},
                      {"bytes", cost.bytes_read + cost.bytes_written},
                      {"families", pricing.families},
                      {"datasheet_us", pricing.datasheet_seconds * 1e6},
                      {"body_us", pricing.body_seconds * 1e6},
                      {"learned", pricing.learned},
                      {"modelled_us", pricing.seconds * 1e6}};
    if (const double* measured = model.calibrated_seconds(sample.signature)) op["table_us"] = *measured * 1e6;
    ops.push_back(std::move(op));
  }
  return {{"schema", "splitscope.prices/1"},
          {"machine", machine.name},
          {"achieved_rates", machine.device.achieved_rates_name},
          {"ops", std::move(ops)}};
}

}  // namespace

Command add_prices_command(CLI::App& app) {
  auto options = std::make_shared<PricesOptions>();
  CLI::App* sub = app.add_subcommand(
      "prices", "Price every op slice the zoo's splits make (what calibrate times) on a machine, as JSON");
  sub->add_option("--machine", options->machine, "machine file, or a name from models/machines")->required();
  sub->add_option("NETWORK", options->networks, "networks whose op slices to price (default: the whole zoo)");
  return {sub, [options](const std::vector<std::string>&) {
            const Machine machine = load_machine(options->machine);
            const std::vector<std::string> names =
                options->networks.empty() ? zoo_names(ZooShelf::kNetworks) : options->networks;
            std::cout << dump_json(prices_json(machine, zoo_samples(names)), 1) << "\n";
            return 0;
          }};
}

}  // namespace splitscope::cli
