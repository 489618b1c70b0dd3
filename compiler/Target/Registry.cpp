//===- Registry.cpp - the targets of this build ---------------------------===//
//
// Part of sgc. A new target adds its accessor here.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/CPUTarget.h"
#include "compiler/Target/CUDA/CUDATarget.h"
#include "compiler/Target/Target.h"

using namespace mlir;
using namespace mlir::sgc;

Target::~Target() = default;

ArrayRef<const Target *> mlir::sgc::allTargets() {
  static const Target *const targets[] = {&getCPUTarget(), &getCUDATarget()};
  return targets;
}

const Target *mlir::sgc::lookupTarget(StringRef name) {
  for (const Target *target : allTargets())
    if (target->getName() == name)
      return target;
  return nullptr;
}
