// End to end: outputs never destroy an input, even one named from the zoo,
// and a failed write publishes no output at all (issue 19, findings 2 and 3).

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

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

constexpr const char* kSimRun = "run mlp-small --strategy data --backend sim --machine h100-nvlink-8 --quiet";

std::string copy_of(const std::string& from, const std::string& to) {
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  return to;
}

/// How the refusal names a file of the zoo: as given, and as resolved where that differs.
std::string zoo_file_words(const std::string& path) {
  const std::string resolved = fs::weakly_canonical(fs::absolute(path)).string();
  return path == resolved ? path + " is" : path + " names " + resolved + ",";
}

std::string destroy_message(const std::string& option, const std::string& path) {
  return "error: " + option + ": " + path +
         " is an input of this command; writing there would destroy it: give another file name\n";
}

TEST(OutputSafety, ACommandSaysWhichFilesItWrote) {
  // Issue 54 item 8: --report, --trace and --html used to write silently.
  const std::string dir = fresh_temp_dir("output-announced");
  const CommandResult result =
      run_splitscope("run mlp-small --strategy data --devices 2 --backend sim --machine h100-nvlink-8 --report " + dir +
                     "/r.json --trace " + dir + "/t.json --html " + dir + "/p.html");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("wrote " + dir + "/r.json (--report)\n"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("wrote " + dir + "/t.json (--trace)\n"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("wrote " + dir + "/p.html (--html)\n"), std::string::npos) << result.err;
  EXPECT_EQ(result.out.find("wrote "), std::string::npos) << "stdout stays the table";
  // --quiet: nothing on stderr (scripts, and sweep's points).
  const CommandResult quiet =
      run_splitscope("run mlp-small --strategy data --devices 2 --backend sim --machine h100-nvlink-8 --quiet "
                     "--report " + dir + "/q.json");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
  EXPECT_TRUE(fs::exists(dir + "/q.json"));
  // A device is written in place and not announced: its content is already where the user looks.
  const CommandResult to_stdout =
      run_splitscope("run mlp-small --strategy single --devices 1 --backend sim --machine h100-nvlink-8 --report /dev/null");
  ASSERT_EQ(to_stdout.exit_code, 0) << to_stdout.err;
  EXPECT_EQ(to_stdout.err.find("wrote"), std::string::npos) << to_stdout.err;
}

TEST(OutputSafety, SweepNeverOverwritesItsInputs) {
  const ZooCopy zoo;
  const std::string dir = fresh_temp_dir("sweep-inputs");
  const std::string net = copy_of(zoo.file("networks", "mlp-small"), dir + "/net.json");
  const std::string machine = copy_of(zoo.file("machines", "h100-nvlink-8"), dir + "/m.json");
  const std::string other = copy_of(machine, dir + "/other.json");
  const std::string run = " run " + net + " --strategy data --backend sim --quiet";
  struct Case {
    std::string args;
    std::string option;
    std::string target;
  };
  const std::vector<Case> cases{
      {"sweep -q --report " + net + " --over devices=1,2" + run + " --machine " + machine, "--report", net},
      {"sweep -q --html " + net + " --over devices=1,2" + run + " --machine " + machine, "--html", net},
      {"sweep -q --report " + machine + " --over devices=1,2" + run + " --machine=" + machine, "--report", machine},
      {"sweep -q --html " + other + " --over machine=" + machine + "," + other + run, "--html", other},
      {"sweep -q --report " + zoo.file("networks", "mlp-small") + " --over devices=1,2 " + kSimRun, "--report",
       zoo.file("networks", "mlp-small")},
  };
  for (const Case& c : cases) {
    const std::string before = read_text_file(c.target);
    const CommandResult result = run_splitscope(c.args);
    EXPECT_EQ(result.exit_code, 2) << c.args;
    EXPECT_EQ(result.err, destroy_message(c.option, c.target)) << c.args;
    EXPECT_EQ(read_text_file(c.target), before) << c.args;
  }
}

TEST(OutputSafety, NoCommandReplacesAFileOfTheZoo) {
  const ZooCopy zoo;
  const std::string root = std::getenv("SPLITSCOPE_MODELS");
  const std::string cnn = zoo.file("networks", "cnn");  // not an input of these commands
  const std::string before = read_text_file(cnn);
  for (const std::string& args :
       {std::string(kSimRun) + " --devices 2 --report " + cnn,
        "compare mlp-small --backend sim --machine h100-nvlink-8 --devices 2 --quiet --html " + cnn,
        "sweep -q --over devices=1,2 --report " + cnn + " " + kSimRun,
        "demo rnn --backend sim --quiet --trace " + cnn}) {
    const CommandResult result = run_splitscope(args);
    EXPECT_EQ(result.exit_code, 2) << args;
    EXPECT_NE(result.err.find(zoo_file_words(cnn) + " a file of the zoo in " + root +
                              "; writing there would replace it: give a file name outside " + root + "\n"),
              std::string::npos)
        << args << ": " << result.err;
    EXPECT_EQ(read_text_file(cnn), before) << args;
  }
}

TEST(OutputSafety, CalibrateReplacesAShippedPresetOnlyWithForce) {
  const ZooCopy zoo;
  const std::string root = std::getenv("SPLITSCOPE_MODELS");
  const std::string preset = zoo.file("machines", "h100-nvlink-8");
  const std::string raw = std::string(std::getenv("SPLITSCOPE_SOURCE_ROOT")) +
                          "/reports/cpu-amd-epyc-2-threads/2026-12-01-last/host.calibration.json";
  const std::string before = read_text_file(preset);
  const CommandResult refused = run_splitscope("calibrate --backend cpu --from " + raw + " --out " + preset);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(refused.err, "error: --out: " + zoo_file_words(preset) + " a file of the zoo in " + root +
                             "; writing there would replace it: give a file name "
                             "outside " + root + ", or add --force to replace it\n");
  EXPECT_EQ(read_text_file(preset), before);
  const CommandResult forced = run_splitscope("calibrate --backend cpu --from " + raw + " --out " + preset + " --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(read_text_file(preset), before);
  // A new machine file beside the presets needs no --force.
  const CommandResult added =
      run_splitscope("calibrate --backend cpu --from " + raw + " --out " + root + "/machines/this-host.json");
  EXPECT_EQ(added.exit_code, 0) << added.err;
}

TEST(OutputSafety, TwoSpellingsOfOneOutputAreRefusedBeforeAnythingIsWritten) {
  const std::string dir = fresh_temp_dir("output-aliases");
  fs::create_directories(dir + "/adir");
  for (const std::string& second : {std::string("--trace ./r.json"), std::string("--html adir/../r.json")}) {
    const CommandResult result =
        run_executable("cd " + dir + " && " + splitscope_path(), std::string(kSimRun) + " --devices 2 --report r.json " + second);
    EXPECT_EQ(result.exit_code, 2) << second;
    EXPECT_EQ(result.err, "error: " + second.substr(0, second.find(' ')) + ": " + second.substr(second.find(' ') + 1) +
                              " (r.json) is also the file of --report; give each output its own file\n")
        << second;
    EXPECT_FALSE(fs::exists(dir + "/r.json")) << second;
  }
}

TEST(OutputSafety, ARawCalibrationPastRangeIsBlamedOnTheRawFile) {
  const std::string dir = fresh_temp_dir("raw-range");
  const std::string source = std::string(std::getenv("SPLITSCOPE_SOURCE_ROOT")) +
                             "/reports/cpu-amd-epyc-2-threads/2026-12-01-last/host.calibration.json";
  std::ifstream in(source);
  nlohmann::json raw = nlohmann::json::parse(in);
  raw["cell_pointwise_seconds_per_unit"]["gru_cell"] = 1e300;  // 1e309 ns as a machine field: infinite
  const std::string path = dir + "/raw.json";
  std::ofstream(path) << raw.dump(1);
  const CommandResult result = run_splitscope("calibrate --backend cpu --from " + path + " --out " + dir + "/m.json");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err, "error: " + path +
                            ": cell_pointwise_seconds_per_unit.gru_cell: 1e+300 is past the range of a measurement "
                            "(1e-30 to 1e+30, or 0): the machine files derived from it would not be finite; measure "
                            "again, or fix the value\n");
  EXPECT_EQ(fs::directory_iterator(dir)->path().filename(), "raw.json");  // nothing written
}

TEST(OutputSafety, SweepKeepsNoFileOfItsPoints) {
  // Its points run in this process and hand their reports over in memory: no folder is needed, none is made.
  const CommandResult result =
      run_splitscope_under("TMPDIR=/nonexistent", std::string("sweep -q --over devices=1,2 ") + kSimRun);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
}

/// Writer w's command: a run whose report, trace and page differ from every
/// other writer's (its own batch).
std::string writer_command(const std::string& dir, int writer) {
  return std::string("run mlp-small --strategy data --devices 2 --backend sim --machine h100-nvlink-8 --quiet --batch ") +
         std::to_string(8 + writer) + " --report " + dir + "/r.json --trace " + dir + "/t.json --html " + dir +
         "/p.html";
}

TEST(OutputSafety, ManyWritersOfTheSameFilesLeaveWholeFilesOnly) {
  constexpr int kWriters = 6;
  constexpr int kRounds = 5;
  const std::string dir = fresh_temp_dir("output-writers");
  const std::string errors = fresh_temp_dir("output-writers-errors") + "/errors.txt";
  for (int round = 0; round < kRounds; ++round) {
    std::string script;
    for (int w = 0; w < kWriters; ++w) {
      script += splitscope_path() + " " + writer_command(dir, w) + " >/dev/null 2>>" + errors + " & ";
    }
    script += "wait";
    ASSERT_EQ(std::system(("bash -c '" + script + "'").c_str()), 0);
    EXPECT_EQ(read_text_file(errors), "") << "round " << round;
    const nlohmann::json report = nlohmann::json::parse(read_text_file(dir + "/r.json"));  // throws if mixed
    const int64_t batch = report["batch"].get<int64_t>();
    EXPECT_TRUE(batch >= 8 && batch < 8 + kWriters) << batch;
    const nlohmann::json trace = nlohmann::json::parse(read_text_file(dir + "/t.json"));
    EXPECT_TRUE(trace.contains("traceEvents"));
    const std::string page = read_text_file(dir + "/p.html");
    EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_EQ(page.find("<!DOCTYPE html>", 1), std::string::npos) << "two pages in one";
    EXPECT_EQ(page.substr(page.size() - 8), "</html>\n");
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(dir)) left.push_back(entry.path().filename().string());
    std::sort(left.begin(), left.end());
    EXPECT_EQ(left, (std::vector<std::string>{"p.html", "r.json", "t.json"})) << "a temporary was left";
  }
}

}  // namespace
}  // namespace output_safety_test
}  // namespace splitscope::testing
