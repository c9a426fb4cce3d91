// Every validation error names the file and the field, and says what is wrong.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "ir/model_parser.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace validation_test {
namespace {

/// Parses `text` expecting an InputError at `field` whose message contains `words`.
void expect_error(const std::string& text, const std::string& field, const std::string& words) {
  try {
    parse_model_text(text, "nets/bad.json");
    FAIL() << "no error for " << text;
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), "nets/bad.json");
    EXPECT_EQ(error.field(), field) << error.what();
    EXPECT_NE(error.problem().find(words), std::string::npos)
        << "message: " << error.what() << "\nexpected to contain: " << words;
    EXPECT_NE(std::string(error.what()).find("nets/bad.json: " + field), std::string::npos)
        << error.what();
  }
}

std::string with_layers(const std::string& input, const std::string& layers) {
  return R"({"batch": 2, "input": )" + input + R"(, "layers": [)" + layers + "]}";
}

TEST(Validation, NotJson) { expect_error("{\"batch\": 2,,}", "", "not valid JSON"); }

TEST(Validation, NotAnObject) { expect_error("[1, 2]", "", "JSON object"); }

TEST(Validation, UnknownLayerType) {
  expect_error(with_layers("[4]", R"({"type": "dense", "units": 3}, {"type": "conv3d"})"),
               "layers[1].type", "unknown layer type 'conv3d'");
}

TEST(Validation, UnknownField) {
  expect_error(with_layers("[4]", R"({"type": "dense", "units": 3, "unit": 4})"), "layers[0].unit",
               "unknown field");
}

TEST(Validation, UnknownTopLevelField) {
  expect_error(R"({"batch": 2, "input": [4], "layer": []})", "layer", "unknown field");
}

TEST(Validation, MissingRequiredField) {
  expect_error(with_layers("[4]", R"({"type": "dense"})"), "layers[0].units", "missing required field");
  expect_error(R"({"batch": 2, "layers": [{"type": "relu"}]})", "input", "missing required field");
  expect_error(with_layers("[3, 8, 8]", R"({"type": "maxpool"})"), "layers[0].kernel",
               "missing required field");
}

TEST(Validation, WrongType) {
  expect_error(with_layers("[4]", R"({"type": "dense", "units": "many"})"), "layers[0].units",
               "must be an integer, got a string");
  expect_error(with_layers("[4]", R"({"type": "dense", "units": 2.5})"), "layers[0].units",
               "must be an integer, got a fractional number");
  expect_error(with_layers("[4]", R"({"type": "dense", "units": 2, "bias": 1})"), "layers[0].bias",
               "must be true or false");
  expect_error(R"({"batch": 2, "input": [4], "layers": {"type": "relu"}})", "layers",
               "must be an array");
}

TEST(Validation, ZeroOrNegativeSizes) {
  expect_error(with_layers("[4]", R"({"type": "dense", "units": 0})"), "layers[0].units",
               "must be positive, got 0");
  expect_error(R"({"batch": -1, "input": [4], "layers": [{"type": "relu"}]})", "batch",
               "must be positive, got -1");
  expect_error(with_layers("[3, 8, 8]", R"({"type": "conv2d", "filters": 4, "kernel": [3, -1]})"),
               "layers[0].kernel", "must be positive, got -1");
  expect_error(R"({"batch": 2, "input": [4, 0], "layers": [{"type": "relu"}]})", "input[1]",
               "must be positive, got 0");
}

TEST(Validation, KernelLargerThanPaddedInput) {
  expect_error(with_layers("[3, 8, 8]", R"({"type": "conv2d", "filters": 4, "kernel": 11, "padding": 1})"),
               "layers[0].kernel", "kernel 11x11 is larger than the padded input 10x10");
  expect_error(with_layers("[3, 8, 8]", R"({"type": "maxpool", "kernel": 9})"), "layers[0].kernel",
               "larger than the input 8x8");
}

TEST(Validation, PoolPaddingOfMoreThanHalfAWindow) {
  // A window of padding only would have no element to take the max or mean of.
  expect_error(with_layers("[3, 8, 8]", R"({"type": "maxpool", "kernel": 3, "padding": 2})"), "layers[0].padding",
               "padding 2x2 is more than half the 3x3 window; use at most kernel / 2");
  expect_error(with_layers("[3, 8, 8]", R"({"type": "avgpool", "kernel": [2, 4], "padding": [1, 3]})"),
               "layers[0].padding", "padding 1x3 is more than half the 2x4 window");
}

