#pragma once
/// \file
/// `lessons --html`: one self-contained page (inline CSS and SVG, no script)
/// with a panel per lesson run: the claim, the verdict, the why sentence,
/// the setup, the numbers, and the pictures of LessonFigures: the flip's
/// curve with the flip marked, the lesson's own curves (loss curves), bars
/// and simulated timelines. Its own library: the experiments know nothing of it.

#include <string>
#include <vector>

#include "lessons/lesson.hpp"

namespace splitscope {

/// The page of `results`, run on `machine` (empty: each lesson's own preset).
std::string lessons_page(const std::vector<LessonResult>& results, const std::string& machine);

}  // namespace splitscope
