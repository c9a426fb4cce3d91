// `splitscope calibrate` end to end, without a GPU: it refuses (exit 3) and
// writes nothing; from a recorded calibration (--from) it writes machine
// files that load, simulate every zoo network's plans with the measured op
// times, and serve `compare --predict-on`; bad calibrations are bad input.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "../cli/cli_test_support.hpp"
#include "calibration/calibration_file.hpp"
#include "calibration_fixture.hpp"
#include "exec/cpu/cpu_calibration.hpp"
#include "exec/cuda/calibration.hpp"
#include "exec/cuda_backend.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/op_signature.hpp"
#include "ir/zoo.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "sim/machine/calibrated_machine.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace calibrate_command_test {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::fresh_temp_dir;
using testing::hand_calibration;
using testing::run_splitscope;

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::vector<std::string> files_in(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::shared_ptr<const Graph> zoo_graph(const std::string& name) {
  return std::make_shared<const Graph>(lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, name))));
}

/// The hand calibration, plus a made-up time for every op slice `calibrate`
/// would time in the zoo's networks (the same samples it takes, split 2 and 4
/// ways, in 2, 4 and 8 micro-batches): 1 µs per 10 MFLOP + 10 MB, plus
/// 3 µs, so that every one is distinct from the roofline.
calibration::CalibrationResult zoo_calibration() {
  calibration::CalibrationResult result = hand_calibration();
  result.op_times.clear();
  std::set<std::string> seen;
  for (const std::string& name : zoo_names(ZooShelf::kNetworks)) {
    for (const gpu::OpSample& sample : gpu::op_samples_from_graph(zoo_graph(name), {2, 4}, {2, 4, 8})) {
      if (!seen.insert(sample.signature).second) continue;  // timed once, as calibrate does
      const SliceCost cost = slice_cost(*sample.graph, sample.node, sample.slice);
      const int64_t bytes = cost.bytes_read + cost.bytes_written;
      const double seconds = 3e-6 + (static_cast<double>(cost.flops) / 1e7 + static_cast<double>(bytes) / 1e7) * 1e-6;
      result.op_times.push_back({sample.signature, name, cost.flops, bytes, seconds, seconds, seconds});
    }
  }
  return result;
}

TEST(CalibrateCommand, WithoutAGpuExitsThreeAndWritesNothing) {
  if (cuda_gpu_available()) GTEST_SKIP() << "a GPU is present: the refusal is not expected here";
  const std::string folder = fresh_temp_dir("calibrate_refused");
  const CommandResult result = run_splitscope("calibrate --quick --out " + folder + "/gpu.json");
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.err.find("--backend sim"), std::string::npos) << result.err;
  EXPECT_TRUE(files_in(folder).empty());  // no machine, no -link-host machine, no raw calibration
}

