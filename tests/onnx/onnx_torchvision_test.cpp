// torchvision's ResNet-50, exported at test time (random weights) where
// Debian's python3-torch and python3-torchvision are installed, against the
// zoo's resnet50: the same FLOPs and parameters (25,557,032, torchvision's count).
// Skipped, saying why, where torch is not importable: scripts/setup does not
// install it (it is large, and only this test and export_models.py use it).

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "../cli/cli_test_support.hpp"
#include "onnx_test_support.hpp"

namespace splitscope::testing {
namespace {

constexpr const char* kPython = "/usr/bin/python3";

bool torch_importable() {
  const std::string probe = std::string(kPython) + " -c 'import torch, torchvision' >/dev/null 2>&1";
  return std::filesystem::exists(kPython) && std::system(probe.c_str()) == 0;
}

/// Exports resnet50 in training mode, so that batch norm stays a node of its
/// own (an eval-mode export folds it into the convolutions: resnet50-folded).
std::string export_resnet50(const std::string& dir, bool training) {
  const std::string path = dir + (training ? "/resnet50.onnx" : "/resnet50-folded.onnx");
  const std::string script =
      "import torch, torchvision\n"
      "torch.manual_seed(0)\n"
      "m = torchvision.models.resnet50()\n"
      "m.train(" + std::string(training ? "True" : "False") + ")\n"
      "torch.onnx.export(m, torch.randn(1, 3, 224, 224), '" + path + "', opset_version=14,\n"
      "    training=torch.onnx.TrainingMode." + (training ? "TRAINING" : "EVAL") + ",\n"
      "    do_constant_folding=" + (training ? "False" : "True") + ")\n";
  const std::string command = std::string(kPython) + " - >/dev/null 2>&1 <<'EOF'\n" + script + "EOF\n";
  return std::system(command.c_str()) == 0 ? path : "";
}

TEST(OnnxTorchvision, Resnet50MatchesTheZoo) {
  if (!torch_importable()) GTEST_SKIP() << kPython << " cannot import torch and torchvision (Debian's python3-torch, "
                                                      "python3-torchvision; scripts/setup does not install them)";
  const std::string dir = fresh_temp_dir("onnx-torchvision");
  for (const bool training : {true, false}) {
    const std::string path = export_resnet50(dir, training);
    ASSERT_FALSE(path.empty()) << "torch.onnx.export of resnet50 failed";
    const auto exported = inspect_onnx(path, "--batch 64");
    const CommandResult zoo_run = run_splitscope(std::string("inspect ") + (training ? "resnet50" : "resnet50-folded") +
                                                 " --json");
    ASSERT_EQ(zoo_run.exit_code, 0) << zoo_run.err;
    const auto zoo = nlohmann::json::parse(zoo_run.out);
    EXPECT_EQ(exported.at("params"), zoo.at("params")) << path;
    EXPECT_EQ(exported.at("flops"), zoo.at("flops")) << path;
    if (training) {
      EXPECT_EQ(exported.at("params"), 25557032);
    }
  }
}

}  // namespace
}  // namespace splitscope::testing
