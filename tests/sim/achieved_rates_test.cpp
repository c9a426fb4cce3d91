// Achieved-rate rules (src/sim/costs/achieved_rates.hpp): the formula by hand, the
// families, how a machine that names rules prices an op, that a calibration
// still overrides them, and that models/rules/achieved-rates.json reproduces
// the measurements it was fitted to within the errors it states.

#include "sim/costs/achieved_rates.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/op_signature.hpp"
#include "ir/zoo.hpp"
#include "partitioners/op_samples.hpp"
#include "partitioners/partitioner.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/costs/model_error.hpp"
#include "sim/costs/op_cost_model.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

namespace fs = std::filesystem;

AchievedRateRule rule(double fraction, double slope, double fixed_us, double min_us, double max_us) {
  return AchievedRateRule{std::log(fraction), slope, fixed_us * 1e-6, min_us * 1e-6, max_us * 1e-6, std::nullopt};
}

TEST(AchievedRateRule, IsFixedPlusBodyOverTheFraction) {
  // fraction 0.5, no slope: 10 us + 20 us / 0.5 = 50 us.
  EXPECT_NEAR(rule(0.5, 0, 10, 1, 1000).seconds(20e-6), 50e-6, 1e-12);
  // slope 0.1 at a body of 100 us: fraction 0.5 · (100 / 10)^0.1 = 0.629463; 10 + 100 / 0.629463 = 168.866 us.
  EXPECT_NEAR(rule(0.5, 0.1, 10, 1, 1000).fraction(100e-6), 0.629463, 1e-6);
  EXPECT_NEAR(rule(0.5, 0.1, 10, 1, 1000).seconds(100e-6), 168.866e-6, 1e-9);
  // Past the fitted range the fraction stays at its end: 0.5 · (1000 / 10)^0.1 = 0.792447 at 1000 us and at
  // 5000 us: 10 + 5000 / 0.792447 = 6319.57 us.
  EXPECT_NEAR(rule(0.5, 0.1, 10, 1, 1000).fraction(5000e-6), 0.792447, 1e-6);
  EXPECT_NEAR(rule(0.5, 0.1, 10, 1, 1000).seconds(5000e-6), 6319.57e-6, 1e-8);
  // An op with no work costs nothing, not even the fixed cost.
  EXPECT_EQ(rule(0.5, 0, 10, 1, 1000).seconds(0), 0.0);
}

Graph one_layer(const std::string& layer, const std::string& input = "[256, 14, 14]", int batch = 64) {
  return lower(parse_model_text(R"({"name": "t", "batch": )" + std::to_string(batch) + R"(, "input": )" + input +
                                    R"(, "layers": [)" + layer + "]}",
                                "t.json"));
}

Slice whole(const Graph& graph, NodeId node) {
  const OpNode& op = graph.node(node);
  return Slice{Range{0, graph.model().batch}, Range{0, op.output_shapes.at(0).at(0)},
               Range{0, op.input_shapes.at(0).at(0)}, {}};
}

NodeId last_node(const Graph& graph) { return static_cast<NodeId>(graph.num_nodes() - 1); }

TEST(AchievedRateFamilies, NameShapeClassMathAndPass) {
  const Graph conv = one_layer(R"({"type": "conv2d", "filters": 256, "kernel": 3, "padding": 1})");
  const NodeId c = last_node(conv);
  EXPECT_EQ(achieved_rate_families(conv.node(c), whole(conv, c), false),
            std::vector<std::string>{"conv_forward.fma.3x3s1"});
  const Graph strided = one_layer(R"({"type": "conv2d", "filters": 64, "kernel": 7, "stride": 2})");
  EXPECT_EQ(achieved_rate_families(strided.node(last_node(strided)), whole(strided, last_node(strided)), true),
            (std::vector<std::string>{"conv_forward.tensor.other", "conv_forward.fma.other"}));
  // On tensor cores, a product with no rule of its own borrows the fp32 kernels' (every table we hold is fp32).
  const Graph wide = one_layer(R"({"type": "dense", "units": 1024})", "[4096]", 64);
  EXPECT_EQ(achieved_rate_families(wide.node(last_node(wide)), whole(wide, last_node(wide)), true),
            (std::vector<std::string>{"product.tensor.wide", "product.fma.wide"}));
  const Graph dense16 = one_layer(R"({"type": "dense", "units": 1024})", "[4096]", 16);
  EXPECT_EQ(achieved_rate_families(dense16.node(last_node(dense16)), whole(dense16, last_node(dense16)), false),
            std::vector<std::string>{"product.fma.skinny"});
  const Graph dense64 = one_layer(R"({"type": "dense", "units": 1024})", "[4096]", 64);
  EXPECT_EQ(achieved_rate_families(dense64.node(last_node(dense64)), whole(dense64, last_node(dense64)), false),
            std::vector<std::string>{"product.fma.wide"});
  const Graph pool = one_layer(R"({"type": "maxpool", "kernel": 2, "stride": 2})");
  EXPECT_EQ(achieved_rate_families(pool.node(last_node(pool)), whole(pool, last_node(pool)), false),
            std::vector<std::string>{"pool.max"});
}

