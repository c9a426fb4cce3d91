#pragma once
/// \file
/// The evidence of a lesson as data a page can draw (`lessons --html`): named
/// series of (x, y) points, labelled bars, and simulated runs (their plan and
/// timeline). The experiments fill them; how they look is the report side's
/// business (lessons_page.hpp), so nothing here knows of HTML.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plan/plan.hpp"
#include "report/run_summary.hpp"
#include "timeline/timeline.hpp"

namespace splitscope {

struct LessonSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  ///< (x, y), x ascending; a non-finite y is a gap
};

/// A quantity against a parameter: loss curves, a sweep of requests.
struct LessonCurve {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  std::vector<LessonSeries> series;
  std::optional<double> threshold;  ///< a reference value of y (the deadline, say)
  std::string threshold_label;
};

struct LessonBar {
  std::string label;
  double value = 0;
};

/// Side-by-side values of one unit: the runs a lesson compares.
struct LessonBars {
  std::string title;
  std::string unit;  ///< "ms", "MiB"
  std::vector<LessonBar> bars;
};

/// One simulated run of a lesson, as the Plan and Timeline contracts give it.
struct LessonTimeline {
  std::string title;
  std::shared_ptr<const Plan> plan;
  Timeline timeline;
  RunSummary summary;
};

/// What a lesson shows besides its flip's curve (which FlipPoint carries).
struct LessonFigures {
  std::vector<LessonCurve> curves;
  std::vector<LessonBars> bars;
  std::vector<LessonTimeline> timelines;
};

}  // namespace splitscope
