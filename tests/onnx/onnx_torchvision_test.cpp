// torchvision's ResNet-50, exported at test time (random weights) where
// Debian's python3-torch and python3-torchvision are installed, against the
// zoo's resnet50: the same FLOPs and parameters (25,557,032, torchvision's count);
// and torchvision's ResNet-18 run on the cpu with the file's weights against
// PyTorch's own output on the same input.
// Skipped, saying why, where torch is not importable: scripts/setup does not
// install it (it is large, and only this test and export_models.py use it).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

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

TEST(OnnxTorchvision, Resnet18RunsWithItsWeightsAndGivesPyTorchsOutput) {
  if (!torch_importable()) GTEST_SKIP() << kPython << " cannot import torch and torchvision (Debian's python3-torch, "
                                                      "python3-torchvision; scripts/setup does not install them)";
  // Eval mode, the exporter folding each batch norm into its convolution; running statistics other than a fresh
  // layer's, so that the fold matters. The input is splitscope's own for seed 0 (export_models.py computes it).
  const std::string dir = fresh_temp_dir("onnx-resnet18");
  const char* root = std::getenv("SPLITSCOPE_SOURCE_ROOT");
  const std::string script =
      "import importlib.util, numpy, torch, torchvision\n"
      "spec = importlib.util.spec_from_file_location('export_models', '" + std::string(root ? root : ".") +
      "/tests/onnx/export_models.py')\n"
      "export_models = importlib.util.module_from_spec(spec)\n"
      "spec.loader.exec_module(export_models)\n"
      "torch.manual_seed(0)\n"
      "m = torchvision.models.resnet18()\n"
      "with torch.no_grad():\n"
      "    for layer in m.modules():\n"
      "        if isinstance(layer, torch.nn.BatchNorm2d):\n"
      "            layer.running_mean.uniform_(-0.1, 0.1)\n"
      "            layer.running_var.uniform_(0.5, 1.5)\n"
      "m.eval()\n"
      "torch.onnx.export(m, torch.randn(2, 3, 224, 224), '" + dir + "/resnet18.onnx', opset_version=17)\n"
      "with torch.no_grad():\n"
      "    numpy.save('" + dir + "/reference.npy', m(export_models.splitscope_input((2, 3, 224, 224))).numpy())\n";
  const std::string command = std::string(kPython) + " - >/dev/null 2>&1 <<'EOF'\n" + script + "EOF\n";
  ASSERT_EQ(std::system(command.c_str()), 0) << "torch.onnx.export of resnet18 failed:\n" << script;
  const std::string args = "run " + dir + "/resnet18.onnx --strategy single --devices 1 --backend cpu --repeat 1 "
                           "--warmup 0 --quiet --save-output " + dir + "/out.npy";
  const CommandResult result = run_splitscope(args);
  ASSERT_EQ(result.exit_code, 0) << args << "\n" << result.err;
  const NpyArray output = read_npy(dir + "/out.npy");
  const NpyArray reference = read_npy(dir + "/reference.npy");
  EXPECT_EQ(output.shape, (std::vector<int64_t>{2, 1000}));
  ASSERT_EQ(output.values.size(), reference.values.size());
  double worst = 0;
  double scale = 0;
  for (size_t i = 0; i < reference.values.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::abs(output.values[i] - reference.values[i])));
    scale = std::max(scale, static_cast<double>(std::abs(reference.values[i])));
  }
  EXPECT_LE(worst / scale, 1e-4) << "max |splitscope - PyTorch| " << worst << " against max |PyTorch| " << scale;
}

}  // namespace
}  // namespace splitscope::testing
