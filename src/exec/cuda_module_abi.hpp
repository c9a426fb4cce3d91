#pragma once
/// \file
/// The CUDA backend as a module loaded on demand (as ggml loads its backends):
/// cuBLAS, cuBLASLt, cuDNN and CUPTI cost every process that links them about
/// 0.3 s of start-up (cuBLASLt's static initialisers and relocations), paid by
/// every `splitscope` command, GPU or not. So the executable links none of
/// them: the CUDA executor, the GPU calibrator and the fused cuDNN RNN live in
/// libsplitscope_cuda.so, which src/exec/cuda_backend_loader.cpp dlopen()s the
/// first time one of them is asked for, and reaches through this one table.
///
/// The table carries C++ types, so the module and the executable must come
/// from the same build: abi_version and build_revision are checked before any
/// entry is called.

#include <cstddef>
#include <memory>

#include "exec/cuda/calibration.hpp"
#include "exec/cuda/fused_rnn.hpp"
#include "exec/cuda_backend.hpp"

namespace splitscope {

/// Raised whenever a field of the table or a type it passes changes meaning.
inline constexpr int kCudaModuleAbiVersion = 1;

/// The sizes of the types that cross the boundary, compiled into both sides:
/// a module left over from an older build whose types differ is refused
/// instead of called (a check of layout, not of meaning: that is the version's).
inline constexpr std::size_t kCudaModuleLayout =
    sizeof(CudaOptions) ^ (sizeof(gpu::CalibrationOptions) << 8) ^ (sizeof(gpu::FusedRnnRequest) << 16) ^
    (sizeof(gpu::FusedRnnResult) << 24) ^ (sizeof(calibration::CalibrationResult) << 32) ^ (sizeof(Plan) << 40) ^
    (sizeof(RunOptions) << 48) ^ (sizeof(RunResult) << 56);

struct CudaModuleEntryPoints {
  int abi_version = 0;
  std::size_t layout = 0;                 ///< kCudaModuleLayout as the module was compiled
  const char* build_revision = nullptr;  ///< git_revision.h's, for the same-build check
  int (*gpu_count)() = nullptr;
  std::unique_ptr<Executor> (*make_executor)(const CudaOptions&) = nullptr;
  calibration::CalibrationResult (*calibrate_device)(const gpu::CalibrationOptions&) = nullptr;
  gpu::FusedRnnResult (*run_fused_rnn)(const gpu::FusedRnnRequest&) = nullptr;
};

/// The one symbol the module exports.
inline constexpr const char* kCudaModuleEntrySymbol = "splitscope_cuda_module_entry_points";
using CudaModuleEntryFunction = const CudaModuleEntryPoints* (*)();

}  // namespace splitscope
