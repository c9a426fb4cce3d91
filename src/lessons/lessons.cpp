#include <array>

#include "lessons/lesson.hpp"
#include "lessons/lesson_list.hpp"

namespace splitscope {
namespace {

/// Wraps a lesson so that its result carries its number and claim.
template <LessonResult (*Run)(const LessonSettings&)>
LessonResult numbered(int number, std::string_view claim, const LessonSettings& settings) {
  LessonResult result = Run(settings);
  result.number = number;
  result.claim = std::string(claim);
  return result;
}

#define SPLITSCOPE_LESSON(number, claim, function) \
  Lesson { number, claim, [](const LessonSettings& s) { return numbered<function>(number, claim, s); } }

const std::array<Lesson, 12>& all_lessons() {
  static const std::array<Lesson, 12> table{
      SPLITSCOPE_LESSON(1, "A fully connected network gains nothing from placing each layer on a different device.",
                        lesson_layer_per_device),
      SPLITSCOPE_LESSON(2,
                        "Slicing every fully connected layer across devices is cancelled by the cross-device "
                        "communication, the more so on slow links and across machines.",
                        lesson_sliced_layers),
      SPLITSCOPE_LESSON(3, "A partially connected (grouped) CNN splits cleanly across devices.", lesson_grouped_cnn),
      SPLITSCOPE_LESSON(4,
                        "A deep RNN split one layer per device forms a wavefront over time steps, with all devices "
                        "busy once it fills.",
                        lesson_rnn_wavefront),
      SPLITSCOPE_LESSON(5,
                        "Yet a regular stack of LSTM layers on one GPU, run by the fused kernels, is faster in "
                        "practice than the stack split one layer per device.",
                        lesson_fused_rnn),
      SPLITSCOPE_LESSON(6, "Data parallelism with mirrored weights and an all-reduce is efficient on one machine.",
                        lesson_data_parallel),
      SPLITSCOPE_LESSON(7,
                        "With asynchronous updates each gradient is on average about N-1 updates stale with N "
                        "replicas; stale gradients slow or destabilise training, and a lower learning rate, dropping "
                        "or scaling stale gradients and a synchronous warm-up reduce the damage.",
                        lesson_async_staleness),
      SPLITSCOPE_LESSON(8, "Synchronous updates with a few spare replicas cut the time spent waiting for the slowest.",
                        lesson_spare_replicas),
      SPLITSCOPE_LESSON(9,
                        "Past some number of GPUs, adding one more slows training: the all-reduce's bandwidth "
                        "saturates.",
                        lesson_saturation),
      SPLITSCOPE_LESSON(10, "The devices that communicate the most should be on the same machine.", lesson_placement),
      SPLITSCOPE_LESSON(11,
                        "An ensemble served across devices answers within a deadline by dropping the members that "
                        "are late.",
                        lesson_ensemble_deadline),
      SPLITSCOPE_LESSON(12,
                        "Model parallelism can pay off, but only with care: the best split depends on the "
                        "architecture and the machine.",
                        lesson_best_split),
  };
  return table;
}

#undef SPLITSCOPE_LESSON

}  // namespace

std::span<const Lesson> lessons() { return all_lessons(); }

}  // namespace splitscope
