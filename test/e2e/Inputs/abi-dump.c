/* Prints the ABI table of a compiled model: one line per KV layer and per CPU
 * variant, the plan's size per phase, the manifest's tensors and bytes per
 * graph object, the image record, and the totals. Used by the anti-shortcut tests to read what the
 * compiler promised the runtime. Usage: abi-dump MODEL.so */
#include "sgc/abi.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: abi-dump MODEL.so\n");
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "error: %s\n", dlerror());
    return 1;
  }
  sgc_abi_query_fn_t query = (sgc_abi_query_fn_t)dlsym(lib, SGC_ABI_QUERY_SYMBOL);
  if (!query) {
    fprintf(stderr, "error: no %s\n", SGC_ABI_QUERY_SYMBOL);
    return 1;
  }
  const sgc_model_v2_t *m = (const sgc_model_v2_t *)query(SGC_ABI_VERSION_MAJOR,
                                                          SGC_ABI_VERSION_MINOR);
  if (!m || m->header.magic != SGC_ABI_MAGIC) {
    fprintf(stderr, "error: bad table\n");
    return 1;
  }
  printf("model %s family %s vocab %" PRId64 " context %" PRId64 "\n",
         m->model_id, m->family, m->vocab_size, m->context_length);
  uint64_t total = 0;
  for (uint32_t i = 0; i < m->num_layers; ++i) {
    const sgc_abi_kv_layer_t *l = &m->kv_layers[i];
    uint64_t bytes = (uint64_t)l->slots * l->bytes_per_token;
    total += bytes;
    printf("layer %u %s slots %" PRId64 " kv_heads %" PRId64 " head_dim %" PRId64
           " v_from_k %u v_cache %u bytes %" PRIu64 "\n",
           i, l->kind == SGC_ABI_KV_RING ? "ring" : "full", l->slots, l->kv_heads,
           l->head_dim, l->v_from_k, l->has_v_cache, bytes);
  }
  printf("kv total %" PRIu64 "\n", total);
  for (uint32_t i = 0; i < m->num_variants; ++i)
    printf("variant %s features 0x%" PRIx64 " functions %u\n",
           m->variants[i].name, m->variants[i].required_cpu_features,
           m->variants[i].num_functions);
  for (uint32_t i = 0; i < m->num_phases; ++i) {
    const sgc_abi_phase_t *p = &m->phases[i];
    if (p->kind == SGC_ABI_PHASE_DECODE_BATCH)
      printf("phase decode_b%" PRId64 " steps %u\n", p->max_tokens,
             p->num_steps);
    else
      printf("phase %s steps %u\n",
             p->kind == SGC_ABI_PHASE_DECODE    ? "decode"
             : p->kind == SGC_ABI_PHASE_PREFILL ? "prefill"
                                                : "encode_image",
             p->num_steps);
  }
  printf("tensors %u\n", m->num_tensors);
  /* Per graph object, in first-use order. */
  for (uint32_t i = 0; i < m->num_tensors; ++i) {
    const char *object = m->tensors[i].graph_object ? m->tensors[i].graph_object : "";
    int seen = 0;
    for (uint32_t j = 0; j < i && !seen; ++j)
      seen = m->tensors[j].graph_object &&
             strcmp(m->tensors[j].graph_object, object) == 0;
    if (seen)
      continue;
    uint64_t count = 0, bytes = 0;
    for (uint32_t j = i; j < m->num_tensors; ++j)
      if (m->tensors[j].graph_object &&
          strcmp(m->tensors[j].graph_object, object) == 0) {
        ++count;
        bytes += m->tensors[j].bytes;
      }
    printf("object %s tensors %" PRIu64 " bytes %" PRIu64 "\n", object, count,
           bytes);
  }
  if (m->header.struct_size >= sizeof(sgc_model_v2_t) && m->image)
    printf("image tokens %d %d %d patch %d image %d kernel %d soft %" PRId64 "\n",
           m->image->image_token_id, m->image->boi_token_id,
           m->image->eoi_token_id, m->image->patch_size, m->image->image_size,
           m->image->pooling_kernel, m->image->soft_tokens);
  return 0;
}
