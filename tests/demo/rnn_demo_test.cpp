// The demo end to end below the command line: settings, the four ways
// through the simulator against closed forms, the verdict rows, the report.

#include <gtest/gtest.h>

#include <sstream>

#include "demo/demo_report.hpp"
#include "demo/rnn_demo.hpp"
#include "demo_test_support.hpp"
#include "sim/costs/machine_cost_function.hpp"
#include "sim/engine/simulator.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace rnn_demo_test {
namespace {

DemoBackend sim_backend(const Machine& machine) {
  DemoBackend backend;
  backend.name = "sim";
  backend.executor = [machine](int) { return std::make_unique<Simulator>(machine); };
  backend.fused = [machine](int) { return make_sim_fused_baseline(machine); };
  backend.cost = std::make_shared<MachineCostFunction>(machine);
  return backend;
}

TEST(RnnDemoSettings, DefaultsAndLimits) {
  RnnDemoSettings asked;
  asked.shape = demo_shape("lstm", 4, 8, 8, 16);
  const RnnDemoSettings resolved = resolve_settings(asked);
  EXPECT_EQ(resolved.devices, 4);       // one device per layer
  EXPECT_EQ(resolved.microbatches, 4);  // min(batch 16, N 4)
  asked.shape.batch = 2;
  EXPECT_EQ(resolve_settings(asked).microbatches, 2);  // min(2, 4)

  asked.devices = 5;
  try {
    resolve_settings(asked);
    FAIL() << "5 devices for 4 layers";
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), "--devices");
    EXPECT_NE(error.problem().find("at most 4"), std::string::npos) << error.problem();
  }
  asked.devices = 2;
  asked.microbatches = 3;  // batch 2
  try {
    resolve_settings(asked);
    FAIL() << "3 micro-batches of a batch of 2";
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), "--microbatches");
  }
  asked.microbatches = 0;
  asked.shape.hidden = 0;
  EXPECT_THROW(resolve_settings(asked), InputError);
}

TEST(RnnDemoVerdict, IdealWavefrontIdle) {
  const RnnDemoShape shape = demo_shape("lstm", 4, 8, 32, 16);
  // (N-1)/(M·T + N-1): 3/35 without micro-batches, 3/131 with 4.
  EXPECT_DOUBLE_EQ(*ideal_wavefront_idle(shape, 4, 1), 3.0 / 35.0);
  EXPECT_DOUBLE_EQ(*ideal_wavefront_idle(shape, 4, 4), 3.0 / 131.0);
  EXPECT_FALSE(ideal_wavefront_idle(shape, 2, 1).has_value());  // two layers per device
}

