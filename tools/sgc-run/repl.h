/*
 * repl.h - sgc-run --chat: a multi-turn conversation on stdin.
 */
#ifndef SGC_TOOLS_SGC_RUN_REPL_H
#define SGC_TOOLS_SGC_RUN_REPL_H

#include "tools/sgc-run/generation.h"
#include "tools/sgc-run/images.h"
#include "tools/sgc-run/options.h"
#include "tools/sgc-run/settings.h"

/* Reads a line a turn until end of input (Ctrl-D: returns 0). Each turn
 * prefills only its own tokens: the session's KV cache holds the
 * conversation so far. Ctrl-C stops the answer being generated; "/reset"
 * forgets the conversation; a turn the context cannot hold is refused with
 * a message. |images| (NULL: the model has no vision tower) holds the
 * images of the next user turn, --image's at first; "/image FILE" adds one;
 * prefill chunks of |max_chunk| rows must not split their blocks. Returns 0
 * or an exit code. */
int chat_repl(const options *o, const settings *s, sgc_session_t *session,
              sgc_generate_options_t *gopts, generation *g,
              image_inputs *images, int64_t max_chunk);

#endif /* SGC_TOOLS_SGC_RUN_REPL_H */
