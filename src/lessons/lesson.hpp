#pragma once
/// \file
/// `splitscope lessons`: each classic claim about splitting networks over
/// devices (docs/lessons.md) as an experiment with a verdict, its numbers and,
/// where the claim is a comparison, the value of one parameter at which the
/// verdict flips. Each lesson is one file in this folder; lessons.cpp lists
/// them. The experiments run on the simulator, deterministic (seeded where
/// they draw noise), but for 7 and 8, which train for real on the cpu
/// backend and so vary from run to run.

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lessons/lesson_figures.hpp"

namespace splitscope {

enum class LessonVerdict {
  kHolds,
  kDoesNotHold,  ///< "does not hold here": on this machine and these settings
  kUncertain,    ///< the margin is inside what the model can tell apart
};
std::string_view to_string(LessonVerdict verdict);

/// Where a comparison's verdict changes, found by bisection over a range.
struct FlipPoint {
  std::string parameter;  ///< "link bandwidth", "micro-batches", "batch", "devices"
  std::string unit;       ///< "GB/s", "" for counts
  double low = 0;         ///< the range searched
  double high = 0;
  /// The value at which the verdict changes; nullopt: it does not change
  /// anywhere in [low, high].
  std::optional<double> value;
  std::string meaning;  ///< what happens past it: "vertical starts to pay"
  /// What the verdict compares, the curve's y: "speedup over single".
  std::string quantity;
  /// The quantity's value at which the verdict changes (1.05); none where
  /// the flip is a curve's peak (claim 9).
  std::optional<double> threshold;
  bool log_scale = true;  ///< the range spans decades: drawn on a log axis
  /// The quantity at every value tried, x ascending: a spread over the range
  /// and the bisection's probes (a non-finite y: it has none there, e.g. a
  /// diverged run).
  std::vector<std::pair<double, double>> curve;
};

/// `--measure`: the lesson's comparison run for real on this machine's cpu
/// backend, at a small size (measured_check.hpp), judged by the lesson's rule.
struct MeasuredLesson {
  std::string setup;
  LessonVerdict verdict = LessonVerdict::kUncertain;
  std::string why;
  nlohmann::ordered_json numbers = nlohmann::ordered_json::object();
};

struct LessonResult {
  int number = 0;
  std::string claim;
  std::string setup;  ///< network, devices, machine
  LessonVerdict verdict = LessonVerdict::kUncertain;
  std::string why;    ///< one sentence
  nlohmann::ordered_json numbers = nlohmann::ordered_json::object();
  std::optional<FlipPoint> flip;
  LessonFigures figures;  ///< for the page; to_json() leaves the timelines out
  std::optional<MeasuredLesson> measured;  ///< with --measure, where the lesson can run here
};

nlohmann::ordered_json to_json(const LessonResult& result);

/// "flips at link bandwidth = 67.77 GB/s: ..." or "does not flip for ... in [low, high]".
std::string flip_text(const FlipPoint& flip);

/// What every lesson may be given: a machine to run on in place of its own
/// (the lessons' presets are chosen so each claim is tested where it is meant).
struct LessonSettings {
  std::string machine;  ///< empty: each lesson's own preset
  bool measure = false;  ///< also run the comparison on this machine's cpu backend, where it can
};

struct Lesson {
  int number = 0;
  std::string_view claim;
  std::function<LessonResult(const LessonSettings&)> run;
};

/// Every lesson that runs, in number order.
std::span<const Lesson> lessons();

}  // namespace splitscope
