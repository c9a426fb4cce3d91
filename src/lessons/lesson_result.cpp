#include "lessons/lesson.hpp"

namespace splitscope {

std::string_view to_string(LessonVerdict verdict) {
  switch (verdict) {
    case LessonVerdict::kHolds: return "holds";
    case LessonVerdict::kDoesNotHold: return "does not hold here";
    case LessonVerdict::kUncertain: return "uncertain";
  }
  return "uncertain";
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
                    {"meaning", flip.meaning}};
  } else {
    json["flip"] = nullptr;
  }
  return json;
}

}  // namespace splitscope