TEST(CalibrateCommand, FromARecordedCalibrationWritesMachinesThatSimulateEveryZooPlan) {
  const std::string folder = fresh_temp_dir("calibrate_from");
  const calibration::CalibrationResult recorded = zoo_calibration();
  const std::string raw = folder + "/gpu.calibration.json";
  write_text(raw, calibration::calibration_to_json(recorded));
  const CommandResult result =
      run_splitscope("calibrate --from " + raw + " --out " + folder + "/gpu.json --machine-devices 4");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(files_in(folder), (std::vector<std::string>{"gpu-link-host.json", "gpu.calibration.json", "gpu.json"}));
  EXPECT_NE(result.out.find("gpu-link-host.json (link host): 4 devices, one bus shared by 4, 25.0 GB/s, 20.0 us"),
            std::string::npos)
      << result.out;

  for (const auto& [file, link] : {std::pair{"gpu.json", CalibratedLink::kVirtualDevice},
                                   std::pair{"gpu-link-host.json", CalibratedLink::kVirtualHost}}) {
    SCOPED_TRACE(file);
    const Machine machine = load_machine(folder + "/" + file);
    // What the command wrote is what the library makes of the recording.
    CalibratedMachineOptions options;
    options.name = fs::path(file).stem().string();
    options.link = link;
    options.devices = 4;
    options.calibration_file = raw;
    options.source = raw;
    EXPECT_EQ(machine_to_json(machine), machine_to_json(machine_from_calibration(recorded, options)));
    EXPECT_EQ(machine.calibration.op_times_us.size(), recorded.op_times.size());

    // Every zoo network, every strategy on 2 and 4 devices (pipelined in 4 and
    // 8 micro-batches; compare's default for the batch-64 networks is 8): it
    // simulates, and every compute op is priced by its measured time (all of
    // them were timed).
    const Simulator simulator(machine);
    for (const std::string& name : zoo_names(ZooShelf::kNetworks)) {
      const auto graph = zoo_graph(name);
      for (const std::string& strategy : strategy_names()) {
        for (int microbatches : strategy == "pipeline" ? std::vector<int>{4, 8} : std::vector<int>{1})
          for (int devices : {2, 4}) {
            SCOPED_TRACE(name + " " + strategy + " n" + std::to_string(devices) + " m" + std::to_string(microbatches));
            PartitionOptions partition;
            partition.devices = std::min(devices, make_partitioner(strategy)->max_devices(*graph));
            partition.microbatches = static_cast<int>(std::min<int64_t>(microbatches, graph->batch()));
            const Plan plan = make_partitioner(strategy)->partition(graph, partition);
            check(plan);
            const Timeline timeline = simulator.simulate(plan);
            EXPECT_GT(timeline.makespan_us(), 0.0);
            for (const Span& span : timeline.spans) {
              if (span.op < 0) continue;
              const PlanOp& op = plan.op(span.op);
              if (op.role != OpRole::kCompute) continue;
              const double measured = machine.calibration.op_times_us.at(op_signature(*graph, op.node, op.slice));
              ASSERT_NEAR(span.duration_us(), measured, measured * 1e-9);
            }
          }
      }
    }
  }
}

TEST(CalibrateCommand, CompareShowsThePredictionOnTheCalibratedMachine) {
  // What gpu-check does after calibrating: a measured compare with the
  // calibrated machine's prediction beside it (here measured on the cpu).
  const std::string folder = fresh_temp_dir("calibrate_compare");
  write_text(folder + "/raw.json", calibration::calibration_to_json(zoo_calibration()));
  ASSERT_EQ(run_splitscope("calibrate --from " + folder + "/raw.json --out " + folder + "/gpu.json").exit_code, 0);
  const CommandResult result = run_splitscope(
      "compare mlp-small --devices 2 --backend cpu --repeat 1 --warmup 0 -q "
      "--predict-on " +
      folder + "/gpu.json --report " + folder + "/c.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto report = nlohmann::json::parse(testing::read_text_file(folder + "/c.json"));
  ASSERT_EQ(report.at("predicted").size(), 1u) << report.dump(1);
  EXPECT_EQ(report.at("predicted")[0].at("machine"), "gpu") << report.at("predicted")[0].dump(1);
}

TEST(CalibrateCommand, TheRawCalibrationGoesWhereAsked) {
  // --calibration-out is for measuring runs; with --from the recording is already kept.
  const CommandResult result = run_splitscope("calibrate --from x.json --calibration-out y.json --out z.json");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("excludes"), std::string::npos) << result.err;
  // ... and never onto the machine file (checked before anything is measured).
  const CommandResult clash = run_splitscope("calibrate --out /tmp/m.json --calibration-out /tmp/./m.json");
  EXPECT_EQ(clash.exit_code, 2) << clash.err;
  EXPECT_NE(clash.err.find("--calibration-out: /tmp/./m.json (/tmp/m.json) is also the file of --out"), std::string::npos)
      << clash.err;
}

