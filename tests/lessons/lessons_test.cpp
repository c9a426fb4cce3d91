// The lessons' verdicts and flip points held to the numbers they come from:
// each verdict follows from its own speedups and the documented margins, a
// flip point is where the verdict's predicate really changes (one step
// either side of it), and the wavefront never beats its closed form.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "../cli/cli_test_support.hpp"
#include "lessons/experiment.hpp"
#include "lessons/lesson.hpp"
#include "lessons/lesson_list.hpp"
#include "demo/rnn_demo_model.hpp"
#include "exec/ensemble_run.hpp"
#include "ir/lower.hpp"
#include "lessons/margins.hpp"
#include "lessons/ps_experiment.hpp"
#include "lessons/measured_check.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_traffic.hpp"
#include "report/svg_xy_chart.hpp"
#include "demo/wavefront.hpp"
#include "ir/model_parser.hpp"
#include "ir/zoo.hpp"
#include "util/json_text.hpp"
#include "sim/costs/fused_rnn_prediction.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {
namespace {

TEST(FindFlip, FindsTheThresholdOfAStepWithinItsPrecision) {
  const auto at_least = [](double threshold) { return [threshold](double x) { return x >= threshold; }; };
  const auto value = find_flip(1, 1000, at_least(37.5));
  ASSERT_TRUE(value.has_value());
  EXPECT_GE(*value, 37.5);
  EXPECT_LE(*value, 37.5 * 1.01);
  EXPECT_EQ(find_flip(1, 64, at_least(17), true), 17.0);
  EXPECT_FALSE(find_flip(1, 64, at_least(100), true).has_value()) << "never true in the range";
  EXPECT_FALSE(find_flip(1, 64, at_least(0), true).has_value()) << "true already at the low end";
}

TEST(FindFlipPoint, DrawsEveryValueTriedAndFlipsWhereTheQuantityCrossesItsThreshold) {
  int evaluations = 0;
  std::map<double, int> seen;
  FlipSearch search;
  search.low = 1;
  search.high = 1000;
  search.threshold = 2.5;
  const auto quantity = [&](double x) {
    ++evaluations;
    ++seen[x];
    return std::log10(x);  // reaches 2.5 at x = 316.2
  };
  const FlipPoint flip = find_flip_point(search, quantity);
  ASSERT_TRUE(flip.value.has_value());
  EXPECT_GE(*flip.value, std::pow(10.0, 2.5));
  EXPECT_LE(*flip.value, std::pow(10.0, 2.5) * 1.01);
  EXPECT_EQ(flip.threshold, 2.5);
  EXPECT_EQ(static_cast<int>(flip.curve.size()), evaluations) << "every value tried is drawn, once";
  for (const auto& [x, count] : seen) EXPECT_EQ(count, 1) << x;
  EXPECT_GE(flip.curve.size(), static_cast<size_t>(search.samples)) << "the spread over the range";
  EXPECT_EQ(flip.curve.front().first, 1);
  EXPECT_EQ(flip.curve.back().first, 1000);
  bool flip_drawn = false;
  for (size_t i = 0; i < flip.curve.size(); ++i) {
    EXPECT_DOUBLE_EQ(flip.curve[i].second, std::log10(flip.curve[i].first));
    if (i > 0) {
      EXPECT_LT(flip.curve[i - 1].first, flip.curve[i].first);
    }
    flip_drawn = flip_drawn || flip.curve[i].first == *flip.value;
  }
  EXPECT_TRUE(flip_drawn) << "the flip is one of the curve's points";
  // Falling below the threshold, over whole numbers.
  FlipSearch falling = search;
  falling.integer = true;
  falling.reaches = false;
  falling.threshold = 0.5;
  const FlipPoint below = find_flip_point(falling, [](double x) { return 10 / x; });  // < 0.5 from x = 21
  EXPECT_EQ(below.value, 21.0);
}

TEST(Lessons, TheTableListsEachClaimOnceInOrder) {
  int previous = 0;
  for (const Lesson& lesson : lessons()) {
    EXPECT_GT(lesson.number, previous);
    previous = lesson.number;
    EXPECT_FALSE(lesson.claim.empty());
  }
}

TEST(Lessons, ALayerPerDeviceVerdictAndFlipFollowFromTheSimulatedTimes) {
  const LessonResult result = lessons()[0].run({});
  ASSERT_EQ(result.number, 1);
  const double speedup = result.numbers["speedup"].get<double>();
  EXPECT_NEAR(speedup, result.numbers["single_ms"].get<double>() / result.numbers["layer_split_ms"].get<double>(),
              1e-12);
  EXPECT_EQ(result.verdict, speedup < kGainMargin ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold);
  // A layer per device: at most the one device's speed (it serialises the layers).
  EXPECT_LE(speedup, 1.0 + 1e-9);
  ASSERT_TRUE(result.flip.has_value());
  if (result.flip->value) {
    const int m = static_cast<int>(*result.flip->value);
    const Machine machine = load_machine("h100-nvlink-8");
    const auto graph = lesson_graph("mlp", false);
    const double single = simulate_trial(graph, "single", 1, machine).makespan_us;
    EXPECT_GE(single / simulate_trial(graph, "pipeline", 4, machine, m).makespan_us, kGainMargin);
    EXPECT_LT(single / simulate_trial(graph, "pipeline", 4, machine, m - 1).makespan_us, kGainMargin);
  }
}

TEST(Lessons, TheSlicedLayersFlipIsTheBandwidthWhereTheSplitStartsToPay) {
  const LessonResult result = lesson_sliced_layers({});
  const double speedup = result.numbers["speedup"].get<double>();
  EXPECT_EQ(result.verdict, speedup < kGainMargin ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold);
  ASSERT_TRUE(result.flip && result.flip->value);
  const double gbps = *result.flip->value;
  const Machine machine = load_machine("h100-pcie-4");
  const auto graph = lesson_graph("mlp", false);
  const auto gain = [&](double bandwidth) { return speedup_at_bandwidth(graph, "vertical", 4, machine, bandwidth); };
  EXPECT_GE(gain(gbps), kGainMargin);
  EXPECT_LT(gain(gbps / 1.02), kGainMargin);
  // Slower links, a slower split.
  EXPECT_LE(speedup, result.numbers["speedup_on_nvlink"].get<double>());
}

TEST(Lessons, TheWavefrontNeverBeatsItsClosedForm) {
  const LessonResult result = lesson_rnn_wavefront({});
  EXPECT_DOUBLE_EQ(result.numbers["ideal_speedup"].get<double>(), 4.0 * 32 / (32 + 4 - 1));
  const double speedup = result.numbers["speedup"].get<double>();
  EXPECT_LE(speedup, result.numbers["ideal_speedup"].get<double>());
  EXPECT_EQ(result.verdict, speedup >= kGainMargin ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold);
}

/// The most devices busy at once in the wavefront of the zoo's lstm over
/// `steps` steps, 2 layers on each of 4 devices of h100-nvlink-8.
int lstm_wavefront_peak(int steps) {
  nlohmann::json doc = nlohmann::json::parse(read_input_file(resolve_zoo_file(ZooShelf::kNetworks, "lstm")));
  doc["input"][0] = steps;
  const auto graph = std::make_shared<const Graph>(lower(parse_model_text(doc.dump(), "test")));
  const Trial split = simulate_trial(graph, "horizontal", 4, load_machine("h100-nvlink-8"));
  return analyse_wavefront(*split.plan, split.timeline).peak_busy;
}

TEST(Lessons, TheWavefrontFillsFromTheStepCountItNames) {
  const LessonResult result = lesson_rnn_wavefront({});
  ASSERT_TRUE(result.flip && result.flip->value);
  const int steps = static_cast<int>(*result.flip->value);
  // Closed form: a step is in one layer at a time, so fewer steps than
  // devices can never keep every device busy.
  EXPECT_GE(steps, 4);
  EXPECT_EQ(lstm_wavefront_peak(steps), 4);
  EXPECT_LT(lstm_wavefront_peak(steps - 1), 4);
  EXPECT_EQ(result.numbers["peak_busy_devices"].get<int>(), lstm_wavefront_peak(32));
  for (const auto& [x, busy] : result.flip->curve) {
    EXPECT_LE(busy, std::min(x, 4.0)) << "at most one device per step in flight, and 4 devices";
  }
}

TEST(Lessons, DataParallelEfficiencyFlipsAtTheBatchItNames) {
  const LessonResult result = lesson_data_parallel({});
  const double efficiency = result.numbers["efficiency"].get<double>();
  EXPECT_NEAR(efficiency, result.numbers["speedup"].get<double>() / 8, 1e-12);
  EXPECT_EQ(result.verdict, efficiency >= kEfficientScaling ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold);
  ASSERT_TRUE(result.flip && result.flip->value);
  const int64_t batch = static_cast<int64_t>(*result.flip->value);
  const Machine machine = load_machine("h100-nvlink-8");
  const auto efficiency_at = [&](int64_t b) {
    const auto graph = lesson_graph("cnn", true, b);
    return simulate_trial(graph, "single", 1, machine).makespan_us /
           simulate_trial(graph, "data", 8, machine).makespan_us / 8;
  };
  EXPECT_GE(efficiency_at(batch), kEfficientScaling);
  EXPECT_LT(efficiency_at(batch - 1), kEfficientScaling);
}

TEST(Lessons, SaturationPeaksWhereTheCurveDoes) {
  const LessonResult result = lesson_saturation({});
  const auto& curve = result.numbers["curve"];
  ASSERT_FALSE(curve.empty());
  double best = 0;
  int best_devices = 0;
  for (const auto& point : curve) {
    const double rate = point["samples_per_s"].get<double>();
    EXPECT_NEAR(rate, 256 / (point["step_ms"].get<double>() * 1e-3), rate * 1e-9);
    if (rate > best) {
      best = rate;
      best_devices = point["devices"].get<int>();
    }
  }
  EXPECT_EQ(result.numbers["peak_devices"].get<int>(), best_devices);
  const int last = curve.back()["devices"].get<int>();
  EXPECT_EQ(result.verdict, best_devices < last ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold);
}


/// The split's speedup over the fused stack for `demo rnn`'s stack of 4
/// LSTM layers of `hidden`, 64 steps, batch 64, built as the demo builds it.
double demo_stack_split_speedup(const Machine& machine, int64_t hidden) {
  RnnDemoShape shape;
  shape.hidden = hidden;
  shape.steps = 64;
  shape.batch = 64;
  const auto graph = std::make_shared<const Graph>(lower(rnn_demo_model(shape)));
  return predict_fused_rnn(machine, *graph, 0).seconds * 1e6 /
         simulate_trial(graph, "horizontal", 4, machine).makespan_us;
}

TEST(Lessons, TheFusedStackVerdictAndFlipFollowFromTheDemosStack) {
  const LessonResult result = lesson_fused_rnn({});
  const double speedup = result.numbers["split_speedup_vs_fused"].get<double>();
  EXPECT_NEAR(speedup, result.numbers["fused_ms"].get<double>() / result.numbers["split_ms"].get<double>(), 1e-12);
  const LessonVerdict expected = speedup <= 1 - kUncertainMargin ? LessonVerdict::kHolds
                                 : speedup < kGainMargin         ? LessonVerdict::kUncertain
                                                                 : LessonVerdict::kDoesNotHold;
  EXPECT_EQ(result.verdict, expected);
  // The same stack as `demo rnn` builds it gives the same times.
  const Machine machine = load_machine("h100-nvlink-8");
  EXPECT_NEAR(demo_stack_split_speedup(machine, 1024), speedup, speedup * 1e-9);
  // The split's four devices cannot beat their summed compute spread evenly.
  EXPECT_GE(result.numbers["split_ms"].get<double>() * 4,
            result.numbers["split_compute_ms"].get<double>() * (1 - 1e-9));
  ASSERT_TRUE(result.flip.has_value());
  if (result.flip->value) {
    const int64_t hidden = static_cast<int64_t>(*result.flip->value);
    EXPECT_GE(demo_stack_split_speedup(machine, hidden), kGainMargin);
    EXPECT_LT(demo_stack_split_speedup(machine, hidden - 1), kGainMargin);
  }
}

/// AlexNet's channel split over 12 devices of `machine`, under topology
/// placement: the speedup over the default mapping.
double topology_placement_speedup(const Plan& plan, const Machine& machine) {
  Simulator simulator(machine, PlacementMode::kTopology);
  RunOptions run;
  run.warmup = 0;
  run.repeats = 1;
  const RunResult result = simulator.run(plan, run);
  return result.info.placement.default_makespan_us.value() / result.timelines.at(0).makespan_us();
}

TEST(Lessons, PlacementMovesFewerBytesAcrossNodesAndFlipsAtTheNicRateItNames) {
  const LessonResult result = lesson_placement({});
  const double speedup = result.numbers["speedup"].get<double>();
  EXPECT_NEAR(speedup, result.numbers["default_ms"].get<double>() / result.numbers["topology_ms"].get<double>(),
              1e-12);
  const LessonVerdict expected = speedup >= kGainMargin             ? LessonVerdict::kHolds
                                 : speedup > 1 - kUncertainMargin ? LessonVerdict::kUncertain
                                                                  : LessonVerdict::kDoesNotHold;
  EXPECT_EQ(result.verdict, expected);
  // The default mapping's bytes across nodes, counted from the plan's own traffic
  // on two nodes of 8: plan device i on machine device i.
  PartitionOptions options;
  options.devices = 12;
  const Plan plan = make_plan(*make_partitioner("vertical"), lesson_graph("cnn", false), options);
  const DeviceTraffic traffic = plan_traffic(plan);
  EXPECT_EQ(result.numbers["default_cross_node_bytes"].get<int64_t>(),
            cross_node_bytes(traffic, default_device_map(12), NodeShape{2, 8}));
  EXPECT_LT(result.numbers["topology_cross_node_bytes"].get<int64_t>(),
            result.numbers["default_cross_node_bytes"].get<int64_t>());
  ASSERT_TRUE(result.flip && result.flip->value);
  const double gbps = *result.flip->value;
  Machine machine = load_machine("2x8-h100-ib");
  EXPECT_LT(gbps, 100000);
  EXPECT_GT(gbps, machine.topology.nic.bandwidth_gbps) << "the preset's NICs are where placement pays";
  machine.topology.nic.bandwidth_gbps = gbps;
  EXPECT_LT(topology_placement_speedup(plan, machine), kGainMargin);
  machine.topology.nic.bandwidth_gbps = gbps / 1.02;
  EXPECT_GE(topology_placement_speedup(plan, machine), kGainMargin);
}

TEST(Lessons, TheEnsembleAnswersByItsDeadlineAndFlipsAtTheLatestFirstMember) {
  const LessonResult result = lesson_ensemble_deadline({});
  const double deadline = result.numbers["deadline_ms"].get<double>();
  EXPECT_DOUBLE_EQ(deadline, result.numbers["slowest_member_ms"].get<double>());
  int in_time = 0, with_drops = 0;
  double latest_first_member = 0;
  for (const auto& request : result.numbers["requests"]) {
    const int used = request["members_used"].get<int>();
    const double answer = request["answer_ms"].get<double>();
    const double all_members = request["all_members_ms"].get<double>();
    EXPECT_EQ(used + static_cast<int>(request["dropped"].size()), 3);
    // The aggregator's rule: with every member in, it answers with the last
    // of them; with one dropped, at the deadline.
    if (used == 3) {
      EXPECT_DOUBLE_EQ(answer, all_members);
      EXPECT_LE(all_members, deadline);
    } else {
      EXPECT_GT(all_members, deadline);
      EXPECT_DOUBLE_EQ(answer, deadline);
    }
    in_time += used > 0 && answer <= deadline ? 1 : 0;
    with_drops += used < 3 ? 1 : 0;
    latest_first_member = std::max(latest_first_member, request["first_member_ms"].get<double>());
  }
  EXPECT_EQ(result.numbers["answered_in_time"].get<int>(), in_time);
  EXPECT_EQ(result.numbers["requests_with_drops"].get<int>(), with_drops);
  const int requests = static_cast<int>(result.numbers["requests"].size());
  const LessonVerdict expected = in_time < requests ? LessonVerdict::kDoesNotHold
                                 : with_drops > 0   ? LessonVerdict::kHolds
                                                    : LessonVerdict::kUncertain;
  EXPECT_EQ(result.verdict, expected);
  // Below the latest first member some request has no member in time.
  ASSERT_TRUE(result.flip && result.flip->value);
  EXPECT_GE(*result.flip->value, latest_first_member);
  EXPECT_LE(*result.flip->value, latest_first_member * 1.01);
}


TEST(Lessons, TheSearchsBestSplitIsNeverSlowerThanTheNamedOnesAndDiffersAcrossNetworksAndMachines) {
  const LessonResult result = lesson_best_split({});
  const auto& rows = result.numbers["rows"];
  ASSERT_EQ(rows.size(), 8u) << "4 networks on 2 machines";
  std::map<std::string, std::set<std::string>> on_machine, of_network;
  for (const auto& row : rows) {
    const double search_ms = row["search_ms"].get<double>(), named_ms = row["best_named_ms"].get<double>();
    EXPECT_LE(search_ms, named_ms) << row.dump();
    EXPECT_NEAR(row["speedup_over_named"].get<double>(), named_ms / search_ms, 1e-12);
    EXPECT_FALSE(row["budget_ran_out"].get<bool>()) << "the search is deterministic only when it finishes";
    on_machine[row["machine"].get<std::string>()].insert(row["search_kind"].get<std::string>());
    of_network[row["network"].get<std::string>()].insert(row["search_kind"].get<std::string>());
    // The named strategy's time is the lesson's own simulation of it.
    const std::string named = row["best_named"].get<std::string>();
    if (named == "single" || named == "tensor" || named == "data" || named == "horizontal") {
      const int devices = named == "single" ? 1 : row["devices"].get<int>();
      const Trial trial = simulate_trial(lesson_graph(row["network"].get<std::string>(), false), named, devices,
                                         load_machine(row["machine"].get<std::string>()));
      EXPECT_NEAR(trial.makespan_us / 1e3, named_ms, named_ms * 1e-9) << row.dump();
    }
  }
  bool by_architecture = false, by_machine = false;
  for (const auto& [machine, kinds] : on_machine) by_architecture = by_architecture || kinds.size() > 1;
  for (const auto& [network, kinds] : of_network) by_machine = by_machine || kinds.size() > 1;
  EXPECT_EQ(result.numbers["depends_on_architecture"].get<bool>(), by_architecture);
  EXPECT_EQ(result.numbers["depends_on_machine"].get<bool>(), by_machine);
  EXPECT_EQ(result.verdict, by_architecture && by_machine ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold);
}

TEST(MeasuredGraph, CutsTheZoosNetworkToTheWidthAndBatchAsked) {
  // The zoo's mlp, 8 dense layers of 8192 and a classifier of 1000, at width 1024.
  const auto graph = measured_graph("mlp", 8192, 1024, 64, false);
  EXPECT_EQ(graph->batch(), 64);
  EXPECT_EQ(graph->total_params(), 8 * (1024 * 1024 + 1024) + 1024 * 1000 + 1000);
}

TEST(Lessons, TheMeasuredSlicedLayersVerdictFollowsFromTheMeasuredTimes) {
  LessonSettings settings;
  settings.measure = true;
  const LessonResult result = lesson_sliced_layers(settings);
  ASSERT_TRUE(result.measured.has_value());
  const auto& numbers = result.measured->numbers;
  EXPECT_EQ(numbers["repeats"].get<int>(), kMeasuredRepeats);
  EXPECT_GT(numbers["baseline_ms"].get<double>(), 0);
  EXPECT_GT(numbers["compared_ms"].get<double>(), 0);
  const double speedup = numbers["speedup"].get<double>();
  EXPECT_DOUBLE_EQ(speedup, numbers["baseline_ms"].get<double>() / numbers["compared_ms"].get<double>());
  EXPECT_EQ(result.measured->verdict, speedup < kGainMargin ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold);
  EXPECT_FALSE(lesson_sliced_layers({}).measured.has_value()) << "the cpu runs only with --measure";
}

/// A final loss as the lesson writes it: null for a run that diverged.
double final_loss_of(const nlohmann::ordered_json& loss) {
  return loss.is_null() ? std::numeric_limits<double>::infinity() : loss.get<double>();
}

TEST(Lessons, AsyncStalenessVerdictFollowsFromTheMeasuredStalenessAndLosses) {
  const LessonResult result = lesson_async_staleness({});
  const int workers = result.numbers["workers"].get<int>();
  EXPECT_EQ(result.numbers["expected_staleness"].get<int>(), workers - 1);
  // The mean is the histogram's.
  double applied = 0, weighted = 0;
  const auto& histogram = result.numbers["async_staleness_histogram"];
  for (size_t s = 0; s < histogram.size(); ++s) {
    applied += histogram[s].get<double>();
    weighted += static_cast<double>(s) * histogram[s].get<double>();
  }
  if (applied == 0) {
    // Async diverged at lr and at lr / 4 alike: no staleness was reported.
    EXPECT_EQ(result.verdict, LessonVerdict::kDoesNotHold);
    return;
  }
  const double staleness = result.numbers["async_staleness_mean"].get<double>();
  EXPECT_NEAR(staleness, weighted / applied, 1e-9);
  EXPECT_EQ(result.numbers["sync_staleness_mean"].get<double>(), 0.0) << "sync takes only the current step's";
  const double sync_loss = final_loss_of(result.numbers["sync_final_loss"]);
  const double async_loss = final_loss_of(result.numbers["async_final_loss"]);
  bool any_helps = false;
  for (const auto& mitigation : result.numbers["mitigations"]) {
    const bool helps = final_loss_of(mitigation["final_loss"]) < async_loss / kGainMargin;
    EXPECT_EQ(mitigation["helps"].get<bool>(), helps) << mitigation["mitigation"];
    any_helps = any_helps || helps;
  }
  const bool near = std::abs(staleness - (workers - 1)) <= 0.25 * (workers - 1);
  const bool damaged = std::isfinite(sync_loss) && async_loss > sync_loss * kGainMargin;
  EXPECT_EQ(result.verdict, near && damaged && any_helps ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold);
  ASSERT_TRUE(result.flip.has_value());
  if (result.flip->value) {
    EXPECT_GT(*result.flip->value, 0.001);
    EXPECT_LE(*result.flip->value, 0.1);
  }
  // The page's loss curves: sync, async and each mitigation, and the final
  // losses are the mean of their last windows.
  ASSERT_EQ(result.figures.curves.size(), 1u);
  const auto& series = result.figures.curves[0].series;
  ASSERT_EQ(series.size(), 2 + result.numbers["mitigations"].size());
  const auto final_of = [&](const LessonSeries& line) {
    const size_t windows = result.numbers["final_loss_windows"].get<size_t>();
    if (line.points.size() < windows) return std::numeric_limits<double>::infinity();
    double sum = 0;
    for (size_t i = line.points.size() - windows; i < line.points.size(); ++i) sum += line.points[i].second;
    return sum / static_cast<double>(windows);
  };
  EXPECT_NEAR(final_of(series[0]), sync_loss, sync_loss * 1e-9);
  if (std::isfinite(async_loss)) {
    EXPECT_NEAR(final_of(series[1]), async_loss, async_loss * 1e-9);
  } else {
    EXPECT_TRUE(series[1].points.empty()) << "a diverged run has no curve";
  }
  for (size_t i = 0; i < series[0].points.size(); ++i) EXPECT_EQ(series[0].points[i].first, double(i + 1));
}

/// On the simulator, sync's time per update over 1 spare's for the lesson's
/// setup with each worker step's compute × a lognormal factor of `sigma`.
double simulated_spare_gain(double sigma) {
  const Machine machine = load_machine("h100-nvlink-8");
  PsSetup sync;
  sync.workers = 4;
  sync.ps.steps = 30;
  sync.jitter_sigma = sigma;
  PsSetup spare = sync;
  spare.ps.mode = PsMode::kSpare;
  spare.ps.spare = 1;
  return simulate_ps(sync, machine).ms_per_update() / simulate_ps(spare, machine).ms_per_update();
}

TEST(Lessons, SpareReplicasVerdictFollowsFromTheMeasuredUpdatesAndFlipsWhereTheSimulatorSays) {
  const LessonResult result = lesson_spare_replicas({});
  const double speedup = result.numbers["speedup"].get<double>();
  EXPECT_NEAR(speedup,
              result.numbers["sync_ms_per_update"].get<double>() / result.numbers["spare_ms_per_update"].get<double>(),
              1e-12);
  const LessonVerdict expected = speedup >= kGainMargin             ? LessonVerdict::kHolds
                                 : speedup > 1 - kUncertainMargin ? LessonVerdict::kUncertain
                                                                  : LessonVerdict::kDoesNotHold;
  EXPECT_EQ(result.verdict, expected);
  EXPECT_EQ(result.numbers["sync_updates"].get<int>(), 30);
  EXPECT_EQ(result.numbers["spare_updates"].get<int>(), 30);
  // Every sync update waits for the held-back worker's step.
  EXPECT_GE(result.numbers["sync_ms_per_update"].get<double>(), result.numbers["straggler_delay_ms"].get<double>());
  EXPECT_NEAR(result.numbers["simulated_speedup_without_noise"].get<double>(), simulated_spare_gain(0), 1e-12);
  ASSERT_TRUE(result.flip && result.flip->value);
  const double sigma = *result.flip->value;
  EXPECT_GE(simulated_spare_gain(sigma), kGainMargin);
  EXPECT_LT(simulated_spare_gain(sigma / 1.02), kGainMargin);
  // The loss curves against wall time end at each run's last update.
  ASSERT_EQ(result.figures.curves.size(), 1u);
  const auto& curves = result.figures.curves[0].series;
  ASSERT_EQ(curves.size(), 2u);
  ASSERT_FALSE(curves[0].points.empty());
  ASSERT_FALSE(curves[1].points.empty());
  const double sync_wall = result.numbers["sync_ms_per_update"].get<double>() * 30;
  const double spare_wall = result.numbers["spare_ms_per_update"].get<double>() * 30;
  EXPECT_NEAR(curves[0].points.back().first, sync_wall, sync_wall * 1e-9);
  EXPECT_NEAR(curves[1].points.back().first, spare_wall, spare_wall * 1e-9);
}

}  // namespace
}  // namespace splitscope

