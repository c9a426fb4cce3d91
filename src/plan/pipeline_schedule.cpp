#include "plan/pipeline_schedule.hpp"

#include <algorithm>

namespace splitscope {

std::vector<StagePass> stage_sequence(PipelineSchedule schedule, int stage, int stages, int microbatches) {
  std::vector<StagePass> sequence;
  const auto forward = [&](int mb) { sequence.push_back({Pass::kForward, mb}); };
  const auto backward = [&](int mb) { sequence.push_back({Pass::kBackward, mb}); };
  if (schedule == PipelineSchedule::kGpipe) {
    for (int mb = 0; mb < microbatches; ++mb) forward(mb);
    for (int mb = 0; mb < microbatches; ++mb) backward(mb);
    return sequence;
  }
  const int warmup = std::min(stages - 1 - stage, microbatches);
  for (int mb = 0; mb < warmup; ++mb) forward(mb);
  for (int i = 0; i + warmup < microbatches; ++i) {
    forward(warmup + i);
    backward(i);
  }
  for (int mb = microbatches - warmup; mb < microbatches; ++mb) backward(mb);
  return sequence;
}

int peak_in_flight(const std::vector<StagePass>& sequence) {
  int in_flight = 0;
  int peak = 0;
  for (const StagePass& pass : sequence) {
    in_flight += pass.pass == Pass::kForward ? 1 : -1;
    peak = std::max(peak, in_flight);
  }
  return peak;
}

}  // namespace splitscope
