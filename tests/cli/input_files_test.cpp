// End to end: what the JSON of a network or machine file may hold (issue 19,
// findings 4 and 5, and duplicate keys and comments of finding 6).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace input_files_test {
namespace {

std::string write_file(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

/// A machine file that passes every check; `device_extra` and `top_extra` are spliced in.
std::string machine_text(const std::string& device_extra = "", const std::string& top_extra = "",
                         const std::string& bandwidth = "10") {
  return R"({"name": "m", "devices": 16,)" + top_extra +
         R"( "device": {"name": "d", "peak_tflops": {"fp32": 1}, "memory_bandwidth_GBps": 100,)" + device_extra +
         R"( "memory_GiB": 1}, "topology": {"kind": "switch", "link": {"bandwidth_GBps": )" + bandwidth + "}}}";
}

TEST(InputFiles, APooledMachinePastSixtyFourBitsOfMemoryIsRefused) {
  const std::string dir = fresh_temp_dir("input-pooled");
  const std::string path = write_file(
      dir, "big-pool.json",
      R"({"name":"big-pool","devices":16,"pooled":true,"device":{"name":"d","peak_tflops":{"fp32":1},)"
      R"("memory_bandwidth_GBps":100,"memory_GiB":1073741824},)"
      R"("topology":{"kind":"switch","link":{"bandwidth_GBps":10}}})");
  const CommandResult result =
      run_splitscope("run mlp-small --strategy single --devices 1 --backend sim --machine " + path);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err, "error: " + path +
                            ": device.memory_GiB: 1073741824 GiB × 16 pooled devices is more than 2^30 GiB, which a "
                            "plan on one device would get; give less memory per device\n");
  EXPECT_TRUE(result.out.empty()) << result.out;
}

TEST(InputFiles, ANumberPastDoubleRangeNamesTheFileAndField) {
  const std::string dir = fresh_temp_dir("input-overflow");
  const std::string batch =
      write_file(dir, "batch.json", R"({"batch": 1e999, "input": [4], "layers": [{"type": "relu"}]})");
  const std::string comment = write_file(
      dir, "comment.json",
      R"({"batch": 2, "input": [4], "layers": [{"type": "relu"}, {"type": "relu", "comment": -1e999}]})");
  const std::string machine = write_file(dir, "machine.json", machine_text("", "", "1e400"));
  struct Case {
    std::string args;
    std::string err;
  };
  const std::vector<Case> cases{
      {"inspect " + batch, batch + ": batch: '1e999' is too large a number (past about 1.8e308)"},
      {"inspect " + comment, comment + ": layers[1].comment: '-1e999' is too large a number (past about 1.8e308)"},
      {"run mlp-small --strategy single --devices 1 --backend sim --machine " + machine,
       machine + ": topology.link.bandwidth_GBps: '1e400' is too large a number (past about 1.8e308)"},
      {"compare mlp-small --backend cpu --predict-on " + machine,
       machine + ": topology.link.bandwidth_GBps: '1e400' is too large a number (past about 1.8e308)"},
  };
  for (const Case& c : cases) {
    const CommandResult result = run_splitscope(c.args);
    EXPECT_EQ(result.exit_code, 2) << c.args;
    EXPECT_EQ(result.err, "error: " + c.err + "\n") << c.args;
  }
}

TEST(InputFiles, AFileNameThatIsNotUtf8IsWrittenAndRecorded) {
  const std::string dir = fresh_temp_dir("input-utf8-name");
  const std::string report = dir + "/bad\xff.json";
  const CommandResult result = run_splitscope(
      "run mlp-small --strategy single --devices 1 --backend sim --machine h100-nvlink-8 --report '" + report + "'");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto doc = nlohmann::json::parse(read_text_file(report));
  // The recorded command line names the file, its odd byte as U+FFFD.
  EXPECT_NE(doc["context"].dump().find("bad\xef\xbf\xbd.json"), std::string::npos) << doc["context"].dump();
}

TEST(InputFiles, ANameThatIsNotUtf8IsEscapedInJson) {
  // The JSON parser refuses such bytes inside the file; a network without a
  // "name" is named after its file, whose name may hold them.
  const std::string dir = fresh_temp_dir("input-utf8-network");
  const std::string path =
      write_file(dir, "net\xff.json", R"({"batch": 2, "input": [4], "layers": [{"type": "relu"}]})");
  for (const std::string& command : {"inspect '" + path + "' --json",
                                     "plan '" + path + "' --strategy single --devices 1 --json"}) {
    const CommandResult result = run_splitscope(command);
    ASSERT_EQ(result.exit_code, 0) << command;
    const auto doc = nlohmann::json::parse(result.out);
    EXPECT_EQ(doc.contains("name") ? doc["name"] : doc["network"], "net\xef\xbf\xbd") << command;
  }
}

TEST(InputFiles, ARepeatedKeyIsRefused) {
  const std::string dir = fresh_temp_dir("input-duplicate");
  const std::string network = write_file(
      dir, "net.json",
      R"({"batch": 2, "input": [4], "layers": [{"type": "relu"}, {"type": "dense", "units": 4, "units": 5}]})");
  const CommandResult inspect = run_splitscope("inspect " + network);
  EXPECT_EQ(inspect.exit_code, 2);
  EXPECT_EQ(inspect.err, "error: " + network + ": layers[1].units: appears twice in the same object; keep one\n");
  const std::string machine = write_file(dir, "machine.json", machine_text("", R"( "devices": 8,)"));
  const CommandResult run =
      run_splitscope("run mlp-small --strategy single --devices 1 --backend sim --machine " + machine);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "error: " + machine + ": devices: appears twice in the same object; keep one\n");
}

