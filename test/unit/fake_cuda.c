/*
 * fake_cuda.c - a stand-in for libcuda.so.1 so the runtime's "no CUDA
 * device" paths can be tested on any machine. FAKE_CUDA_INIT_RESULT is what
 * cuInit returns (100 = CUDA_ERROR_NO_DEVICE); FAKE_CUDA_COUNT the device
 * count cuDeviceGetCount reports.
 */
#ifndef FAKE_CUDA_INIT_RESULT
#define FAKE_CUDA_INIT_RESULT 0
#endif
#ifndef FAKE_CUDA_COUNT
#define FAKE_CUDA_COUNT 0
#endif

int cuInit(unsigned int flags) {
  (void)flags;
  return FAKE_CUDA_INIT_RESULT;
}

int cuDeviceGetCount(int *count) {
  *count = FAKE_CUDA_COUNT;
  return 0;
}

int cuGetErrorName(int error, const char **name) {
  *name = error == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
