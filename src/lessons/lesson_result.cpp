#include <fmt/format.h>

#include <cmath>

#include "lessons/lesson.hpp"

namespace splitscope {
namespace {

/// A number, or null where it is not finite (JSON has no infinity).
nlohmann::ordered_json lesson_finite_or_null(double value) {
  return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json lesson_points_json(const std::vector<std::pair<double, double>>& points) {
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  for (const auto& [x, y] : points) json.push_back({x, lesson_finite_or_null(y)});
  return json;
}

nlohmann::ordered_json lesson_figures_json(const LessonFigures& figures) {
  nlohmann::ordered_json curves = nlohmann::ordered_json::array();
  for (const LessonCurve& curve : figures.curves) {
    nlohmann::ordered_json series = nlohmann::ordered_json::array();
    for (const LessonSeries& line : curve.series) {
      series.push_back({{"name", line.name}, {"points", lesson_points_json(line.points)}});
    }
    curves.push_back({{"title", curve.title},
                      {"x", curve.x_label},
                      {"y", curve.y_label},
                      {"series", series},
                      {"threshold", curve.threshold ? nlohmann::ordered_json(*curve.threshold)
                                                    : nlohmann::ordered_json(nullptr)}});
  }
  nlohmann::ordered_json bars = nlohmann::ordered_json::array();
  for (const LessonBars& chart : figures.bars) {
    nlohmann::ordered_json values = nlohmann::ordered_json::array();
    for (const LessonBar& bar : chart.bars) values.push_back({{"label", bar.label}, {"value", bar.value}});
    bars.push_back({{"title", chart.title}, {"unit", chart.unit}, {"bars", values}});
  }
  return {{"curves", curves}, {"bars", bars}};
}

}  // namespace

std::string_view to_string(LessonVerdict verdict) {
  switch (verdict) {
    case LessonVerdict::kHolds: return "holds";
    case LessonVerdict::kDoesNotHold: return "does not hold here";
    case LessonVerdict::kUncertain: return "uncertain";
  }
  return "uncertain";
}

std::string flip_text(const FlipPoint& flip) {
  const std::string unit = flip.unit.empty() ? "" : " " + flip.unit;
  if (!flip.value) {
    return fmt::format("does not flip for {} in [{:g}, {:g}]{}", flip.parameter, flip.low, flip.high, unit);
  }
  return fmt::format("flips at {} = {:.4g}{}: {}", flip.parameter, *flip.value, unit, flip.meaning);
}

nlohmann::ordered_json to_json(const LessonResult& result) {
  nlohmann::ordered_json json{{"number", result.number},     {"claim", result.claim},
                              {"setup", result.setup},       {"verdict", std::string(to_string(result.verdict))},
                              {"why", result.why},           {"numbers", result.numbers}};
  if (result.flip) {
    const FlipPoint& flip = *result.flip;
    json["flip"] = {{"parameter", flip.parameter},
                    {"unit", flip.unit},
                    {"range", {flip.low, flip.high}},
                    {"value", flip.value ? nlohmann::ordered_json(*flip.value) : nlohmann::ordered_json(nullptr)},
                    {"meaning", flip.meaning},
                    {"quantity", flip.quantity},
                    {"threshold", flip.threshold ? nlohmann::ordered_json(*flip.threshold) : nlohmann::ordered_json(nullptr)},
                    {"curve", lesson_points_json(flip.curve)}};
  } else {
    json["flip"] = nullptr;
  }
  json["figures"] = lesson_figures_json(result.figures);
  if (result.measured) {
    json["measured"] = {{"setup", result.measured->setup},
                        {"verdict", std::string(to_string(result.measured->verdict))},
                        {"why", result.measured->why},
                        {"numbers", result.measured->numbers}};
  } else {
    json["measured"] = nullptr;
  }
  return json;
}

}  // namespace splitscope