TEST(CalibrateCommand, BadCalibrationsAreBadInputAndWriteNothing) {
  const std::string folder = fresh_temp_dir("calibrate_bad");
  // A machine file is not a calibration.
  write_text(folder + "/machine.json", machine_to_json(load_machine("h100-nvlink-8")));
  CommandResult result = run_splitscope("calibrate --from " + folder + "/machine.json --out " + folder + "/a.json");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("schema: 'splitscope.machine/1' is not a calibration"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("--backend sim --machine"), std::string::npos) << result.err;

  // No device-to-device series: no memory bandwidth, so no machine.
  calibration::CalibrationResult partial = hand_calibration();
  partial.copies.erase(partial.copies.begin());
  write_text(folder + "/partial.json", calibration::calibration_to_json(partial));
  result = run_splitscope("calibrate --from " + folder + "/partial.json --out " + folder + "/b.json");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("partial.json: copies: no device_to_device series"), std::string::npos) << result.err;

  // A malformed number names its JSON path.
  auto doc = nlohmann::json::parse(calibration::calibration_to_json(hand_calibration()));
  doc["copies"][3]["points"][0]["bytes"] = 0;
  write_text(folder + "/zero.json", doc.dump());
  result = run_splitscope("calibrate --from " + folder + "/zero.json --out " + folder + "/c.json");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("zero.json: copies[3].points[0].bytes: must be"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("got 0"), std::string::npos) << result.err;

  // Measuring options do not go with --from; --out must be a .json file.
  result = run_splitscope("calibrate --from " + folder + "/zero.json --dtype tf32 --out " + folder + "/d.json");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  result = run_splitscope("calibrate --from " + folder + "/zero.json --out " + folder + "/e.txt");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("must be a .json file"), std::string::npos) << result.err;

  EXPECT_EQ(files_in(folder), (std::vector<std::string>{"machine.json", "partial.json", "zero.json"}));
}

// --- recorded calibrations read back ---

TEST(CalibrationResultFile, ReadsBackWhatCalibrateWrites) {
  calibration::CalibrationResult result = testing::hand_calibration_with_peers();
  const std::string text = calibration::calibration_to_json(result);
  const calibration::CalibrationResult again = calibration::parse_calibration_result(text, "raw.json");
  EXPECT_EQ(calibration::calibration_to_json(again), text);
  EXPECT_EQ(again.device_name, "Test GPU");
  EXPECT_EQ(again.copies.size(), result.copies.size());
  EXPECT_EQ(again.copies.back().dst_device, 3);
  EXPECT_TRUE(again.copies.back().peer_access);
  EXPECT_EQ(again.op_times.size(), result.op_times.size());
  EXPECT_EQ(again.launch.device_seconds_per_kernel, 2e-6);
  EXPECT_EQ(again.partitions, 1);  // the whole GPU, written and read as such
  EXPECT_EQ(again.op_times.front().running, 0);  // not said, and left unsaid
}

TEST(CalibrationResultFile, ACpuOpTimesSharesAndRunningDevicesReadBack) {
  calibration::CalibrationResult result = testing::hand_calibration();
  result.op_times.front().shares = 2;
  result.op_times.front().running = 1;
  const std::string text = calibration::calibration_to_json(result);
  const calibration::CalibrationResult again = calibration::parse_calibration_result(text, "raw.json");
  EXPECT_EQ(again.op_times.front().shares, 2);
  EXPECT_EQ(again.op_times.front().running, 1);
  EXPECT_EQ(calibration::calibration_to_json(again), text);
}

TEST(CalibrationResultFile, APartitionCalibrationMakesMachinesThatSayWhatTheyPredict) {
  calibration::CalibrationResult result = testing::hand_calibration();
  result.partitions = 4;
  result.sm_count = 32;
  const std::string text = calibration::calibration_to_json(result);
  const calibration::CalibrationResult again = calibration::parse_calibration_result(text, "raw.json");
  EXPECT_EQ(again.partitions, 4);
  EXPECT_EQ(calibration::calibration_to_json(again), text);

  const std::string folder = fresh_temp_dir("calibrate_partitions");
  write_text(folder + "/raw.json", text);
  const CommandResult made = run_splitscope("calibrate --from " + folder + "/raw.json --out " + folder + "/v4.json");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_EQ(made.out.find("each device is the whole GPU"), std::string::npos) << made.out;  // it is not
  const Machine machine = load_machine(folder + "/v4.json");
  EXPECT_EQ(machine.device.sm_count, 32);
  EXPECT_NE(machine.comment.find("one of 4 green-context partitions of the GPU (32 SMs)"), std::string::npos)
      << machine.comment;
  EXPECT_NE(machine.comment.find("predicts `--virtual` runs on 4 devices"), std::string::npos) << machine.comment;

  // A partition count the option cannot take is bad input, on any machine, before any measuring.
  for (const std::string bad : {"0", "-2"}) {
    const CommandResult refused = run_splitscope("calibrate --partitions " + bad + " --out " + folder + "/x.json");
    EXPECT_EQ(refused.exit_code, 2) << bad << ": " << refused.err;
    EXPECT_NE(refused.err.find("--partitions"), std::string::npos) << refused.err;
  }
  EXPECT_EQ(files_in(folder), (std::vector<std::string>{"raw.json", "v4-link-host.json", "v4.json"}));
}