std::string temp_file(const std::string& name, const std::string& text) {
  const fs::path path = fs::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

/// h100-nvlink-8 naming `rules`, with `calibration` (op_times_us) if given.
Machine h100_with(const std::string& rules_path, const std::string& calibration = "") {
  nlohmann::json doc = nlohmann::json::parse(machine_to_json(load_machine("h100-nvlink-8")));
  doc["device"]["achieved_rates"] = rules_path;
  if (!calibration.empty()) doc["calibration"] = nlohmann::json::parse(calibration);
  return parse_machine_text(doc.dump(), "h100-with-rules.json");
}

constexpr const char* kElementwiseRules = R"({"schema": "splitscope.achieved-rates/1", "families": {
  "elementwise": {"log_fraction": -0.6931471805599453, "slope": 0, "fixed_us": 3, "body_us_range": [1, 1000]}}})";

TEST(AchievedRates, PriceTheKindsTheyCoverAndLeaveTheOthersToTheDatasheet) {
  const Machine machine = h100_with(temp_file("achieved_rates_elementwise.json", kElementwiseRules));
  const OpCostModel model(machine);
  // relu over 64 · 256 · 14 · 14 floats: 3,211,264 values, 8 bytes each (read and written) = 25,690,112 B at
  // 0.9 · 3350 GB/s = 8.52077 us of body; at fraction 0.5 and 3 us fixed: 3 + 17.0415 = 20.0415 us.
  const Graph relu = one_layer(R"({"type": "relu"})");
  const NodeId r = last_node(relu);
  EXPECT_NEAR(model.slice_seconds(relu, r, whole(relu, r)) * 1e6, 3 + 2 * 25690112 / (0.9 * 3350e3), 1e-6);
  const OpCostModel::RulePricing pricing = model.rule_pricing(relu, r, whole(relu, r));
  EXPECT_TRUE(pricing.learned);
  EXPECT_NEAR(pricing.body_seconds * 1e6, 25690112 / (0.9 * 3350e3), 1e-6);
  EXPECT_NEAR(pricing.datasheet_seconds * 1e6, 25690112 / (0.9 * 3350e3) + 5, 1e-6);
  // A conv2d has no rule in this file: the datasheet rules price it, as on h100-nvlink-8 with the rules turned off.
  const Graph conv = one_layer(R"({"type": "conv2d", "filters": 256, "kernel": 3, "padding": 1})");
  const NodeId c = last_node(conv);
  const OpCostModel datasheet(h100_with("none"));
  EXPECT_EQ(model.slice_seconds(conv, c, whole(conv, c)), datasheet.slice_seconds(conv, c, whole(conv, c)));
  EXPECT_FALSE(model.rule_pricing(conv, c, whole(conv, c)).learned);
}

TEST(AchievedRates, ACalibrationStillOverridesThem) {
  const Graph relu = one_layer(R"({"type": "relu"})");
  const NodeId r = last_node(relu);
  const std::string signature = op_signature(relu, r, whole(relu, r));
  const Machine machine = h100_with(temp_file("achieved_rates_elementwise2.json", kElementwiseRules),
                                    R"({"op_times_us": {")" + signature + R"(": 42.5}})");
  EXPECT_NEAR(OpCostModel(machine).slice_seconds(relu, r, whole(relu, r)), 42.5e-6, 1e-12);
}

TEST(AchievedRates, BadFilesSayWhatIsWrong) {
  const auto problem = [](const std::string& text) {
    try {
      parse_achieved_rates(text, "r.json");
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(problem(R"({"schema": "x", "families": {}})").find("not a rules file this build reads"), std::string::npos);
  EXPECT_NE(problem(R"({"schema": "splitscope.achieved-rates/1", "families": {"join": {"log_fraction": 0,
             "slope": 0, "fixed_us": -1, "body_us_range": [1, 2]}}})")
                .find("fixed_us"),
            std::string::npos);
  EXPECT_NE(problem(R"({"schema": "splitscope.achieved-rates/1", "families": {"join": {"log_fraction": 0,
             "slope": 0, "fixed_us": 1, "body_us_range": [3, 2]}}})")
                .find("min is above max"),
            std::string::npos);
}

