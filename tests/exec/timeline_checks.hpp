#pragma once
// What every timeline of a plan run must satisfy (plan.hpp's span rules).

#include "plan/plan.hpp"
#include "timeline/timeline.hpp"

namespace splitscope::testing_support {

/// One span per compute/epilogue op (its device's compute lane, its FLOPs), per
/// transfer (the destination's copy-in lane, its bytes) and per collective
/// output (that device's copy-in lane; the bytes add up to bytes_moved); no op
/// starts before the span writing each of its inputs has ended; each device's
/// compute spans follow its schedule, one at a time.
void expect_timeline_follows_plan(const Plan& plan, const Timeline& timeline);

}  // namespace splitscope::testing_support