TEST(Validation, ChannelsNotDivisibleByGroups) {
  expect_error(with_layers("[6, 8, 8]", R"({"type": "conv2d", "filters": 8, "kernel": 3, "groups": 4})"),
               "layers[0].groups", "6 channels are not divisible by groups = 4");
  expect_error(with_layers("[8, 8, 8]", R"({"type": "conv2d", "filters": 6, "kernel": 3, "groups": 4})"),
               "layers[0].groups", "filters = 6 is not divisible by groups = 4");
}

TEST(Validation, RecurrentLayerOnNonSequenceInput) {
  expect_error(with_layers("[16]", R"({"type": "lstm", "hidden": 8})"), "layers[0]",
               "lstm needs a sequence input [steps, features], but gets [16]");
  expect_error(with_layers("[4, 16]", R"({"type": "gru", "hidden": 8, "return_sequences": false},
                                         {"type": "gru", "hidden": 8})"),
               "layers[1]", "gru needs a sequence input");
}

TEST(Validation, DenseOnUnflattenedImageSaysAddFlatten) {
  expect_error(with_layers("[3, 8, 8]", R"({"type": "dense", "units": 10})"), "layers[0]",
               "add {\"type\": \"flatten\"} before it");
}

TEST(Validation, DenseOnSequenceSaysWhatToDo) {
  expect_error(with_layers("[5, 4]", R"({"type": "lstm", "hidden": 3}, {"type": "dense", "units": 2})"),
               "layers[1]", "\"return_sequences\": false");
}

TEST(Validation, EmptyLayerList) {
  expect_error(R"({"batch": 2, "input": [4], "layers": []})", "layers", "the list is empty");
}

TEST(Validation, DuplicateLayerName) {
  expect_error(with_layers("[4]", R"({"type": "relu", "name": "a"}, {"type": "tanh", "name": "a"})"),
               "layers[1].name", "'a' is already the name of layers[0]");
}

TEST(Validation, UnknownActivation) {
  expect_error(with_layers("[4]", R"({"type": "dense", "units": 2, "activation": "gelu"})"),
               "layers[0].activation", "unknown activation 'gelu'");
}

TEST(Validation, MissingFileNamesThePath) {
  try {
    load_model_file("/no/such/net.json");
    FAIL();
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), "/no/such/net.json");
    EXPECT_NE(std::string(error.what()).find("cannot open"), std::string::npos);
  }
}

TEST(Validation, ParametersBeyondWhatCanBeHeld) {
  // 2^30 inputs × 2^11 units = 2^41 weights > 2^40.
  expect_error(with_layers("[1073741824]", R"({"type": "dense", "units": 2048})"), "layers[0]",
               "parameters, more than splitscope holds");
}

TEST(Validation, FlopsThatOverflowSixtyFourBits) {
  // Within every element limit: batch 2^22 × input 1024·1 = 2^32, batch × output 2^22 · 2^18 = 2^40,
  // parameters 4·2^18·(1 + 2^18) + 4·2^18 ≈ 2^38. But a cell is 2·4·2^18·(1 + 2^18)·2^22 > 2^61 FLOPs,
  // and 1024 steps of it pass 2^63.
  expect_error(R"({"batch": 4194304, "input": [1024, 1], "layers": [
                   {"type": "lstm", "hidden": 262144, "return_sequences": false}]})",
               "layers[0]", "overflows 64 bits");
}

TEST(Validation, TooManyUnrolledCells) {
  // 4 stacked layers × 300000 steps = 1.2 M cells > 2^20 ops.
  expect_error(with_layers("[300000, 2]", R"({"type": "gru", "hidden": 2, "layers": 4})"), "layers[0]",
               "past 1048576 ops");
}

TEST(Validation, AFolderIsNotANetworkFile) {
  const std::string folder = std::filesystem::temp_directory_path().string();
  try {
    load_model_file(folder);
    FAIL();
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), folder);
    EXPECT_NE(error.problem().find("is a folder"), std::string::npos) << error.what();
  }
}

TEST(Validation, AWholeNumberWrittenAsAFloatSaysHowToWriteIt) {
  expect_error(with_layers("[4]", R"({"type": "dense", "units": 1e3})"), "layers[0].units",
               "must be written as an integer (e.g. 1000)");
  expect_error(with_layers("[4]", R"({"type": "dense", "units": 1e300})"), "layers[0].units", "is too large");
  expect_error(with_layers("[4]", R"({"type": "dense", "units": 2.5})"), "layers[0].units",
               "must be an integer, got a fractional number");
}

}  // namespace
}  // namespace validation_test
}  // namespace splitscope