std::string source_root() {
  const char* root = std::getenv("SPLITSCOPE_SOURCE_ROOT");
  return root != nullptr ? root : ".";
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Every op the H100's and the H200's calibrations timed (whole GPU) that a
// learned rule prices on the GPU presets (which take the rules by default): per family, over both GPUs,
// the median and the max |predicted / measured - 1| must be within what the
// rules file states (scripts/fit-achieved-rates computes both the same way).
TEST(AchievedRates, ReproduceTheMeasurementsTheyCameFromWithinTheStatedError) {
  const std::shared_ptr<const AchievedRates> rules = load_achieved_rates("achieved-rates");
  const nlohmann::json file = nlohmann::json::parse(std::ifstream(rules->source()));
  std::map<std::string, std::vector<double>> errors;
  for (const auto& [machine_name, calibration] :
       {std::pair{"h100-nvlink-8", "reports/h100-80gb-hbm3/calibration.json"},
        std::pair{"h200-nvlink-8", "reports/h200/calibration.json"}}) {
    const OpCostModel model(load_machine(machine_name));
    std::map<std::string, double> measured;
    const nlohmann::json table = nlohmann::json::parse(std::ifstream(source_root() + "/" + calibration));
    for (const auto& op : table.at("op_times")) {
      measured[op["signature"].get<std::string>()] = op["seconds"].get<double>();
    }
    std::map<std::string, bool> seen;
    for (const std::string& network : zoo_names(ZooShelf::kNetworks)) {
      const auto graph = std::make_shared<const Graph>(lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, network))));
      for (const OpSample& sample : op_samples_from_graph(graph, {2, 4}, {2, 4, 8})) {
        const auto it = measured.find(sample.signature);
        if (it == measured.end() || seen[sample.signature]) continue;
        seen[sample.signature] = true;
        const OpCostModel::RulePricing pricing = model.rule_pricing(*sample.graph, sample.node, sample.slice);
        if (!pricing.learned || pricing.body_seconds <= 0) continue;
        errors[pricing.families.front()].push_back(std::abs(pricing.seconds / it->second - 1));
      }
    }
  }
  ASSERT_FALSE(errors.empty());
  for (const auto& [family, family_errors] : errors) {
    SCOPED_TRACE(family);
    const nlohmann::json& stated = file["families"][family];
    ASSERT_TRUE(stated.is_object());
    EXPECT_EQ(static_cast<int64_t>(family_errors.size()), stated["n"].get<int64_t>());
    EXPECT_LE(median_of(family_errors), stated["median_error"].get<double>() + 1e-4);
    EXPECT_LE(*std::max_element(family_errors.begin(), family_errors.end()), stated["max_error"].get<double>() + 1e-4);
  }
}

// The simulator's own error (sim/costs/model_error.hpp): the rules' median errors, weighted by the time they priced.
std::shared_ptr<const AchievedRates> rules_with_errors(std::optional<double> product_error,
                                                       std::optional<double> elementwise_error) {
  std::map<std::string, AchievedRateRule> rules;
  for (const char* family : {"product.fma.skinny", "product.fma.wide"}) {
    rules[family] = rule(0.5, 0, 5, 1e-3, 1e6);
    rules[family].median_error = product_error;
  }
  if (elementwise_error) {
    rules["elementwise"] = rule(0.8, 0, 3, 1e-3, 1e6);
    rules["elementwise"].median_error = elementwise_error;
  }
  return std::make_shared<const AchievedRates>("test rules", std::move(rules));
}

Plan single_mlp_plan() {
  const auto graph = std::make_shared<const Graph>(lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, "mlp-small"))));
  PartitionOptions options;
  options.devices = 1;
  return make_partitioner("single")->partition(graph, options);
}

TEST(ModelError, IsTheRulesErrorsWeightedByTheTimeTheyPriced) {
  Machine machine = load_machine("h100-nvlink-8");
  const Plan plan = single_mlp_plan();
  // Every family 20% off: the plan is 20% off, over all of its compute (dense, relu, softmax).
  machine.device.achieved_rates = rules_with_errors(0.2, 0.2);
  const auto all = plan_model_error(OpCostModel(machine), plan);
  ASSERT_TRUE(all);
  EXPECT_NEAR(all->relative, 0.2, 1e-12);
  EXPECT_NEAR(all->covered_share, 1.0, 1e-12);
  // Products 10% off, element-wise kinds with no rule (the datasheet prices them, with no measured error):
  // 10%, over the products' share of the time.
  machine.device.achieved_rates = rules_with_errors(0.1, std::nullopt);
  const OpCostModel costs(machine);
  double dense_seconds = 0;
  double all_seconds = 0;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCompute) continue;
    const double seconds = costs.op_seconds(plan, op);
    all_seconds += seconds;
    if (plan.graph->node(op.node).kind == OpKind::kDense) dense_seconds += seconds;
  }
  const auto products = plan_model_error(costs, plan);
  ASSERT_TRUE(products);
  EXPECT_NEAR(products->relative, 0.1, 1e-12);
  EXPECT_NEAR(products->covered_share, dense_seconds / all_seconds, 1e-12);
  EXPECT_LT(products->covered_share, 1.0);
  // Rules that state no error, and a machine with no rules, give none.
  machine.device.achieved_rates = rules_with_errors(std::nullopt, std::nullopt);
  EXPECT_FALSE(plan_model_error(OpCostModel(machine), plan));
  machine.device.achieved_rates = nullptr;
  EXPECT_FALSE(plan_model_error(OpCostModel(machine), plan));
}

TEST(ModelError, ThePresetsRulesFileStatesOne) {
  // models/rules/achieved-rates.json gives each family the median error of its fit; a preset's plan carries it.
  const auto error = plan_model_error(OpCostModel(load_machine("h100-nvlink-8")), single_mlp_plan());
  ASSERT_TRUE(error);
  EXPECT_GT(error->relative, 0.0);
  EXPECT_LT(error->relative, 1.0);
}

}  // namespace
}  // namespace splitscope
