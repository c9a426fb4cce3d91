#pragma once
/// \file
/// The files `demo rnn` writes: the JSON report (`--report`, schema
/// "splitscope.demo-rnn/1", below) and the self-contained HTML page
/// (`--html`: the wavefront, the verdict table and the runs' timelines; or,
/// for a sweep, its table and charts). Written atomically by the caller.
///
/// The JSON report (every key always present; null where it does not apply):
///
///   {"schema": "splitscope.demo-rnn/1",
///    "context": {...},                      // as in run reports (report_json.hpp)
///    "shape": {"cell", "layers", "hidden", "steps", "batch"},
///    "devices", "microbatches",             // N and M (a sweep: the first point's)
///    "backend", "measured", "device_mode", "machine": {"name", "device_name", "driver"},
///    "baseline": {"implementation", "method", "measured", "device_mode",
///                 "makespan_ms": {"median", "min", "max", "repeats"}},  // makespan null for a sweep;
///                                           // --train: the fused step's, or (cuda) the
///                                           // cell-by-cell single device's
///    "train": {"steps", "schedule", "optimizer", "recompute"} | null,  // --train only
///    "ways": [{"way", "title", "strategy", "devices", "microbatches",
///              "makespan_ms": {...} | null, "speedup_vs_fused" (null against the cells),
///              "speedup_vs_baseline", "compute_ms", "transfer_ms",
///              "moved_bytes", "idle_share", "verdict": "wins|loses|even" | null,
///              "decider", "reason"}] | null,
///    "wavefront": {"slice_us", "cells_per_slice", "busy": ["-##..", ...], "busy_devices": [...],
///                  "fill_slices", "drain_slices", "fill_ms", "steady_ms", "drain_ms",
///                  "peak_busy", "steady_occupancy",
///                  "compute_ms", "transfer_ms", "makespan_ms"} | null,
///    "conclusion": "one sentence",
///    "runs": [run reports of the plan runs, judged against the cell-by-cell single run] | null,
///    "sweep": {"name", "values", "points": [{"value", "devices", "microbatches", "fused_ms",
///              "split_ms", "microbatched_ms", "split_speedup", "microbatched_speedup",
///              "best_speedup", "verdict", "split_reason"}], "crossover": value | null} | null}

#include <nlohmann/json.hpp>
#include <string>

#include "demo/rnn_demo.hpp"
#include "demo/rnn_sweep.hpp"
#include "report/report_context.hpp"

namespace splitscope {

inline constexpr const char* kDemoRnnSchema = "splitscope.demo-rnn/1";

nlohmann::ordered_json demo_json(const RnnDemoResult& result, const ReportContext& context);
nlohmann::ordered_json sweep_json(const SweepResult& result, const ReportContext& context);

std::string demo_html(const RnnDemoResult& result, const ReportContext& context);
std::string sweep_html(const SweepResult& result, const ReportContext& context);

/// "lstm, 4 layers x 256 hidden, 32 steps, batch 16": the shape in words;
/// the parameter named `swept` ("hidden") is shown by its letter ("4 layers x H hidden").
std::string shape_text(const RnnDemoShape& shape, const std::string& swept = "");

}  // namespace splitscope
