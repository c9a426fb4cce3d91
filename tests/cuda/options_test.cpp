// The CUDA options: parsing, names, and the --check tolerance per dtype.

#include <gtest/gtest.h>

#include "exec/cuda_backend.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace options_test {
namespace {

TEST(CudaOptions, LinkModes) {
  EXPECT_EQ(parse_link_mode("device"), LinkMode::kDevice);
  EXPECT_EQ(parse_link_mode("host"), LinkMode::kHost);
  EXPECT_EQ(to_string(LinkMode::kHost), "host");
  try {
    parse_link_mode("pcie");
    FAIL() << "accepted an unknown link mode";
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), "--link");
    EXPECT_NE(error.problem().find("'pcie'"), std::string::npos);
    EXPECT_NE(error.problem().find("device or host"), std::string::npos);
  }
}

TEST(CudaOptions, Dtypes) {
  EXPECT_EQ(parse_dtype("fp32"), Dtype::kFp32);
  EXPECT_EQ(parse_dtype("tf32"), Dtype::kTf32);
  EXPECT_EQ(parse_dtype("bf16"), Dtype::kBf16);
  for (Dtype dtype : {Dtype::kFp32, Dtype::kTf32, Dtype::kBf16}) EXPECT_EQ(parse_dtype(to_string(dtype)), dtype);
  EXPECT_THROW(parse_dtype("fp16"), InputError);
}

TEST(CudaOptions, ToleranceGrowsAsTheMathNarrows) {
  EXPECT_EQ(check_tolerance(Dtype::kFp32), 1e-4);
  EXPECT_LT(check_tolerance(Dtype::kFp32), check_tolerance(Dtype::kTf32));
  EXPECT_LT(check_tolerance(Dtype::kTf32), check_tolerance(Dtype::kBf16));
}

TEST(CudaOptions, DefaultsArePhysicalDeviceLinksFp32Eager) {
  const CudaOptions options;
  EXPECT_EQ(options.mode, DeviceMode::kPhysical);
  EXPECT_EQ(options.link, LinkMode::kDevice);
  EXPECT_EQ(options.dtype, Dtype::kFp32);
  EXPECT_FALSE(options.cuda_graph);
  EXPECT_EQ(options.virtual_devices, 0);
}

}  // namespace
}  // namespace options_test
}  // namespace splitscope::testing
