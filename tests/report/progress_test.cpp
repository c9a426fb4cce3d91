// Progress: silent for short runs, when disabled (quiet, not a terminal);
// one overwritten line per repeat once a run passes a second.

#include <gtest/gtest.h>

#include <sstream>

#include "report/progress.hpp"

namespace splitscope {
namespace progress_test {
namespace {

using namespace std::chrono_literals;

struct FakeClock {
  std::chrono::steady_clock::time_point now{};
  Progress::Clock clock() {
    return [this] { return now; };
  }
};

TEST(Progress, QuietForTheFirstSecondThenOneLinePerRepeat) {
  std::ostringstream out;
  FakeClock time;
  Progress progress(out, true, time.clock());
  progress.begin_run("horizontal on cpu");
  progress.on_repeat(-1, 3);
  time.now += 500ms;
  progress.on_repeat(0, 3);
  EXPECT_EQ(out.str(), "");  // under a second: nothing
  time.now += 600ms;
  progress.on_repeat(1, 3);
  EXPECT_EQ(out.str(), "\rhorizontal on cpu: repeat 2/3");
  progress.end_run();
  // Cleared: carriage return, as many blanks as the line, carriage return.
  EXPECT_EQ(out.str(), "\rhorizontal on cpu: repeat 2/3\r" + std::string(29, ' ') + "\r");
}

TEST(Progress, AShorterLineOverwritesALongerOne) {
  std::ostringstream out;
  FakeClock time;
  Progress progress(out, true, time.clock());
  progress.begin_run("vertical");
  time.now += 2s;
  progress.on_repeat(-1, 10);   // "vertical: warm-up" (17 characters)
  progress.on_repeat(9, 10);    // "vertical: repeat 10/10" (22)
  progress.begin_run("tensor");
  time.now += 2s;
  progress.on_repeat(0, 1);     // "tensor: repeat 1/1" (18), padded over the 22 left on screen
  EXPECT_EQ(out.str(), "\rvertical: warm-up\rvertical: repeat 10/10\rtensor: repeat 1/1    ");
}

TEST(Progress, DisabledPrintsNothing) {
  std::ostringstream out;
  FakeClock time;
  Progress progress(out, false, time.clock());
  progress.begin_run("single");
  time.now += 5s;
  progress.repeat_callback()(0, 1);
  progress.end_run();
  EXPECT_EQ(out.str(), "");
  EXPECT_FALSE(progress.enabled());
}

}  // namespace
}  // namespace progress_test
}  // namespace splitscope