TEST(RnnDemo, FourWaysThroughTheSimulatorMatchTheClosedForms) {
  // L = 4 layers on 4 devices, T = 10 steps, B = 4, equal cells of t and
  // free links: the fused stack and the cell-by-cell run both take L·T·t
  // (40 t), the layer split (T + L - 1)·t (13 t), and with M = 4
  // micro-batches of one row (M·T + L - 1)·t/M (43 t / 4).
  const Machine machine = free_link_machine(4, 1.0);
  RnnDemoSettings settings;
  settings.shape = demo_shape("lstm", 4, 16, 10, 4);
  std::ostringstream quiet;
  Progress progress(quiet, false);
  const RnnDemoResult result = run_rnn_demo(settings, sim_backend(machine), RunOptions{}, ReportContext{}, progress);
  EXPECT_EQ(result.settings.devices, 4);
  EXPECT_EQ(result.settings.microbatches, 4);
  EXPECT_FALSE(result.fused.measured);

  const double t_ms = 16.384e-3;  // 2·4·16·32·4 FLOPs at 1 GFLOP/s
  ASSERT_EQ(result.rows.size(), 4u);
  const DemoRow& fused = result.rows[0];
  const DemoRow& cells = result.rows[1];
  const DemoRow& split = result.rows[2];
  const DemoRow& microbatched = result.rows[3];
  EXPECT_EQ(fused.way, DemoWay::kFused);
  EXPECT_FALSE(fused.verdict.has_value());
  EXPECT_NEAR(fused.makespan->median_ms, 40 * t_ms, 1e-9);
  EXPECT_EQ(cells.way, DemoWay::kCells);
  EXPECT_NEAR(cells.makespan->median_ms, 40 * t_ms, 1e-9);
  EXPECT_NEAR(cells.speedup, 1.0, 1e-9);
  EXPECT_EQ(cells.verdict, Verdict::kEven);
  EXPECT_EQ(split.way, DemoWay::kSplit);
  EXPECT_EQ(split.devices, 4);
  EXPECT_NEAR(split.makespan->median_ms, 13 * t_ms, 1e-9);
  EXPECT_NEAR(split.speedup, 40.0 / 13.0, 1e-6);
  EXPECT_EQ(split.verdict, Verdict::kWins);
  EXPECT_EQ(split.decider, "spread");
  EXPECT_EQ(microbatched.way, DemoWay::kSplitMicrobatched);
  EXPECT_EQ(microbatched.microbatches, 4);
  EXPECT_NEAR(microbatched.makespan->median_ms, 43.0 / 4.0 * t_ms, 1e-9);
  EXPECT_NEAR(microbatched.speedup, 40.0 / 10.75, 1e-6);
  // The idle share of the split is the ideal fill and drain: 3 of 13 slices per device.
  EXPECT_NEAR(split.idle_share, 3.0 / 13.0, 1e-6);

  EXPECT_EQ(result.wavefront.busy_devices, (std::vector<int>{1, 2, 3, 4, 4, 4, 4, 4, 4, 4, 3, 2, 1}));
  EXPECT_NE(result.conclusion.find("the layer split wins: the layer split, 4 micro-batches runs 3.72x as fast"),
            std::string::npos)
      << result.conclusion;

  const std::string table = verdict_table_text(result.rows);
  EXPECT_NE(table.find("single device, fused stack"), std::string::npos) << table;
  EXPECT_NE(table.find("3.08x"), std::string::npos) << table;

  const auto json = demo_json(result, ReportContext{});
  EXPECT_EQ(json["schema"], "splitscope.demo-rnn/1");
  EXPECT_EQ(json["ways"].size(), 4u);
  EXPECT_EQ(json["ways"][2]["way"], "layer-split");
  EXPECT_NEAR(json["ways"][2]["speedup_vs_fused"].get<double>(), 40.0 / 13.0, 1e-6);
  EXPECT_EQ(json["wavefront"]["busy"][0], "##########...");
  EXPECT_EQ(json["runs"].size(), 3u);
  EXPECT_TRUE(json["sweep"].is_null());
  EXPECT_EQ(json["backend"], "sim");
  const std::string html = demo_html(result, ReportContext{});
  EXPECT_NE(html.find("<svg class=\"timeline\""), std::string::npos);
  EXPECT_NE(html.find("##########..."), std::string::npos);
}

TEST(RnnDemo, SlowLinksMakeTheSplitLose) {
  // The same stack, but every transfer of h (4 rows x 16 floats = 256 B)
  // pays 1 ms of latency: device l starts l ms late, so the split takes
  // about 3 ms + 13 cells against the fused 40 cells (0.49 ms), and its
  // devices idle while the wavefront fills; the critical path is the three
  // transfers of h up the stack.
  Machine machine = free_link_machine(4, 1.0);
  machine.topology.link.latency_us = 1000;
  RnnDemoSettings settings;
  settings.shape = demo_shape("gru", 4, 16, 10, 4);
  settings.microbatches = 1;
  std::ostringstream quiet;
  Progress progress(quiet, false);
  const RnnDemoResult result = run_rnn_demo(settings, sim_backend(machine), RunOptions{}, ReportContext{}, progress);
  ASSERT_EQ(result.rows.size(), 3u);  // no micro-batched row with M = 1
  const DemoRow& split = result.rows[2];
  EXPECT_EQ(split.verdict, Verdict::kLoses);
  // 12.288 µs GRU cells: 3·(1000 µs + a cell) + 10 cells = 3159.7 µs against 40 cells = 491.5 µs.
  EXPECT_NEAR(split.makespan->median_ms, (3 * (1000 + 12.288) + 10 * 12.288) * 1e-3, 1e-6);
  EXPECT_EQ(split.decider, "waiting");
  // Idle far beyond the ideal 3/13 = 23%: device 0 idles 3159.744 - 10·12.288 = 3036.864 µs; devices 1
  // to 3 are busy for their 10 cells and their one 1000 µs incoming transfer and idle 2036.864 µs each:
  // (3036.864 + 3·2036.864) / (4 · 3159.744) = 72.4%.
  EXPECT_NE(split.reason.find("devices idle 72% of the run waiting on each other's cells, far beyond the "
                              "wavefront's ideal fill and drain (23% for 4 layers over 10 steps)"),
            std::string::npos)
      << split.reason;
  EXPECT_NE(split.reason.find("transfers are 95% of the critical path"), std::string::npos) << split.reason;
  EXPECT_NE(result.conclusion.find("the fused single device wins"), std::string::npos) << result.conclusion;
}


