// `splitscope search` and `--plan FILE` from the command line: the searched
// plan runs with the time the search predicted, a plan file round-trips
// through run, a plan for another network or device count is exit 2, and
// the --html page draws every priced plan where --json puts it.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace search_command_test {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("splitscope_search_test_" + name)).string();
}

/// The "makespan: ..." line of a run's text output.
std::string makespan_line(const std::string& out) {
  const size_t at = out.find("makespan: ");
  if (at == std::string::npos) return "";
  return out.substr(at, out.find('\n', at) - at);
}

/// The attributes of every `<TAG class="CSS_CLASS" ...>` element of `page` (class matched whole).
std::vector<std::map<std::string, std::string>> svg_elements(const std::string& page, const std::string& tag,
                                                             const std::string& css_class) {
  std::vector<std::map<std::string, std::string>> found;
  const std::regex element("<" + tag + " ([^>]*)>");
  const std::regex attribute(R"re(([a-z][a-z0-9-]*)="([^"]*)")re");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), element); it != std::sregex_iterator(); ++it) {
    const std::string attributes = (*it)[1];
    std::map<std::string, std::string> values;
    for (auto a = std::sregex_iterator(attributes.begin(), attributes.end(), attribute); a != std::sregex_iterator();
         ++a) {
      values[(*a)[1]] = (*a)[2];
    }
    if (values["class"] == css_class) found.push_back(values);
  }
  return found;
}

/// A plan of `--json`: its predicted time and its peak on the fullest device.
std::pair<double, double> time_and_peak(const nlohmann::json& plan) {
  double peak = 0;
  for (const auto& bytes : plan["peak_memory_bytes"]) peak = std::max(peak, bytes.get<double>());
  return {plan["makespan_us"].get<double>(), peak};
}

TEST(SearchCommand, TheSearchedPlanRunsInThePredictedTime) {
  const std::string file = temp_path("best.json");
  const CommandResult search =
      run_splitscope("search mlp-small --devices 4 --machine h100-nvlink-8 --train --out " + file);
  ASSERT_EQ(search.exit_code, 0) << search.err;
  EXPECT_NE(search.out.find("best: "), std::string::npos) << search.out;
  EXPECT_NE(search.out.find("Pareto front"), std::string::npos) << search.out;
  std::ifstream in(file);
  const auto plan = nlohmann::json::parse(in);
  EXPECT_EQ(plan["schema"], "splitscope.plan/1");
  EXPECT_EQ(plan["network"]["name"], "mlp-small");
  EXPECT_EQ(plan["devices"], 4);
  const double predicted_us = plan["predicted"]["makespan_us"].get<double>();
  const CommandResult run =
      run_splitscope("run mlp-small --plan " + file + " --train --backend sim --machine h100-nvlink-8 --report " +
                     file + ".report.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::ifstream report_in(file + ".report.json");
  const auto report = nlohmann::json::parse(report_in);
  EXPECT_NEAR(report["makespan_ms"]["median"].get<double>() * 1000, predicted_us, 1e-6 * predicted_us)
      << report["makespan_ms"].dump();
  std::filesystem::remove(file);
  std::filesystem::remove(file + ".report.json");
}

TEST(SearchCommand, APlanFileRunsAsTheCommandLineThatMadeIt) {
  const std::string file = temp_path("pipeline.json");
  const std::string options = "--strategy pipeline --devices 4 --replicas 2 --microbatches 2 --train --schedule 1f1b";
  ASSERT_EQ(run_splitscope("plan cnn-small " + options + " --out " + file).exit_code, 0);
  // `plan` balanced the stages by the roofline; the file pins the cuts it got,
  // which a run on a machine (balancing by its own op times) is given here.
  std::ifstream in(file);
  const auto plan = nlohmann::json::parse(in);
  const auto starts = plan["strategy"]["stage_starts"].get<std::vector<int>>();
  ASSERT_EQ(starts.size(), size_t{2});
  const std::string stages = " --stages 0," + std::to_string(starts[1]);
  const CommandResult direct =
      run_splitscope("run cnn-small " + options + stages + " --backend sim --machine h100-nvlink-8");
  const CommandResult from_file =
      run_splitscope("run cnn-small --plan " + file + " --train --backend sim --machine h100-nvlink-8");
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_FALSE(makespan_line(direct.out).empty());
  EXPECT_EQ(makespan_line(from_file.out), makespan_line(direct.out));
  std::filesystem::remove(file);
}

TEST(SearchCommand, APlanFileKeepsItsPrecision) {
  // An amp plan read back runs at amp (its bytes and the machine's bf16
  // peak), as the command line that made it does; another --precision is refused.
  const std::string file = temp_path("amp.json");
  const std::string options = "--strategy data --devices 2 --train --precision amp";
  ASSERT_EQ(run_splitscope("plan mlp-small " + options + " --out " + file).exit_code, 0);
  std::ifstream in(file);
  EXPECT_EQ(nlohmann::json::parse(in)["strategy"]["precision"], "amp");
  const CommandResult direct = run_splitscope("run mlp-small " + options + " --backend sim --machine h100-nvlink-8");
  const CommandResult from_file =
      run_splitscope("run mlp-small --plan " + file + " --train --backend sim --machine h100-nvlink-8");
  const CommandResult at_fp32 =
      run_splitscope("run mlp-small --strategy data --devices 2 --train --backend sim --machine h100-nvlink-8");
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  ASSERT_EQ(at_fp32.exit_code, 0) << at_fp32.err;
  EXPECT_FALSE(makespan_line(direct.out).empty());
  EXPECT_EQ(makespan_line(from_file.out), makespan_line(direct.out));
  EXPECT_NE(makespan_line(at_fp32.out), makespan_line(direct.out)) << "amp must price differently from fp32";
  const CommandResult contradicted = run_splitscope("run mlp-small --plan " + file +
                                                    " --train --precision bf16 --backend sim --machine h100-nvlink-8");
  EXPECT_EQ(contradicted.exit_code, 2);
  EXPECT_NE(contradicted.err.find("holds a plan at amp; drop --precision"), std::string::npos) << contradicted.err;
  std::filesystem::remove(file);
}

TEST(SearchCommand, APlanForAnotherNetworkOrDeviceCountIsExitTwoNamingWhatDiffers) {
  const std::string file = temp_path("tensor.json");
  ASSERT_EQ(run_splitscope("plan mlp-small --strategy tensor --devices 2 --out " + file).exit_code, 0);
  const CommandResult network = run_splitscope("run cnn-small --plan " + file + " --backend sim --machine h100-nvlink-8");
  EXPECT_EQ(network.exit_code, 2);
  EXPECT_NE(network.err.find("network: the plan is for mlp-small, not cnn-small"), std::string::npos) << network.err;
  const CommandResult devices =
      run_splitscope("run mlp-small --plan " + file + " --devices 4 --backend sim --machine h100-nvlink-8");
  EXPECT_EQ(devices.exit_code, 2);
  EXPECT_NE(devices.err.find("devices: the plan is for 2 devices, not 4"), std::string::npos) << devices.err;
  const CommandResult both = run_splitscope("run mlp-small --plan " + file + " --strategy data");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--strategy: comes from the plan file"), std::string::npos) << both.err;
  const CommandResult compared =
      run_splitscope("compare mlp-small --plan " + file + " --backend sim --machine h100-nvlink-8 --strategies tensor");
  ASSERT_EQ(compared.exit_code, 0) << compared.err;
  EXPECT_NE(compared.out.find("plan: tensor"), std::string::npos) << compared.out;
  std::filesystem::remove(file);
}

TEST(SearchCommand, BadInputIsExitTwo) {
  const CommandResult objective = run_splitscope("search mlp-small --devices 2 --machine h100-nvlink-8 --objective fast");
  EXPECT_EQ(objective.exit_code, 2);
  EXPECT_NE(objective.err.find("--objective: must be time, throughput or memory"), std::string::npos) << objective.err;
  const CommandResult devices = run_splitscope("search mlp-small --devices 9 --machine h100-nvlink-8");
  EXPECT_EQ(devices.exit_code, 2);
  EXPECT_NE(devices.err.find("h100-nvlink-8 has 8 devices"), std::string::npos) << devices.err;
  const CommandResult schedule =
      run_splitscope("search mlp-small --devices 2 --machine h100-nvlink-8 --train --schedule 1f1b");
  EXPECT_EQ(schedule.exit_code, 2);
  const CommandResult budget = run_splitscope("search mlp-small --devices 2 --machine h100-nvlink-8 --budget-s 0");
  EXPECT_EQ(budget.exit_code, 2);
  const CommandResult stages = run_splitscope("plan mlp-small --strategy tensor --devices 2 --stages 0,3");
  EXPECT_EQ(stages.exit_code, 2);
}

TEST(SearchCommand, NothingFittingIsAFailureWithNoFile) {
  const std::string file = temp_path("none.json");
  std::filesystem::remove(file);
  const CommandResult result = run_splitscope("search mlp --devices 2 --machine h100-nvlink-8 --memory-limit 0.001 --out " + file);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("no plan of mlp over 2 devices fits"), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(file));
}

TEST(SearchCommand, CompareWithSearchRunsTheSearchedPlanBesideTheNamedOnes) {
  const CommandResult result =
      run_splitscope("compare mlp-small --devices 4 --train --backend sim --machine h100-nvlink-8 --with-search");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("search: "), std::string::npos) << result.out;
  const CommandResult unpriced = run_splitscope("compare mlp-small --devices 2 --backend cpu --predict-on none --with-search");
  EXPECT_EQ(unpriced.exit_code, 2);
}