TEST(InputFiles, AnInputsEntryIsNamedByItsPath) {
  // It printed as layers[1]["inputs[0]"].
  const std::string dir = fresh_temp_dir("input-inputs-path");
  const std::string network = write_file(
      dir, "net.json", R"({"batch": 2, "input": [4], "layers": [{"type": "relu"}, {"type": "relu", "inputs": [5]}]})");
  const CommandResult inspect = run_splitscope("inspect " + network);
  EXPECT_EQ(inspect.exit_code, 2);
  EXPECT_EQ(inspect.err, "error: " + network + ": layers[1].inputs[0]: must be a layer or input name, got an integer\n");
}

TEST(InputFiles, ACommentIsAStringAsInMachineFiles) {
  const std::string dir = fresh_temp_dir("input-comment");
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += '[';
  for (int i = 0; i < 100000; ++i) deep += ']';
  const std::string top = write_file(
      dir, "top.json", R"({"batch": 2, "input": [4], "comment": )" + deep + R"(, "layers": [{"type": "relu"}]})");
  const std::string layer =
      write_file(dir, "layer.json", R"({"batch": 2, "input": [4], "layers": [{"type": "relu", "comment": 7}]})");
  const std::string device = write_file(dir, "machine.json", machine_text(R"( "comment": {},)"));
  struct Case {
    std::string args;
    std::string err;
  };
  const std::vector<Case> cases{
      {"inspect " + top, top + ": comment: must be a string, got an array"},
      {"inspect " + layer, layer + ": layers[0].comment: must be a string, got an integer"},
      {"run mlp-small --strategy single --devices 1 --backend sim --machine " + device,
       device + ": device.comment: must be a string, got an object"},
  };
  for (const Case& c : cases) {
    const CommandResult result = run_splitscope(c.args);
    EXPECT_EQ(result.exit_code, 2) << c.args;
    EXPECT_EQ(result.err, "error: " + c.err + "\n") << c.args;
  }
}

}  // namespace
}  // namespace input_files_test
}  // namespace splitscope::testing
