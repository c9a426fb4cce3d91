// End to end: outputs never destroy an input, even one named from the zoo,
// and a failed write publishes no output at all (issue 19, findings 2 and 3).

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace output_safety_test {
namespace {

namespace fs = std::filesystem;

/// A copy of the zoo's files a test may see overwritten, found through
/// SPLITSCOPE_MODELS while the test runs: a failing check must not destroy
/// the shipped files.
class ZooCopy {
 public:
  ZooCopy() : root_(fresh_temp_dir("zoo") + "/models") {
    const char* source = std::getenv("SPLITSCOPE_SOURCE_ROOT");
    if (source == nullptr) throw std::runtime_error("run the tests with meson test");
    if (const char* old = std::getenv("SPLITSCOPE_MODELS")) old_ = old;
    fs::create_directories(root_);
    fs::copy(std::string(source) + "/models", root_, fs::copy_options::recursive);
    setenv("SPLITSCOPE_MODELS", root_.c_str(), 1);
  }
  ~ZooCopy() { setenv("SPLITSCOPE_MODELS", old_.c_str(), 1); }
  ZooCopy(const ZooCopy&) = delete;
  ZooCopy& operator=(const ZooCopy&) = delete;

  std::string file(const std::string& shelf, const std::string& name) const {
    return root_ + "/" + shelf + "/" + name + ".json";
  }

 private:
  std::string root_;
  std::string old_;
};

TEST(OutputSafety, AnInputNamedFromTheZooIsNeverOverwritten) {
  const ZooCopy zoo;
  struct Case {
    std::string args;
    std::string option;
    std::string target;
  };
  const std::vector<Case> cases{
      {"run mlp-small --strategy single --devices 1 --quiet --report ", "--report", zoo.file("networks", "mlp-small")},
      {"run mlp-small --strategy single --devices 1 --backend sim --machine h100-nvlink-8 --trace ", "--trace",
       zoo.file("machines", "h100-nvlink-8")},
      {"compare mlp-small --backend cpu --predict-on h100-pcie-4 --quiet --report ", "--report",
       zoo.file("machines", "h100-pcie-4")},
      {"demo rnn --backend sim --machine 2x8-h100-ib --report ", "--report", zoo.file("machines", "2x8-h100-ib")},
  };
  for (const Case& c : cases) {
    const std::string before = read_text_file(c.target);
    ASSERT_FALSE(before.empty()) << c.target;
    const CommandResult result = run_splitscope(c.args + c.target);
    EXPECT_EQ(result.exit_code, 2) << c.args;
    EXPECT_EQ(result.err, "error: " + c.option + ": " + c.target +
                              " is an input of this command; writing there would destroy it: give another file name\n")
        << c.args;
    EXPECT_TRUE(result.out.empty()) << c.args;
    EXPECT_EQ(read_text_file(c.target), before) << c.args;
  }
}

TEST(OutputSafety, AFailedWritePublishesNoOutput) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  constexpr const char* kSim = " --backend sim --machine h100-nvlink-8";
  struct Case {
    std::string args;  ///< {dir} is the test's folder
    std::string option;
  };
  const std::vector<Case> cases{
      {std::string("run mlp-small --strategy single --devices 1") + kSim + " --report {dir}/r.json --trace /dev/full",
       "--trace"},
      {std::string("run mlp-small --strategy single --devices 1") + kSim + " --report {dir}/r.json --html /dev/full",
       "--html"},
      {"run mlp-small --strategy single --devices 1 --repeat 1 --save-output {dir}/o.npy --report /dev/full",
       "--report"},
      {std::string("compare mlp-small --devices 2") + kSim + " --report {dir}/c.json --html /dev/full", "--html"},
      {"demo rnn --backend sim --report {dir}/d.json --trace /dev/full", "--trace"},
      {"demo rnn --backend sim --sweep hidden=64,128 --report {dir}/d.json --html /dev/full", "--html"},
  };
  for (const Case& c : cases) {
    const std::string dir = fresh_temp_dir("output-failed-write");
    std::string args = c.args;
    for (size_t at = args.find("{dir}"); at != std::string::npos; at = args.find("{dir}")) args.replace(at, 5, dir);
    const CommandResult result = run_splitscope(args + " --quiet");
    EXPECT_EQ(result.exit_code, 1) << args;
    EXPECT_EQ(result.err, "error: " + c.option +
                              ": writing /dev/full failed: No space left on device; the other output files were not "
                              "written\n")
        << args;
    EXPECT_TRUE(fs::is_empty(dir)) << args << ": an output or a temporary was left behind";
  }
}

}  // namespace
}  // namespace output_safety_test
}  // namespace splitscope::testing
