#pragma once
// The devices the datasheet-rule tests work out by hand: datasheet numbers,
// as DeviceFacts (device_facts.hpp) would derive them.

#include "sim/machine/device_facts.hpp"

namespace splitscope::testing {

/// `matrix_tflops` at the matrix peak, `fp32_tflops` on the CUDA cores,
/// `sms` SMs, 90% of `memory_gbps` achieved, `launch_us` per kernel.
inline DeviceFacts rule_device(double matrix_tflops, double fp32_tflops, int sms, double memory_gbps,
                               double launch_us = 5) {
  DeviceFacts facts;
  facts.matrix_flops_per_second = matrix_tflops * 1e12;
  facts.vector_flops_per_second = fp32_tflops * 1e12;
  facts.sm_count = sms;
  facts.dram_bytes_per_second = memory_gbps * 1e9 * kStreamingFraction;
  facts.launch_seconds = launch_us * 1e-6;
  return facts;
}

/// Tesla V100 SXM2: 80 SMs, 15.7 TFLOP/s fp32, 900 GB/s (810 achieved).
inline DeviceFacts v100() { return rule_device(15.7, 15.7, 80, 900); }
/// The same V100 with its fp16 tensor cores (125 TFLOP/s) pricing the products.
inline DeviceFacts v100_fp16() { return rule_device(125, 15.7, 80, 900); }
/// A100 SXM4: 108 SMs, 19.5 TFLOP/s fp32, 2039 GB/s.
inline DeviceFacts a100() { return rule_device(19.5, 19.5, 108, 2039); }

}  // namespace splitscope::testing
