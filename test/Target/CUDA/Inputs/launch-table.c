/* Prints a CUDA model's launch table as the runtime reads it: per phase the
 * number of launches, the launches of each decoder layer (a histogram: "N
 * layers of K launches"), the distinct kernels, and the kernels of the first
 * layer in order. With --params instead: each kernel's parameter count as the
 * table declares it ("kernel NAME params N") and every step whose operand
 * count differs from its kernel's (the runtime passes one 8-byte address per
 * operand). Usage: launch-table [--params] MODEL.so */
#include "sgc/abi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define MAX_LAYERS 256
#define MAX_KERNELS 256

int main(int argc, char **argv) {
  int params = argc == 3 && strcmp(argv[1], "--params") == 0;
  if (argc != 2 && !params) {
    fprintf(stderr, "usage: launch-table [--params] MODEL.so\n");
    return 2;
  }
  void *lib = dlopen(argv[argc - 1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "error: %s\n", dlerror());
    return 1;
  }
  sgc_abi_query_fn_t query =
      (sgc_abi_query_fn_t)dlsym(lib, SGC_ABI_QUERY_SYMBOL);
  const sgc_model_v2_t *m =
      query ? (const sgc_model_v2_t *)query(SGC_ABI_VERSION_MAJOR,
                                            SGC_ABI_VERSION_MINOR)
            : NULL;
  if (!m || m->header.magic != SGC_ABI_MAGIC || m->device != SGC_ABI_DEVICE_CUDA) {
    fprintf(stderr, "error: not a CUDA sgc model\n");
    return 1;
  }
  const sgc_abi_variant_t *v = &m->variants[0];
  if (params) {
    for (uint32_t k = 0; k < v->num_functions; ++k)
      printf("kernel %s params %u\n", v->kernels[k].name,
             v->kernels[k].num_params);
    unsigned bad = 0;
    for (uint32_t s = 0; s < m->num_steps; ++s) {
      const sgc_abi_step_t *st = &m->steps[s];
      if (st->num_operands != v->kernels[st->function].num_params) {
        printf("step %u: %u operands for %s of %u params\n", s,
               st->num_operands, v->kernels[st->function].name,
               v->kernels[st->function].num_params);
        ++bad;
      }
    }
    printf("steps: %u, operand counts differing from their kernel's: %u\n",
           m->num_steps, bad);
    return 0;
  }
  printf("variant %s: %u kernels, fatbin %llu bytes\n", v->name,
         v->num_functions, (unsigned long long)v->fatbin_bytes);
  for (uint32_t p = 0; p < m->num_phases; ++p) {
    const sgc_abi_phase_t *ph = &m->phases[p];
    unsigned per_layer[MAX_LAYERS] = {0};
    int used[MAX_KERNELS] = {0};
    unsigned distinct = 0, outside = 0;
    for (uint32_t s = ph->first_step; s < ph->first_step + ph->num_steps; ++s) {
      const sgc_abi_step_t *st = &m->steps[s];
      if (st->layer >= 0 && st->layer < MAX_LAYERS)
        ++per_layer[st->layer];
      else
        ++outside;
      if (st->function < MAX_KERNELS && !used[st->function]++)
        ++distinct;
    }
    const char *name = ph->kind == SGC_ABI_PHASE_DECODE ? "decode" : "prefill";
    printf("%s: %u launches, %u distinct kernels, %u outside layers\n", name,
           ph->num_steps, distinct, outside);
    /* Histogram of launches per layer. */
    for (unsigned k = 1; k < 64; ++k) {
      unsigned layers = 0;
      for (int l = 0; l < MAX_LAYERS; ++l)
        layers += per_layer[l] == k;
      if (layers)
        printf("%s: %u layers of %u launches\n", name, layers, k);
    }
    printf("%s layer 0:", name);
    for (uint32_t s = ph->first_step; s < ph->first_step + ph->num_steps; ++s)
      if (m->steps[s].layer == 0) {
        const char *k = v->kernels[m->steps[s].function].name;
        /* The family: the name without its _N suffix. */
        const char *end = strrchr(k, '_');
        printf(" %.*s", end ? (int)(end - k) : (int)strlen(k), k);
      }
    printf("\n");
  }
  return 0;
}
