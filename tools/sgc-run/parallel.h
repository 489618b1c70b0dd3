/*
 * parallel.h - --prompt-ids-file: many prompts generated together, each in
 * a sequence slot of its own (--parallel at a time).
 */
#ifndef SGC_TOOLS_SGC_RUN_PARALLEL_H
#define SGC_TOOLS_SGC_RUN_PARALLEL_H

#include "tools/sgc-run/options.h"

#include <sgc/runtime.h>

/* Reads o->prompt_ids_file, generates for every prompt with |base|'s
 * settings and prints each one's ids (or --json records) in order; with
 * --dump-logits PATH, sequence k's rows go to PATH.k. 0 or an exit code. */
int run_parallel(const options *o, sgc_session_t *session,
                 const sgc_generate_options_t *base, int64_t vocab);

#endif /* SGC_TOOLS_SGC_RUN_PARALLEL_H */
