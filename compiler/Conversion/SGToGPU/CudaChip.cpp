//===- CudaChip.cpp - the chips sgc builds for ---------------------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToGPU/CudaChip.h"

#include "lib/abi/sgc/abi.h"

using namespace mlir::sgc::gpu_kernels;

/// sm_90a as an H200 has it (CUDA C Programming Guide, compute capability
/// 9.0; the H200's 132 SMs): 65,536 registers and 228 KiB of shared memory
/// an SM, of which the driver keeps 1 KiB a resident block, given in
/// 128-byte units.
static const CudaChip kSm90a = {
    /*name=*/"sm_90a",
    /*gpu=*/"H200",
    /*sms=*/132,
    /*registersPerSM=*/65536,
    /*sharedPerSM=*/228 * 1024,
    /*sharedReservedPerBlock=*/1024,
    /*sharedUnit=*/128,
    /*staticSharedLimit=*/SGC_ABI_CUDA_STATIC_SHARED_BYTES,
    /*blockSharedLimit=*/SGC_ABI_CUDA_MAX_SHARED_BYTES,
};

const CudaChip *CudaChip::lookup(llvm::StringRef name) {
  return name == kSm90a.name ? &kSm90a : nullptr;
}

const CudaChip &CudaChip::getDefault() { return kSm90a; }