TEST(RnnDemo, PooledDevicesAreJudgedThreadForThread) {
  // A pooled machine of 2 shares (like the cpu backend's cores): the fused
  // stack gets both, each device of the split one. L = 2, T = 10, cells of t
  // on one share: fused 20 cells at t/2 = 10 t; split (T + L - 1)·t = 11 t,
  // 0.91x. By device time the split's cells compute 20 t against 10 t, 2x;
  // with one thread per device against the fused stack's two, 1.00x.
  Machine machine = free_link_machine(2, 1.0);
  machine.pooled = true;
  RnnDemoSettings settings;
  settings.shape = demo_shape("lstm", 2, 16, 10, 4);
  settings.microbatches = 1;
  std::ostringstream quiet;
  Progress progress(quiet, false);
  const RnnDemoResult result = run_rnn_demo(settings, sim_backend(machine), RunOptions{}, ReportContext{}, progress);
  const DemoRow& split = result.rows[2];
  EXPECT_NEAR(split.speedup, 10.0 / 11.0, 1e-6);
  EXPECT_EQ(split.decider, "compute-inflation");
  EXPECT_EQ(result.fused.threads, 2);  // both shares
  EXPECT_NE(split.reason.find("devices idle 9% of the run while the wavefront fills and drains (ideal 9% for 2 "
                              "layers over 10 steps) (share for share the cells compute as fast as the fused "
                              "stack: 1.00x its share time)"),
            std::string::npos)
      << split.reason;

  // Without knowing the shares, device time is all there is: 20 cells of t = 16.384 µs = 327.7 µs against
  // 10 t = 163.8 µs.
  RunReport whole = *find_run(result.comparison, "horizontal");
  whole.summary.info.facts.clear();
  EXPECT_NE(plan_row(DemoWay::kSplit, whole, result.fused, settings.shape)
                .reason.find("the cells compute for 2.00x the fused stack's time in all (327.7 us over 2 devices "
                             "against 163.8 us)"),
            std::string::npos)
      << plan_row(DemoWay::kSplit, whole, result.fused, settings.shape).reason;

  // The same run as the cpu backend reports it: threads per device known.
  RunReport as_cpu = *find_run(result.comparison, "horizontal");
  as_cpu.summary.info.facts = {{"intra-op threads", "1"}};
  FusedTiming fused = result.fused;
  fused.threads = 2;
  const DemoRow row = plan_row(DemoWay::kSplit, as_cpu, fused, settings.shape);
  EXPECT_EQ(row.verdict, Verdict::kLoses);
  // Idle 2 t of 22 t of device time = 9%, the ideal (N-1)/(T+N-1) = 1/11.
  EXPECT_NE(row.reason.find("devices idle 9% of the run while the wavefront fills and drains (ideal 9% for 2 "
                            "layers over 10 steps) (thread for thread the cells compute as fast as the fused "
                            "stack: 1.00x its thread time)"),
            std::string::npos)
      << row.reason;
}

}  // namespace
}  // namespace rnn_demo_test
}  // namespace splitscope::testing