TEST(SearchCommand, TheHtmlPageDrawsEveryPricedPlanWhereTheJsonPutsIt) {
  // --top larger than the plans: --json's top then lists every priced plan
  // that fits, which is what the chart draws. A memory limit that refuses
  // some plans, so that the line is drawn and the best is not the fastest named.
  const std::string dir = fresh_temp_dir("search-html");
  const CommandResult result = run_splitscope(
      "search cnn --devices 8 --machine h100-nvlink-8 --train --memory-limit 0.5 --top 1000 --json --html " + dir +
      "/s.html");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  ASSERT_LT(json["top"].size(), size_t{1000});
  ASSERT_GT(json["refused"].get<int>(), 0) << "the memory limit should refuse some plans";
  const std::string page = read_text_file(dir + "/s.html");
  ASSERT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(page.substr(page.size() - 8), "</html>\n");

  // One dot per priced plan, each with its plan's numbers; the dots of
  // named strategies are the named plans of --json.
  auto dots = svg_elements(page, "circle", "plan");
  const auto named_dots = svg_elements(page, "circle", "plan named");
  dots.insert(dots.end(), named_dots.begin(), named_dots.end());
  ASSERT_EQ(dots.size(), json["top"].size());
  ASSERT_GT(dots.size(), size_t{10});
  std::multiset<std::pair<double, double>> drawn, priced;
  for (const auto& dot : dots) {
    drawn.insert({std::stod(dot.at("data-makespan-us")), std::stod(dot.at("data-peak-memory-bytes"))});
  }
  size_t named_plans = 0;
  for (const auto& plan : json["top"]) {
    priced.insert(time_and_peak(plan));
    named_plans += plan["named"].get<bool>() ? 1 : 0;
  }
  EXPECT_EQ(drawn, priced);
  EXPECT_EQ(named_dots.size(), named_plans);

  // Drawn where their numbers say: x rises with the time and y falls with
  // the memory, both linearly (one scale for every dot; 0.1 px of rounding).
  const auto slowest = std::max_element(dots.begin(), dots.end(), [](const auto& a, const auto& b) {
    return std::stod(a.at("data-makespan-us")) < std::stod(b.at("data-makespan-us"));
  });
  const auto fullest = std::max_element(dots.begin(), dots.end(), [](const auto& a, const auto& b) {
    return std::stod(a.at("data-peak-memory-bytes")) < std::stod(b.at("data-peak-memory-bytes"));
  });
  const auto& fastest = *std::min_element(dots.begin(), dots.end(), [](const auto& a, const auto& b) {
    return std::stod(a.at("data-makespan-us")) < std::stod(b.at("data-makespan-us"));
  });
  const auto& emptiest = *std::min_element(dots.begin(), dots.end(), [](const auto& a, const auto& b) {
    return std::stod(a.at("data-peak-memory-bytes")) < std::stod(b.at("data-peak-memory-bytes"));
  });
  const auto scale = [](const auto& low, const auto& high, const char* value, const char* pixel) {
    return (std::stod(high.at(pixel)) - std::stod(low.at(pixel))) / (std::stod(high.at(value)) - std::stod(low.at(value)));
  };
  const double x_per_us = scale(fastest, *slowest, "data-makespan-us", "cx");
  const double y_per_byte = scale(emptiest, *fullest, "data-peak-memory-bytes", "cy");
  ASSERT_GT(x_per_us, 0);
  ASSERT_LT(y_per_byte, 0) << "more memory is higher up";
  const auto x_of = [&](double us) { return std::stod(fastest.at("cx")) + x_per_us * (us - std::stod(fastest.at("data-makespan-us"))); };
  const auto y_of = [&](double bytes) {
    return std::stod(emptiest.at("cy")) + y_per_byte * (bytes - std::stod(emptiest.at("data-peak-memory-bytes")));
  };
  for (const auto& dot : dots) {
    EXPECT_NEAR(std::stod(dot.at("cx")), x_of(std::stod(dot.at("data-makespan-us"))), 0.15) << dot.at("data-plan");
    EXPECT_NEAR(std::stod(dot.at("cy")), y_of(std::stod(dot.at("data-peak-memory-bytes"))), 0.15) << dot.at("data-plan");
  }

  // The best plan's ring at the best plan's time and memory; the best named
  // strategy's at its own; the memory limit's line at 0.5 GiB.
  const auto best = svg_elements(page, "circle", "best");
  ASSERT_EQ(best.size(), 1u);
  const auto [best_us, best_bytes] = time_and_peak(json["best"]);
  EXPECT_EQ(std::stod(best[0].at("data-makespan-us")), best_us);
  EXPECT_EQ(std::stod(best[0].at("data-peak-memory-bytes")), best_bytes);
  EXPECT_EQ(best[0].at("data-plan"), json["best"]["plan"].get<std::string>());
  EXPECT_NEAR(std::stod(best[0].at("cx")), x_of(best_us), 0.15);
  EXPECT_NEAR(std::stod(best[0].at("cy")), y_of(best_bytes), 0.15);
  EXPECT_NE(page.find(">best: " + json["best"]["plan"].get<std::string>() + "</text>"), std::string::npos);
  ASSERT_FALSE(json["best_named"]["plan"] == json["best"]["plan"]) << "pick a problem a mix wins";
  const auto named = svg_elements(page, "circle", "best-named");
  ASSERT_EQ(named.size(), 1u);
  const auto [named_us, named_bytes] = time_and_peak(json["best_named"]);
  EXPECT_NEAR(std::stod(named[0].at("cx")), x_of(named_us), 0.15);
  EXPECT_NEAR(std::stod(named[0].at("cy")), y_of(named_bytes), 0.15);
  const auto limit = svg_elements(page, "line", "memory-limit");
  ASSERT_EQ(limit.size(), 1u);
  EXPECT_EQ(std::stod(limit[0].at("data-memory-limit-bytes")), double(int64_t{1} << 29));
  EXPECT_NEAR(std::stod(limit[0].at("y1")), y_of(double(int64_t{1} << 29)), 0.15);

  // The front joined, fastest first, through the dots of --json's pareto.
  const auto front = svg_elements(page, "polyline", "front");
  ASSERT_EQ(front.size(), 1u);
  std::istringstream points(front[0].at("points"));
  std::vector<std::pair<double, double>> joined;
  double px = 0, py = 0;
  char comma = 0;
  while (points >> px >> comma >> py) joined.emplace_back(px, py);
  ASSERT_EQ(joined.size(), json["pareto"].size());
  for (size_t i = 0; i < joined.size(); ++i) {
    const auto [us, bytes] = time_and_peak(json["pareto"][i]);
    EXPECT_NEAR(joined[i].first, x_of(us), 0.15) << i;
    EXPECT_NEAR(joined[i].second, y_of(bytes), 0.15) << i;
  }

  // The best plan's breakdown and why it wins, as --json says it.
  std::string why = json["why"].get<std::string>();
  EXPECT_NE(page.find(why), std::string::npos) << why;
  EXPECT_NE(page.find("<h2>Best plan: " + json["best"]["plan"].get<std::string>() + "</h2>"), std::string::npos);
  // --json keeps stderr quiet, as it does for --out.
  EXPECT_EQ(result.err.find("wrote"), std::string::npos) << result.err;
  const CommandResult told = run_splitscope("search mlp-small --devices 2 --machine h100-nvlink-8 --html " + dir + "/t.html");
  ASSERT_EQ(told.exit_code, 0) << told.err;
  EXPECT_EQ(told.err, "wrote " + dir + "/t.html (--html)\n");
  EXPECT_EQ(read_text_file(dir + "/t.html").find("class=\"memory-limit\""), std::string::npos)
      << "no line for the default limit, the machine's whole memory";
}

