// RUN: sgc-opt %s --sgc-gpu-to-emu | FileCheck %s
// sgc-gpu-to-emu: each kernel of @sgc_kernels gets a host copy that runs
// one GPU thread; its thread id and barrier become emulator calls, every
// access a bounds check, and each such site is listed in sg.emu_sites. The
// gpu.module itself stays for the device pipeline.

// CHECK: sg.emu_sites = ["scale: memref.load #1", "scale: gpu.barrier #1", "scale: memref.store #1"]
// CHECK: gpu.module @sgc_kernels
// CHECK: gpu.func @scale
// CHECK: func.func @sgc_emu_k_scale(%{{.*}}: !llvm.ptr, %{{.*}}: memref<64xf32>)
// CHECK: call @sgc_emu_rt_thread_id
// CHECK: call @sgc_emu_rt_out_of_bounds
// CHECK: call @sgc_emu_rt_barrier
// CHECK-NOT: gpu.thread_id
// CHECK-NOT: gpu.barrier
// CHECK: return
module attributes {gpu.container_module} {
  gpu.module @sgc_kernels {
    gpu.func @scale(%a: memref<64xf32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %a[%t] : memref<64xf32>
      %two = arith.constant 2.0 : f32
      %w = arith.mulf %v, %two : f32
      gpu.barrier
      memref.store %w, %a[%t] : memref<64xf32>
      gpu.return
    }
  }
}
