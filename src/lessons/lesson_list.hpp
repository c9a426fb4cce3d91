#pragma once
/// \file
/// The lessons' experiments, one file each (lessons.cpp lists them with their claims).

#include "lessons/lesson.hpp"

namespace splitscope {

LessonResult lesson_layer_per_device(const LessonSettings& settings);  // 1
LessonResult lesson_sliced_layers(const LessonSettings& settings);     // 2
LessonResult lesson_grouped_cnn(const LessonSettings& settings);       // 3
LessonResult lesson_rnn_wavefront(const LessonSettings& settings);     // 4
LessonResult lesson_fused_rnn(const LessonSettings& settings);         // 5
LessonResult lesson_data_parallel(const LessonSettings& settings);     // 6
LessonResult lesson_async_staleness(const LessonSettings& settings);   // 7
LessonResult lesson_spare_replicas(const LessonSettings& settings);    // 8
LessonResult lesson_saturation(const LessonSettings& settings);        // 9
LessonResult lesson_placement(const LessonSettings& settings);         // 10
LessonResult lesson_ensemble_deadline(const LessonSettings& settings); // 11
LessonResult lesson_best_split(const LessonSettings& settings);        // 12

}  // namespace splitscope