TEST(CalibrationResultFile, NotJsonOrMissingFieldsAreNamed) {
  try {
    calibration::parse_calibration_result("{\"schema\": ", "broken.json");
    FAIL();
  } catch (const InputError& error) {
    EXPECT_NE(error.problem().find("not valid JSON"), std::string::npos) << error.what();
  }
  auto doc = nlohmann::json::parse(calibration::calibration_to_json(hand_calibration()));
  doc.erase("gemm");
  try {
    calibration::parse_calibration_result(doc.dump(), "nogemm.json");
    FAIL();
  } catch (const InputError& error) {
    EXPECT_EQ(error.field(), "gemm");
    EXPECT_NE(error.problem().find("missing required field"), std::string::npos) << error.what();
  }
  EXPECT_THROW(calibration::load_calibration_result("/nonexistent/raw.json"), InputError);
}

TEST(CalibrationResultFile, RawCalibrationsBesideMachinesAreNotListedAsMachines) {
  // `calibrate --out models/machines/x.json` leaves x.calibration.json there.
  const std::string root = fresh_temp_dir("zoo_with_raw");
  fs::create_directories(root + "/machines");
  fs::create_directories(root + "/networks");
  write_text(root + "/machines/gpu.json", "{}");
  write_text(root + "/machines/gpu.calibration.json", "{}");
  const char* previous = std::getenv("SPLITSCOPE_MODELS");
  const std::string kept = previous != nullptr ? previous : "";
  setenv("SPLITSCOPE_MODELS", root.c_str(), 1);
  const std::vector<std::string> names = zoo_names(ZooShelf::kMachines);
  if (previous != nullptr) {
    setenv("SPLITSCOPE_MODELS", kept.c_str(), 1);
  } else {
    unsetenv("SPLITSCOPE_MODELS");
  }
  EXPECT_EQ(names, std::vector<std::string>{"gpu"});
}

}  // namespace
}  // namespace calibrate_command_test
}  // namespace splitscope

