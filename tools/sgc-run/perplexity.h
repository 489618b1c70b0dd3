/*
 * perplexity.h - --perplexity: how well the model predicts a text, scored
 * as llama-perplexity scores it, and --kl-divergence-base: how far its
 * next-token distributions are from another run's (e.g. Q4_0 against
 * bf16).
 */
#ifndef SGC_TOOLS_SGC_RUN_PERPLEXITY_H
#define SGC_TOOLS_SGC_RUN_PERPLEXITY_H

#include "tools/sgc-run/options.h"
#include "tools/sgc-run/settings.h"

#include <sgc/runtime.h>

/* Tokenizes o->perplexity_path (BOS first), cuts it into chunks of
 * o->perplexity_context tokens, each starting with BOS, runs each chunk
 * from position 0 and scores the second half of its positions (each
 * row's log-probability of the next token). Prints the running perplexity
 * per chunk and the estimate with its uncertainty on stdout.
 *
 * With o->kl_base_path: a missing file is written (the tokens, then every
 * scored row's log-probabilities, f32); an existing one is read and each
 * row compared: mean KL divergence (base || this run), and how often both
 * put the same token on top. Returns 0 or an exit code (printed). */
int run_perplexity(const options *o, const settings *s,
                   sgc_session_t *session, int64_t vocab,
                   int64_t max_prefill_chunk);

#endif /* SGC_TOOLS_SGC_RUN_PERPLEXITY_H */