TEST(SearchCommand, TheHtmlPageNeverReplacesAnInputOrAnotherOutput) {
  const std::string dir = fresh_temp_dir("search-html-inputs");
  const std::string network = dir + "/net.json";
  std::filesystem::copy_file(std::string(std::getenv("SPLITSCOPE_MODELS")) + "/networks/mlp-small.json", network);
  const std::string before = read_text_file(network);
  const CommandResult input =
      run_splitscope("search " + network + " --devices 2 --machine h100-nvlink-8 --html " + network);
  EXPECT_EQ(input.exit_code, 2);
  EXPECT_EQ(input.err, "error: --html: " + network +
                           " is an input of this command; writing there would destroy it: give another file name\n");
  EXPECT_TRUE(input.out.empty()) << "refused before the search";
  EXPECT_EQ(read_text_file(network), before);
  const CommandResult both = run_splitscope("search mlp-small --devices 2 --machine h100-nvlink-8 --out " + dir +
                                            "/p.json --html " + dir + "/./p.json");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("is also the file of --out; give each output its own file"), std::string::npos) << both.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/p.json"));
  if (std::filesystem::exists("/dev/full")) {
    // A page that cannot be written leaves no plan file either.
    const CommandResult full = run_splitscope("search mlp-small --devices 2 --machine h100-nvlink-8 --out " + dir +
                                              "/q.json --html /dev/full");
    EXPECT_EQ(full.exit_code, 1);
    EXPECT_NE(full.err.find("--html: writing /dev/full failed"), std::string::npos) << full.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/q.json"));
  }
}

}  // namespace
}  // namespace search_command_test
}  // namespace splitscope::testing
