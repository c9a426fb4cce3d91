// Bad ONNX files (written by export_models.py): each is exit 2 with a message
// naming the file and what to do; none crashes.

#include <gtest/gtest.h>

#include <cstdlib>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../cli/cli_test_support.hpp"
#include "onnx_test_support.hpp"

namespace splitscope::testing {
namespace {

void expect_refused(const std::string& args, const std::string& file, const std::vector<std::string>& phrases) {
  const CommandResult result = run_splitscope(args);
  EXPECT_EQ(result.exit_code, 2) << args << "\n" << result.err;
  EXPECT_TRUE(result.out.empty()) << args << " printed " << result.out;
  EXPECT_NE(result.err.find("error: " + file), std::string::npos) << args << "\n" << result.err;
  for (const std::string& phrase : phrases) {
    EXPECT_NE(result.err.find(phrase), std::string::npos) << args << ": no '" << phrase << "' in\n" << result.err;
  }
}

TEST(OnnxBadFiles, EachIsExitTwoNamingTheFileAndWhatToDo) {
  struct Case {
    const char* file;
    std::vector<std::string> phrases;
  };
  const std::vector<Case> cases{
      {"bad/truncated.onnx", {"is not an ONNX model", "export it again"}},
      {"bad/not-onnx.onnx", {"is not an ONNX model", "export it again"}},
      {"bad/opset9.onnx", {"opset 9", "opsets 11 to 17", "opset_version=17"}},
      {"bad/external-missing.onnx", {"initializer 'w'", "missing-weights.bin", "beside the .onnx file"}},
      {"bad/dynamic-batch.onnx", {"input 'x'", "dimension 0", "'N'", "pass --batch"}},
      {"bad/dilated.onnx", {"node 'node' (Conv)", "dilation [2, 2]"}},
      {"bad/attention-scale.onnx", {"node 'blocks.0/attn/Attention' (attention pattern)", "scaled by 0.5",
                                     "not 1/sqrt(8) = 0.3535534"}},
      {"bad/attention-mask.onnx", {"(attention pattern)", "its mask is not the causal one", "causal (GPT) or unmasked"}},
      {"bad/uncovered.onnx", {"node 'the_erf' (Erf)", "op type Erf is not covered", "Conv, Dropout, Flatten", "LSTM", "folds",
                              "takes Erf, ReduceMean, Pow, Sqrt, Split and Where only as parts of"}},
  };
  for (const Case& c : cases) {
    const std::string path = onnx_model_path(c.file);
    expect_refused("inspect " + path, path, c.phrases);
  }
}

TEST(OnnxBadFiles, AnOpOnnxDoesNotDefineIsRefusedBeforeShapeInference) {
  // The GRU export with its first Transpose misspelt: ONNX 1.12's shape inference of the GRU read the type its
  // input never got and crashed (fuzz/regressions/onnx/README.md).
  const char* root = std::getenv("SPLITSCOPE_SOURCE_ROOT");
  const std::string path = std::string(root ? root : ".") + "/fuzz/regressions/onnx/unknown-op-before-gru.onnx";
  expect_refused("inspect " + path, path,
                 {"node '/rnn/Transpose' (TranUnsqu)", "has no definition in domain ai.onnx at opset 15",
                  "splitscope maps Add", "docs/onnx.md"});
  // Filters of 5 axes on images of 4: ONNX's convPoolShapeInference indexed past the spatial axes.
  const std::string conv = std::string(root ? root : ".") + "/fuzz/regressions/onnx/filters-rank-past-input.onnx";
  expect_refused("inspect " + conv, conv,
                 {"node 'node' (Conv)", "its filters' rank gives 3 spatial axes", "gives 2", "export the model again"});
  // The GRU export whose input lost its element type: ONNX's inference of the first op read the missing type.
  const std::string untyped =
      std::string(root ? root : ".") + "/fuzz/regressions/onnx/input-without-element-type.onnx";
  expect_refused("inspect " + untyped, untyped, {"input 'input'", "has no element type", "export the model again"});
  // The GRU export whose Squeeze reads Y_h and squeezes its batch axis: the Shape node after it read an untyped
  // value when ONNX propagated its data.
  const std::string shape_of =
      std::string(root ? root : ".") + "/fuzz/regressions/onnx/shape-of-untyped-value.onnx";
  expect_refused("inspect " + shape_of, shape_of,
                 {"(Shape)", "reads '/rnn/Squeeze_output_0'", "cannot infer", "export it again"});
}

TEST(OnnxBadFiles, EveryCommandThatTakesANetworkRefusesAlike) {
  const std::string path = onnx_model_path("bad/truncated.onnx");
  for (const std::string& command :
       {"plan " + path + " --strategy vertical --devices 2", "run " + path + " --strategy single --devices 1 --backend sim",
        "compare " + path + " --devices 2 --backend sim", "ensemble " + path + " " + path + " --backend sim"}) {
    expect_refused(command, path, {"is not an ONNX model"});
  }
}

TEST(OnnxBadFiles, DynamicBatchResolvedByTheOption) {
  const CommandResult result = run_splitscope("inspect " + onnx_model_path("bad/dynamic-batch.onnx") + " --batch 3 --json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto report = nlohmann::json::parse(result.out);
  EXPECT_EQ(report.at("batch"), 3);
  EXPECT_EQ(report.at("layers")[0].at("type"), "relu");
}

}  // namespace
}  // namespace splitscope::testing
