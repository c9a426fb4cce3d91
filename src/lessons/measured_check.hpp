#pragma once
/// \file
/// `lessons --measure`: a lesson's comparison run for real on this machine's
/// cpu backend, at a small size (each device a worker thread): the baseline
/// and the split prepared once and timed in turns (ABAB, so a change in the
/// machine's load slows both alike), the median of each.

#include <functional>
#include <memory>
#include <string>

#include "ir/graph.hpp"
#include "lessons/lesson.hpp"

namespace splitscope {

/// Both sides of a comparison measured on the cpu backend.
struct MeasuredPair {
  double baseline_ms = 0;  ///< the median makespan
  double compared_ms = 0;
  int repeats = 0;
  double speedup() const { return baseline_ms / compared_ms; }
};

inline constexpr int kMeasuredRepeats = 7;

/// `graph` planned by `baseline` on one device and by `compared` on
/// `devices`, each run kMeasuredRepeats times in turns after one warm-up.
MeasuredPair measure_on_cpu(const std::shared_ptr<const Graph>& graph, const std::string& baseline,
                            const std::string& compared, int devices);

/// A zoo network cut down to a size the cpu backend runs in a fraction of
/// a second: its JSON with every `from` replaced by `to` in the layers'
/// units and hidden sizes and in the input's shape, at `batch`; a training
/// step with `train`.
std::shared_ptr<const Graph> measured_graph(const std::string& network, int64_t from, int64_t to, int64_t batch,
                                            bool train);

/// The measured lesson of `compared` on `devices` threads against `baseline`
/// on `graph` (described by `network`: "mlp at width 1024, batch 64"),
/// judged by `verdict_of` (of the measured pair).
MeasuredLesson measured_lesson(const std::string& network, const std::shared_ptr<const Graph>& graph,
                               const std::string& baseline, const std::string& compared, int devices,
                               const std::function<LessonVerdict(const MeasuredPair&)>& verdict_of);

}  // namespace splitscope