namespace splitscope {
namespace calibrate_command_test {
namespace {

// --- the cpu backend: this host measured, a pooled machine made of it ---

TEST(CpuCalibration, ShareCountsHalveFromTheWholeHostDownToOneThread) {
  EXPECT_EQ(cpu_share_counts(1), (std::vector<int>{1}));
  EXPECT_EQ(cpu_share_counts(2), (std::vector<int>{2, 1}));
  EXPECT_EQ(cpu_share_counts(8), (std::vector<int>{8, 4, 2, 1}));
  EXPECT_EQ(cpu_share_counts(6), (std::vector<int>{6, 3, 1}));  // 6 / 4 devices: one whole share each
}

TEST(CpuCalibration, AHandCalibrationMakesAPooledMachineKeyedByShares) {
  calibration::CalibrationResult result = testing::hand_calibration();
  result.device_name = "Test CPU";
  for (calibration::OpTime op : std::vector<calibration::OpTime>(result.op_times)) {
    op.shares = 4;
    op.seconds /= 2;  // twice as fast on a device of four threads
    result.op_times.push_back(op);
  }
  CalibratedMachineOptions options;
  options.name = "host";
  options.calibration_file = "host.calibration.json";
  const Machine machine = cpu_machine_from_calibration(result, options);
  EXPECT_TRUE(machine.pooled);
  EXPECT_EQ(machine.devices, 4);  // the largest share count timed: one device per hardware thread
  EXPECT_EQ(machine.device.name, "Test CPU, one thread");
  // hand_calibration's dense op, 42 µs on one share and 21 µs on four.
  EXPECT_DOUBLE_EQ(machine.calibration.op_times_us.at("dense:b64:k8192:n8192"), 42);
  EXPECT_DOUBLE_EQ(machine.calibration.op_times_us.at("dense:b64:k8192:n8192|shares=4"), 21);
  // The efficiencies are fitted on the one-share times alone: as for the GPU machine.
  EXPECT_DOUBLE_EQ(machine.device.efficiency.at("dense"), 0.5);
  EXPECT_EQ(machine.topology.kind, TopologyKind::kSwitch);
  EXPECT_NE(machine.comment.find("host.calibration.json"), std::string::npos) << machine.comment;
  // A plan on one device prices the four-share time.
  EXPECT_DOUBLE_EQ(machine_for_plan(machine, 1).calibration.op_times_us.at("dense:b64:k8192:n8192"), 21);
  // Without a lane hand-off measured, each copy pays the condition-variable hand-off (3 µs in hand_calibration).
  EXPECT_DOUBLE_EQ(machine.device.lane_handoff_us, 0);
  const double copy_latency_us = machine.topology.link.latency_us - 3;
  // The launch overhead is the gap between consecutive ops (device_seconds_per_kernel, 2 µs).
  EXPECT_DOUBLE_EQ(machine.device.launch_overhead_us, 2);
  // With one, the copy pays it and so does the compute op after it (lane_handoff_us).
  result.lane_handoff = {12, 3e-6};
  const Machine handed = cpu_machine_from_calibration(result, options);
  EXPECT_DOUBLE_EQ(handed.device.lane_handoff_us, 3);
  EXPECT_DOUBLE_EQ(handed.topology.link.latency_us, copy_latency_us + 3);
  EXPECT_NE(handed.comment.find("3.0 us over 12 gaps"), std::string::npos) << handed.comment;
  EXPECT_DOUBLE_EQ(parse_machine_text(machine_to_json(handed), "handed.json").device.lane_handoff_us, 3);
}

TEST(CpuCalibration, TimesAloneBecomeTheEfficienciesAndTheirRatioToTimesBusyTheContention) {
  // Two hardware threads: each op on one share with both devices busy, on
  // one share alone, and on the two shares of the one device.
  calibration::CalibrationResult result = testing::hand_calibration();
  result.device_name = "Test CPU";
  std::vector<calibration::OpTime> ops;
  for (const calibration::OpTime& measured : result.op_times) {
    calibration::OpTime busy = measured;
    busy.running = 2;
    calibration::OpTime alone = measured;
    alone.running = 1;
    alone.seconds = measured.seconds / 1.6;
    calibration::OpTime whole = measured;
    whole.shares = 2;
    whole.running = 1;
    whole.seconds = measured.seconds / 1.25;
    ops.insert(ops.end(), {busy, alone, whole});
  }
  result.op_times = ops;
  CalibratedMachineOptions options;
  options.name = "host";
  const Machine machine = cpu_machine_from_calibration(result, options);
  EXPECT_EQ(machine.devices, 2);
  const std::string dense = "dense:b64:k8192:n8192";
  EXPECT_DOUBLE_EQ(machine.calibration.op_times_us.at(dense), 42);
  EXPECT_DOUBLE_EQ(machine.calibration.op_times_us.at(dense + "|alone"), 42 / 1.6);
  EXPECT_DOUBLE_EQ(machine.calibration.op_times_us.at(dense + "|shares=2"), 42 / 1.25);
  EXPECT_FALSE(machine.calibration.op_times_us.count(dense + "|alone|shares=2"));  // one device: no one beside it
  // Every op is 1.6 times slower busy than alone: so is every kind, and their sum.
  EXPECT_DOUBLE_EQ(machine.device.contention.at("dense"), 1.6);
  EXPECT_DOUBLE_EQ(machine.device.contention.at("default"), 1.6);
  EXPECT_FALSE(machine.device.contention.count("dense|shares=2"));
  // The efficiency is fitted on the one-share times alone: the two dense ops'
  // rooflines at 50 TFLOP/s (20 + 10 µs) over their times less a 2 µs launch each.
  EXPECT_NEAR(machine.device.efficiency.at("dense"), 30.0 / ((42.0 + 22.0) / 1.6 - 4.0), 1e-12);
  EXPECT_FALSE(machine.device.efficiency.count("dense|shares=2"));

  // The simulator's two prices of that dense op, on two devices of one share.
  const OpCostModel costs(machine_for_plan(machine, 2));
  EXPECT_TRUE(costs.contended());
  EXPECT_DOUBLE_EQ(*costs.calibrated_seconds(dense), 42e-6);
  EXPECT_DOUBLE_EQ(*costs.calibrated_seconds(alone_op_key(dense)), 42e-6 / 1.6);
  // A raw file from before `running`: every time busy, so no contention, and the efficiencies fitted busy.
  calibration::CalibrationResult old = result;
  std::erase_if(old.op_times, [](const calibration::OpTime& op) { return op.shares == 1 && op.running == 1; });
  for (calibration::OpTime& op : old.op_times) op.running = 0;
  const Machine before = cpu_machine_from_calibration(old, options);
  EXPECT_TRUE(before.device.contention.empty());
  EXPECT_FALSE(before.calibration.op_times_us.count(dense + "|alone"));
  EXPECT_DOUBLE_EQ(before.device.efficiency.at("dense"), 0.5);
  EXPECT_FALSE(OpCostModel(machine_for_plan(before, 2)).contended());
}

TEST(CpuCalibration, KindsRunOnOneThreadGainNothingFromMoreShares) {
  calibration::CalibrationResult result = testing::hand_calibration();
  result.device_name = "Test CPU";
  for (calibration::OpTime op : std::vector<calibration::OpTime>(result.op_times)) {
    op.shares = 4;
    result.op_times.push_back(op);
  }
  result.one_thread_kinds = {"relu", "epilogue", "no_such_kind"};
  CalibratedMachineOptions options;
  options.name = "host";
  const Machine machine = cpu_machine_from_calibration(result, options);
  EXPECT_EQ(machine.device.speedup,
            (std::map<std::string, double>{{"default|shares=4", 4.0}, {"epilogue|shares=4", 1.0}, {"relu|shares=4", 1.0}}));
  // A plan on one device: one-thread peaks, and the speedups price what the table lacks.
  const Machine one = machine_for_plan(machine, 1);
  EXPECT_EQ(one.device.peak_tflops, machine.device.peak_tflops);
  EXPECT_DOUBLE_EQ(one.device.speedup_of("relu"), 1.0);
  EXPECT_DOUBLE_EQ(one.device.speedup_of("dense"), 4.0);
  EXPECT_DOUBLE_EQ(one.device.memory_gib, 4 * machine.device.memory_gib);
  // The raw file says it, and reads back.
  const auto again = calibration::parse_calibration_result(calibration::calibration_to_json(result), "raw.json");
  EXPECT_EQ(again.one_thread_kinds, result.one_thread_kinds);
  // Without it, every kind is four times one share, as before.
  result.one_thread_kinds.clear();
  EXPECT_TRUE(cpu_machine_from_calibration(result, options).device.speedup.empty());
  EXPECT_DOUBLE_EQ(machine_for_plan(cpu_machine_from_calibration(result, options), 1).device.peak_tflops.at("fp32"),
                   4 * machine.device.peak_tflops.at("fp32"));
}

TEST(CpuCalibration, CalibrateMeasuresThisHostAndWritesAMachineThatPredictsIt) {
  const std::string folder = testing::fresh_temp_dir("calibrate_cpu");
  const testing::CommandResult made = testing::run_splitscope(
      "calibrate --backend cpu --quick --networks mlp-small --repeat 2 --out " + folder + "/host.json");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const Machine machine = load_machine(folder + "/host.json");
  EXPECT_TRUE(machine.pooled);
  const auto raw = calibration::load_calibration_result(folder + "/host.calibration.json");
  // The gap between one device's consecutive ops, off a one-device run's timeline: the launch overhead,
  // well under the condition-variable hand-off between two threads.
  EXPECT_GT(raw.launch.kernels, 0);
  EXPECT_DOUBLE_EQ(machine.device.launch_overhead_us, raw.launch.device_seconds_per_kernel * 1e6);
  EXPECT_LT(raw.launch.device_seconds_per_kernel, raw.launch.host_seconds_per_launch);
  // The lane hand-off off a pipelined run's timeline (two devices need two threads).
  if (machine.devices >= 2) {
    EXPECT_GT(raw.lane_handoff.samples, 0);
    EXPECT_DOUBLE_EQ(machine.device.lane_handoff_us, raw.lane_handoff.seconds * 1e6);
    // The wake of a worker gone to sleep: at least 9 runs of the scheduler's own probe, after its 50 us spin.
    EXPECT_GE(raw.parked_handoff.samples, 9);
    EXPECT_DOUBLE_EQ(raw.parked_handoff.spin_seconds, 50e-6);
    EXPECT_TRUE(made.out.find("to a sleeping worker") != std::string::npos) << made.out;
  }
  // Every mlp-small sample once per share count, the whole host's first, and
  // on fewer shares alone too (one device running, the others idle).
  const std::vector<int> shares = cpu_share_counts(machine.devices);
  EXPECT_EQ(raw.op_times.front().shares, shares.front());
  EXPECT_EQ(raw.op_times.size() % (2 * shares.size() - 1), 0u);
  EXPECT_EQ(machine.calibration.op_times_us.size(), raw.op_times.size());
  for (const auto& op : raw.op_times) {
    EXPECT_GT(op.seconds, 0) << op.signature;
    const bool alone = op.running == 1 && op.shares < machine.devices;
    EXPECT_EQ(op.running, alone ? 1 : machine.devices / op.shares) << op.signature;
    const std::string key = alone ? alone_op_key(op.signature) : op.signature;
    EXPECT_TRUE(machine.calibration.op_times_us.count(pooled_op_key(key, op.shares))) << op.signature;
  }
  if (machine.devices >= 2) {
    EXPECT_FALSE(machine.device.contention.empty());
  }
  // The same machine again from the raw file, with no measuring.
  const testing::CommandResult again = testing::run_splitscope(
      "calibrate --backend cpu --from " + folder + "/host.calibration.json --out " + folder + "/again.json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const Machine derived = load_machine(folder + "/again.json");
  EXPECT_EQ(derived.calibration.op_times_us, machine.calibration.op_times_us);
  EXPECT_EQ(derived.device.efficiency, machine.device.efficiency);
  EXPECT_EQ(derived.device.contention, machine.device.contention);
  EXPECT_EQ(derived.device.speedup, machine.device.speedup);
  // The executor's one-thread kinds: pooling yes, the products no.
  EXPECT_NE(std::find(raw.one_thread_kinds.begin(), raw.one_thread_kinds.end(), "maxpool"), raw.one_thread_kinds.end());
  EXPECT_EQ(std::find(raw.one_thread_kinds.begin(), raw.one_thread_kinds.end(), "conv2d"), raw.one_thread_kinds.end());
  EXPECT_EQ(derived.device.peak_tflops, machine.device.peak_tflops);
  EXPECT_EQ(derived.devices, machine.devices);
  // And it predicts a cpu run here.
  const testing::CommandResult validated = testing::run_splitscope(
      "validate --backend cpu --networks mlp-small --repeat 1 --quiet --predict-on " + folder + "/host.json");
  EXPECT_EQ(validated.exit_code, 0) << validated.err;

  for (const std::string bad : {"--device 1", "--partitions 2", "--dtype tf32"}) {
    const testing::CommandResult refused =
        testing::run_splitscope("calibrate --backend cpu " + bad + " --out " + folder + "/x.json");
    EXPECT_EQ(refused.exit_code, 2) << bad << ": " << refused.err;
  }
  const testing::CommandResult unknown = testing::run_splitscope("calibrate --backend tpu --out " + folder + "/x.json");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("--backend"), std::string::npos) << unknown.err;
  EXPECT_FALSE(std::filesystem::exists(folder + "/x.json"));
}

}  // namespace
}  // namespace calibrate_command_test
}  // namespace splitscope