namespace splitscope::testing {
namespace {

TEST(LessonsCommand, WritesEachLessonsVerdictAsJson) {
  const std::string dir = fresh_temp_dir("lessons-json");
  const CommandResult result = run_splitscope("lessons --only 3,9 --quiet --json " + dir + "/lessons.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto doc = nlohmann::json::parse(read_text_file(dir + "/lessons.json"));
  EXPECT_EQ(doc["schema"], "splitscope.lessons/1");
  ASSERT_EQ(doc["lessons"].size(), 2u);
  EXPECT_EQ(doc["lessons"][0]["number"], 3);
  EXPECT_EQ(doc["lessons"][1]["number"], 9);
  const LessonResult nine = lesson_saturation({});
  EXPECT_EQ(doc["lessons"][1]["verdict"], std::string(to_string(nine.verdict)));
  EXPECT_EQ(doc["lessons"][1]["flip"]["value"], nine.flip->value.value_or(-1));
}

/// The attribute `name` of the first element of `tag` with `css_class` in `html` from `from` on.
struct SvgElement {
  size_t at = std::string::npos;
  std::string text;
};

SvgElement find_element(const std::string& html, const std::string& tag, const std::string& css_class, size_t from,
                        size_t until) {
  const std::string opening = "<" + tag + " class=\"" + css_class + "\"";
  const size_t at = html.find(opening, from);
  if (at == std::string::npos || at >= until) return {};
  return {at, html.substr(at, html.find('>', at) - at)};
}

double attribute(const SvgElement& element, const std::string& name) {
  std::smatch match;
  const std::regex pattern(" " + name + "=\"([^\"]*)\"");
  if (!std::regex_search(element.text, match, pattern)) {
    ADD_FAILURE() << "no " << name << " in " << element.text;
    return std::nan("");
  }
  return std::stod(match[1].str());
}

TEST(LessonsCommand, ThePageHasAPanelPerLessonAndMarksEachFlipWhereTheJsonSaysItIs) {
  const std::string dir = fresh_temp_dir("lessons-html");
  const CommandResult result =
      run_splitscope("lessons --only 1,2,4,9 --json " + dir + "/lessons.json --html " + dir + "/lessons.html");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("wrote " + dir + "/lessons.html (--html)"), std::string::npos) << result.err;
  const auto doc = nlohmann::json::parse(read_text_file(dir + "/lessons.json"));
  const std::string html = read_text_file(dir + "/lessons.html");
  // One panel per lesson run, in order, each with its verdict.
  std::vector<size_t> panels;
  for (size_t at = html.find("<section class=\"lesson\""); at != std::string::npos;
       at = html.find("<section class=\"lesson\"", at + 1)) {
    panels.push_back(at);
  }
  ASSERT_EQ(panels.size(), doc["lessons"].size());
  panels.push_back(html.size());
  int marked = 0;
  for (size_t i = 0; i < doc["lessons"].size(); ++i) {
    const auto& lesson = doc["lessons"][i];
    const SvgElement section = find_element(html, "section", "lesson", panels[i], panels[i + 1]);
    EXPECT_EQ(attribute(section, "data-lesson"), lesson["number"].get<double>());
    EXPECT_NE(section.text.find("data-verdict=\"" + lesson["verdict"].get<std::string>() + "\""), std::string::npos);
    const SvgElement mark = find_element(html, "line", "mark", panels[i], panels[i + 1]);
    if (lesson["flip"].is_null() || lesson["flip"]["value"].is_null()) {
      EXPECT_EQ(mark.at, std::string::npos) << "lesson " << lesson["number"] << " does not flip: nothing marked";
      continue;
    }
    ASSERT_NE(mark.at, std::string::npos) << "lesson " << lesson["number"];
    ++marked;
    const double flip = lesson["flip"]["value"].get<double>();
    EXPECT_DOUBLE_EQ(attribute(mark, "data-x"), flip);
    // The mark's pixel is the flip's value on the chart's own axis.
    const size_t chart_at = html.rfind("<svg class=\"xy-chart\"", mark.at);
    ASSERT_GT(chart_at, panels[i]);
    const SvgElement chart{chart_at, html.substr(chart_at, html.find('>', chart_at) - chart_at)};
    const double low = attribute(chart, "data-x-low"), high = attribute(chart, "data-x-high");
    EXPECT_EQ(low, lesson["flip"]["range"][0].get<double>());
    EXPECT_EQ(high, lesson["flip"]["range"][1].get<double>());
    const double left = attribute(chart, "data-plot-left"), width = attribute(chart, "data-plot-width");
    const double pixel = xy_chart_pixel(flip, low, high, attribute(chart, "data-log-x") == 1, left, width);
    EXPECT_NEAR(attribute(mark, "x1"), pixel, 0.006);
    EXPECT_GE(attribute(mark, "x1"), left);
    EXPECT_LE(attribute(mark, "x1"), left + width);
    // One point drawn per value the JSON's curve has.
    size_t points = 0;
    const size_t chart_end = html.find("</svg>", chart_at);
    for (size_t at = html.find("<circle", chart_at); at < chart_end; at = html.find("<circle", at + 1)) ++points;
    EXPECT_EQ(points, lesson["flip"]["curve"].size());
  }
  EXPECT_GE(marked, 3) << "lessons 2, 4 and 9 flip in their ranges";
}

TEST(LessonsCommand, ThePageIsNotWrittenOverAnInput) {
  const CommandResult result = run_splitscope("lessons --only 3 --machine h100-nvlink-8 --html " +
                                              resolve_zoo_file(ZooShelf::kMachines, "h100-nvlink-8"));
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("--html"), std::string::npos) << result.err;
  EXPECT_TRUE(result.out.empty()) << "refused before any lesson runs";
}

TEST(LessonsCommand, ALessonThatDoesNotRunHereIsBadInput) {
  const CommandResult result = run_splitscope("lessons --only 13");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("there is no lesson 13 here"), std::string::npos) << result.err;
  EXPECT_TRUE(result.out.empty()) << "no lesson runs before the options are checked";
}

}  // namespace
}  // namespace splitscope::testing
