#include "report/compare_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "report/input_pipeline_text.hpp"
#include "report/parameter_server_text.hpp"
#include "report/placement_text.hpp"
#include "report/text_table.hpp"
#include "report/units.hpp"

namespace splitscope {
namespace {

using Align = TextTable::Align;

std::string makespan_cell(const RunSummary& s) {
  if (!s.fits()) return "does not fit";
  if (!s.timed()) return "-";
  if (s.makespan->repeats < 2) return format_ms(s.makespan->median_ms);
  return fmt::format("{} +-{:.0f}%", format_ms(s.makespan->median_ms), s.makespan->spread() * 100.0);
}

std::string speedup_cell(const Judgement& j) { return j.speedup ? format_speedup(*j.speedup) : "-"; }

std::string verdict_cell(const Judgement& j) { return j.verdict ? std::string(to_string(*j.verdict)) : "-"; }

std::string group_title(const RunGroup& group) {
  if (!group.measured) return fmt::format("predicted on {} (simulated)", group.machine);
  return group.machine.empty() ? fmt::format("measured on {}", group.backend)
                               : fmt::format("measured on {} ({})", group.backend, group.machine);
}

std::string prediction_cell(const RunGroup& group, const std::string& strategy) {
  for (const RunReport& run : group.runs) {
    if (run.summary.strategy != strategy) continue;
    if (!run.summary.fits()) return "does not fit";
    if (!run.summary.timed()) return "-";
    std::string cell = format_ms(run.summary.makespan->median_ms);
    if (run.judgement.speedup) cell += fmt::format(", {}", format_speedup(*run.judgement.speedup));
    if (run.judgement.verdict) cell += fmt::format(" {}", to_string(*run.judgement.verdict));
    return cell;
  }
  return "-";
}

std::string group_table(const Comparison& comparison, size_t index) {
  const RunGroup& group = comparison.groups[index];
  std::vector<std::string> headers{"strategy", "devices", "makespan",  "speedup",       "compute", "transfer",
                                   "idle",     "moved",   "peak mem/device"};
  std::vector<Align> aligns{Align::kLeft,  Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                            Align::kRight, Align::kRight, Align::kRight, Align::kRight};
  std::vector<const RunGroup*> beside;
  if (index == 0) {
    for (size_t g = 1; g < comparison.groups.size(); ++g) {
      beside.push_back(&comparison.groups[g]);
      headers.push_back(comparison.groups[g].measured
                            ? fmt::format("{} {}", comparison.groups[g].backend, comparison.groups[g].machine)
                            : fmt::format("predicted {}", comparison.groups[g].machine));
      aligns.push_back(Align::kRight);
    }
  }
  headers.insert(headers.end(), {"verdict", "reason"});
  aligns.insert(aligns.end(), {Align::kLeft, Align::kLeft});

  TextTable table(headers, aligns);
  for (const RunReport& run : group.runs) {
    const RunSummary& s = run.summary;
    const bool timed = s.timed();
    std::vector<std::string> row{s.strategy,
                                 std::to_string(s.devices),
                                 makespan_cell(s),
                                 speedup_cell(run.judgement),
                                 timed ? format_share(s.shares.compute) : "-",
                                 timed ? format_share(s.shares.transfer) : "-",
                                 timed ? format_share(s.shares.idle) : "-",
                                 binary_bytes(double(s.transfers.bytes)),
                                 binary_bytes(double(s.max_memory_peak_bytes()))};
    for (const RunGroup* other : beside) row.push_back(prediction_cell(*other, s.strategy));
    row.push_back(verdict_cell(run.judgement));
    row.push_back(run.judgement.reason);
    table.add_row(std::move(row));
  }

  // Runs may differ in repeats (compare's adaptive count; the baseline runs beside every split).
  int fewest = 0;
  int most = 0;
  for (const RunReport& run : group.runs) {
    if (!run.summary.timed()) continue;
    const int repeats = run.summary.makespan->repeats;
    fewest = fewest == 0 ? repeats : std::min(fewest, repeats);
    most = std::max(most, repeats);
  }
  const std::string model = group.runs.empty() ? std::string() : group.runs.front().summary.model;
  const int64_t batch = group.runs.empty() ? 0 : group.runs.front().summary.batch;
  // Said only where it is not the default, so fp32 tables read as before.
  const std::string precision = group.runs.empty() || group.runs.front().summary.precision == "fp32"
                                    ? std::string()
                                    : ", precision " + group.runs.front().summary.precision;
  const std::string repeats = fewest == most ? fmt::format("{} timed repeat{} each", most, most == 1 ? "" : "s")
                                             : fmt::format("{} to {} timed repeats", fewest, most);
  std::string text =
      fmt::format("{}, batch {}{}: {}, {}, best first\n\n", model, batch, precision, group_title(group), repeats);
  text += table.render();
  text += group.best ? fmt::format("best: {}\n", *group.best) : std::string("best: none (no strategy fits)\n");
  text += placement_table(group);
  text += input_pipeline_table(group);
  return text;
}

/// The simulator's own error, in words: "its ops are typically 17% off (...)".
std::string model_error_words(const ModelErrorInfo& error) {
  return fmt::format(
      "its ops are typically {:.0f}% off (the median error, on the GPUs we measured, of the achieved-rate rules that "
      "priced {} of the compute time; transfers carry none)",
      error.relative * 100, format_share(error.covered_share));
}

/// Training runs: the step's parts per device, the losses and the throughput.
std::string training_lines(const RunSummary& s) {
  const TrainingSummary& t = *s.training;
  std::string text = fmt::format("\ntraining: {} step(s){}, {} (lr {}, momentum {}), {} loss, schedule {}\n", t.steps,
                                 t.steps_alike && t.steps > 1 ? " (alike without --jitter: one simulated)" : "",
                                 t.optimizer, t.learning_rate, t.momentum, t.loss, t.schedule);
  if (s.timed()) {
    for (const DeviceSummary& d : s.per_device) {
      text += fmt::format("  device {}: forward {}, backward {}, update {}; gradients {}, optimizer state {}\n", d.id,
                          format_ms(d.forward_ms), format_ms(d.backward_ms), format_ms(d.update_ms),
                          binary_bytes(double(d.gradient_bytes)), binary_bytes(double(d.optimizer_state_bytes)));
    }
  }
  if (t.samples_per_s) text += fmt::format("  {:.4g} samples/s\n", *t.samples_per_s);
  if (!t.losses.empty()) {
    text += "  loss per step:";
    for (double loss : t.losses) text += fmt::format(" {:.6g}", loss);
    text += "\n";
  }
  text += parameter_server_lines(s.info);
  return text;
}

}  // namespace

std::string compare_text(const Comparison& comparison) {
  std::string text;
  for (size_t g = 0; g < comparison.groups.size(); ++g) {
    if (g > 0) text += "\n";
    text += group_table(comparison, g);
  }
  text +=
      "\nmakespan: median over the repeats, +- the larger distance to the min or max. compute / transfer / idle:\n"
      "shares of device time (devices x makespan); transfer counts only time a device moves data without\n"
      "computing. moved: bytes crossing devices. speedup: the single-device median over this median;\n"
      "wins at >= 1.05x, loses at <= 0.95x; uncertain when its 95% bootstrap interval (measured runs of 3 or\n"
      "more repeats) holds both sides of a threshold.\n";
  // The simulated runs' errors, smallest to largest: what the verdicts' doubt was sized by.
  std::optional<double> least;
  std::optional<double> most;
  for (const RunGroup& group : comparison.groups) {
    for (const RunReport& run : group.runs) {
      if (const auto& error = run.summary.info.model_error) {
        least = std::min(least.value_or(error->relative), error->relative);
        most = std::max(most.value_or(error->relative), error->relative);
      }
    }
  }
  if (most) {
    const std::string low = fmt::format("{:.0f}%", *least * 100);
    const std::string high = fmt::format("{:.0f}%", *most * 100);
    text += fmt::format(
        "model error: the simulated ops are typically {} off (by run: the median error, on the GPUs we\n"
        "measured, of the achieved-rate rules that priced them; transfers carry none). A simulated verdict is\n"
        "also uncertain where its speedup, with every op that far off in both runs alike, crosses a threshold.\n",
        low == high ? high : low + " to " + high);
  }
  return text;
}

std::string run_text(const RunReport& run) {
  const RunSummary& s = run.summary;
  const Judgement& j = run.judgement;
  const std::string precision = s.precision == "fp32" ? std::string() : ", precision " + s.precision;
  std::string text = fmt::format("{}, batch {}{}: {} over {} device{}{}, {} ({})\n", s.model, s.batch, precision,
                                 s.strategy, s.devices, s.devices == 1 ? "" : "s",
                                 s.microbatches > 1 ? fmt::format(", {} micro-batches", s.microbatches) : "",
                                 s.info.backend, s.info.device_mode);
  if (!s.info.machine_name.empty()) {
    text += fmt::format("machine: {}{}\n", s.info.machine_name,
                        s.info.device_name.empty() ? "" : fmt::format(" ({})", s.info.device_name));
  }
  text += placement_lines(s);
  text += input_pipeline_lines(s.info);
  if (!s.fits()) {
    text += fmt::format("does not fit: {}\n", s.memory.problem);
  } else if (s.timed()) {
    const MakespanStats& m = *s.makespan;
    text += fmt::format("makespan: {} median of {} repeat{} (min {}, max {}, p95 {})\n", format_ms(m.median_ms),
                        m.repeats, m.repeats == 1 ? "" : "s", format_ms(m.min_ms), format_ms(m.max_ms),
                        format_ms(m.p95_ms));
  }
  text += "\n";

  TextTable devices({"device", "compute", "transfer", "overlap", "idle", "FLOPs", "ops", "peak memory"},
                    {Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                     Align::kRight, Align::kRight});
  const bool timed = s.timed();
  for (const DeviceSummary& d : s.per_device) {
    devices.add_row({std::to_string(d.id), timed ? format_ms(d.compute_ms) : "-",
                     timed ? format_ms(d.transfer_ms) : "-", timed ? format_ms(d.overlap_ms) : "-",
                     timed ? format_ms(d.idle_ms) : "-", si_count(double(d.flops)), std::to_string(d.ops),
                     binary_bytes(double(d.memory_peak_bytes))});
  }
  text += devices.render();

  if (!s.movement.empty()) {
    text += "\n";
    TextTable movement({"data movement", "count", "bytes", "time", "exposed", "algbw", "busbw"},
                       {Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                        Align::kRight});
    for (const MovementSummary& m : s.movement) {
      movement.add_row({m.kind, std::to_string(m.count), binary_bytes(double(m.bytes_moved)),
                        timed ? format_ms(m.time_ms) : "-", timed ? format_ms(m.exposed_ms) : "-",
                        timed ? format_gbps(m.algbw_gbps) : "-", timed ? format_gbps(m.busbw_gbps) : "-"});
    }
    text += movement.render();
  } else {
    text += "\nno data crosses devices\n";
  }

  if (timed) {
    const CriticalPath& path = s.critical_path;
    text += fmt::format("\ncritical path: {} = {}compute {} + transfer {} ({} of it) + waiting {}\n",
                        format_ms(path.length_ms()),
                        path.input_ms > 0 ? fmt::format("input preparation {} + ", format_ms(path.input_ms)) : "",
                        format_ms(path.compute_ms), format_ms(path.transfer_ms),
                        format_share(path.transfer_share()), format_ms(path.gap_ms));
    text += fmt::format("device time: compute {}, transfer {}, idle {}\n", format_share(s.shares.compute),
                        format_share(s.shares.transfer), format_share(s.shares.idle));
    if (s.bubble_ideal && s.bubble_measured) {
      text += fmt::format("pipeline bubble: {} measured, {} ideal ((N-1)/(M+N-1))\n",
                          format_share(*s.bubble_measured), format_share(*s.bubble_ideal));
    }
  }
  if (s.group_traffic) {
    text += fmt::format("sent inside tensor groups {}, between pipeline stages {}, between data replicas {}\n",
                        binary_bytes(double(s.group_traffic->tensor)), binary_bytes(double(s.group_traffic->pipeline)),
                        binary_bytes(double(s.group_traffic->data)));
  }
  if (s.training) text += training_lines(s);
  for (const std::string& note : s.plan_notes) text += fmt::format("note: {}\n", note);

  text += "\n";
  if (j.verdict) {
    text += fmt::format("verdict: {}", to_string(*j.verdict));
    if (j.speedup && j.baseline_makespan_ms) {
      text += fmt::format(" ({} against {}'s {})", format_speedup(*j.speedup), j.baseline_strategy.value_or("single"),
                          format_ms(*j.baseline_makespan_ms));
    }
    text += fmt::format(": {}\n", j.reason);
  } else {
    text += fmt::format("verdict: none: {}\n", j.reason);
  }
  if (s.info.model_error) {
    text += fmt::format("model error: {}", model_error_words(*s.info.model_error));
    if (j.model_error_interval) {
      text += fmt::format("; within it the speedup is {} to {}", format_speedup(j.model_error_interval->low),
                          format_speedup(j.model_error_interval->high));
    }
    text += "\n";
  }
  return text;
}

}  // namespace splitscope
