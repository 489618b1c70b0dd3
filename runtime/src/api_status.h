/*
 * api_status.h - the C API's status object and the conversions every C
 * entry point uses (defined in api.cc), for C API files outside api.cc.
 */
#ifndef SGC_RUNTIME_API_STATUS_H
#define SGC_RUNTIME_API_STATUS_H

#include <sgc/runtime.h>

#include "lib/support/status.h"

struct sgc_status_t {
  sgc::status st;
};

namespace sgc::runtime {

/// NULL for ok, else a heap status the caller frees.
sgc_status_t *status_to_c(status st);
/// For catch (...): the exception in flight as a status.
sgc_status_t *status_from_exception();

} // namespace sgc::runtime

#endif // SGC_RUNTIME_API_STATUS_H
