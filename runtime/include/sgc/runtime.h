/*
 * sgc/runtime.h - the sgc runtime's C API: this header and the parts it
 * includes, sgc/runtime/<part>.h (status, checkpoint, model, session,
 * tokenizer, image, chat, model_files).
 *
 * Loads a compiled model (.so), binds a safetensors checkpoint (or dummy
 * weights) to it, and runs it on a device. The steps are separate so that
 * every check happens before anything runs:
 *
 *   sgc_model_open      dlopen the .so, check the ABI, validate its tables
 *   sgc_weights_bind    open the checkpoint, check every tensor the model
 *                       binds (presence, dtype, shape), map it zero-copy
 *   sgc_session_create  pick the device and CPU variant, allocate the KV
 *                       cache and workspace, start the thread pool
 *   sgc_session_generate / _prefill / _decode
 *
 * Conventions (STYLE.md habit 9):
 *  - Every fallible call returns sgc_status_t*: NULL means success; a
 *    non-NULL status is owned by the caller and freed with sgc_status_free.
 *    Its code is the exit code a tool should use (sgc_status_code_t).
 *  - Handles are opaque and reference counted internally: a weights handle
 *    keeps its model alive and a session keeps both alive, so the release
 *    functions may be called in any order. Release functions accept NULL.
 *  - Options structs are initialized with their _default() function; unset
 *    fields then keep working when later versions append fields.
 *  - Out-parameters are prefixed out_ and written only on success.
 *  - Strings returned by the API are owned by the handle they came from and
 *    live as long as it does, unless stated otherwise.
 *  - No call throws, exits or aborts. Models and weights are immutable once
 *    created and may be shared by threads; a session must be used by one
 *    thread at a time.
 */
#ifndef SGC_RUNTIME_H
#define SGC_RUNTIME_H

/* The API in parts, one a concept; each may be included alone. */
#include "sgc/runtime/status.h"
#include "sgc/runtime/checkpoint.h"
#include "sgc/runtime/model.h"
#include "sgc/runtime/session.h"
#include "sgc/runtime/tokenizer.h"
#include "sgc/runtime/image.h"
#include "sgc/runtime/chat.h"
#include "sgc/runtime/model_files.h"

#endif /* SGC_RUNTIME_H */
