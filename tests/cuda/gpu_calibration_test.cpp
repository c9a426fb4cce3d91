// A quick calibration on a real GPU measures something sane. Skipped, with
// the reason, where there is no GPU.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "exec/cuda/calibration.hpp"
#include "exec/cuda/device_set.hpp"
#include "reference_network.hpp"

namespace splitscope::testing {
namespace gpu_calibration_test {
namespace {

TEST(GpuCalibration, QuickRunMeasuresRatesBandwidthsAndEveryOp) {
  if (gpu::gpu_count() == 0) GTEST_SKIP() << "no CUDA GPU here: calibration needs one";
  gpu::CalibrationOptions options;
  options.quick = true;
  options.warmup = 1;
  options.repeats = 3;
  options.ops = gpu::op_samples_from_graph(zoo_graph("mlp-small"), {2}, {});
  const gpu::CalibrationResult result = gpu::calibrate_device(options);
  ASSERT_FALSE(result.gemm.empty());
  for (const gpu::GemmRate& rate : result.gemm) EXPECT_GT(rate.flops_per_second, 1e9) << rate.m;
  ASSERT_GE(result.copies.size(), 4u);
  for (const gpu::CopySeries& series : result.copies) {
    EXPECT_GT(series.bandwidth_bytes_per_second, 1e8) << series.kind;
    EXPECT_FALSE(series.points.empty());
  }
  EXPECT_GT(result.launch.device_seconds_per_kernel, 0.0);
  EXPECT_EQ(result.op_times.size(), options.ops.size());
  for (const gpu::OpTime& op : result.op_times) EXPECT_GT(op.seconds, 0.0) << op.signature;
  EXPECT_EQ(nlohmann::json::parse(gpu::calibration_to_json(result))["schema"], "splitscope.calibration/1");
}

}  // namespace
}  // namespace gpu_calibration_test
}  // namespace splitscope::testing
