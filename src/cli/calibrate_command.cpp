// `splitscope calibrate [--device K] --out FILE.json`: measures one GPU
// (matrix-product rates, copy bandwidth and latency, launch overhead, and the
// time of every op slice the zoo's networks produce when split 1, 2 and 4
// ways and pipelined in 2, 4 and 8 micro-batches) and writes the result as
// JSON (schema splitscope.calibration/1, fields and units in
// src/exec/cuda/calibration.hpp). Without a GPU: exit 3.

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "cli/network_loading.hpp"
#include "exec/cuda/calibration.hpp"
#include "exec/cuda_backend.hpp"
#include "ir/zoo.hpp"
#include "report/text_table.hpp"
#include "util/atomic_file.hpp"
#include "util/errors.hpp"

namespace splitscope::cli {
namespace {

struct CalibrateOptions {
  int device = 0;
  std::string out;
  std::string dtype = "fp32";
  int repeats = 20;
  bool quick = false;
  uint64_t seed = 0;
  std::vector<std::string> networks;
};

std::vector<gpu::OpSample> zoo_samples(const std::vector<std::string>& names) {
  std::vector<gpu::OpSample> samples;
  std::vector<std::string> seen;
  for (const std::string& name : names) {
    const auto graph = load_network(name);
    // The splits the strategies make on 2 and 4 devices, and pipeline micro-batches.
    for (gpu::OpSample& sample : gpu::op_samples_from_graph(graph, {2, 4}, {2, 4, 8})) {
      if (std::find(seen.begin(), seen.end(), sample.signature) != seen.end()) continue;
      seen.push_back(sample.signature);
      samples.push_back(std::move(sample));
    }
  }
  return samples;
}

void print_summary(const gpu::CalibrationResult& result, const std::string& out) {
  double best_fp32 = 0;
  for (const gpu::GemmRate& rate : result.gemm) {
    if (rate.math == "fp32") best_fp32 = std::max(best_fp32, rate.flops_per_second);
  }
  std::cout << fmt::format("{} (GPU {}, {} SMs, {}), driver {}, cuBLAS {}, cuDNN {}\n", result.device_name,
                           result.device, result.sm_count, binary_bytes(static_cast<double>(result.memory_bytes)),
                           result.driver, result.cublas, result.cudnn);
  std::cout << fmt::format("fp32 GEMM peak measured: {}FLOP/s\n", si_count(best_fp32));
  for (const gpu::CopySeries& series : result.copies) {
    std::cout << fmt::format("{:<17} {}/s, latency {:.1f} us\n", series.kind,
                             binary_bytes(series.bandwidth_bytes_per_second), series.latency_seconds * 1e6);
  }
  std::cout << fmt::format("launch overhead: {:.2f} us host, {:.2f} us device per empty kernel\n",
                           result.launch.host_seconds_per_launch * 1e6, result.launch.device_seconds_per_kernel * 1e6);
  std::cout << fmt::format("{} op shapes timed; written to {}\n", result.op_times.size(), out);
  for (const std::string& note : result.notes) std::cout << "note: " << note << "\n";
}

}  // namespace

Command add_calibrate_command(CLI::App& app) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* sub = app.add_subcommand("calibrate", "Measure a GPU and write its calibration (JSON) for the simulator");
  sub->add_option("--device", options->device, "the GPU to measure")->capture_default_str();
  sub->add_option("--out", options->out, "where to write the JSON, e.g. models/machines/h100.json")->required();
  sub->add_option("--dtype", options->dtype, "math of the op times: fp32, tf32, bf16")->capture_default_str();
  sub->add_option("--repeat", options->repeats, "timed repeats per measurement (medians are kept)")
      ->capture_default_str();
  sub->add_option("--seed", options->seed, "weights and inputs of the op timings")->capture_default_str();
  sub->add_option("--networks", options->networks, "networks whose op shapes to time (default: the whole zoo)")
      ->delimiter(',');
  sub->add_flag("--quick", options->quick,
                "fewer shapes and sizes, the small networks only: a smoke test, not a calibration");
  return {sub, [options](const std::vector<std::string>&) {
            parse_dtype(options->dtype);  // bad input first, before any measuring
            gpu::CalibrationOptions calibration;
            calibration.device = options->device;
            calibration.dtype = options->dtype;
            calibration.repeats = options->repeats;
            calibration.quick = options->quick;
            calibration.seed = options->seed;
            calibration.warmup = options->quick ? 1 : 3;
            std::vector<std::string> names = options->networks;
            if (names.empty()) {
              for (const std::string& name : zoo_names(ZooShelf::kNetworks)) {
                const bool small = name.size() > 6 && name.ends_with("-small");
                if (!options->quick || small) names.push_back(name);
              }
            }
            calibration.ops = zoo_samples(names);
            const gpu::CalibrationResult result = gpu::calibrate_device(calibration);
            write_file_atomically(options->out, gpu::calibration_to_json(result));
            print_summary(result, options->out);
            return 0;
          }};
}

}  // namespace splitscope::cli
