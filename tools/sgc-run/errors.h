/*
 * errors.h - sgc-run's error lines and exit codes.
 */
#ifndef SGC_TOOLS_SGC_RUN_ERRORS_H
#define SGC_TOOLS_SGC_RUN_ERRORS_H

#include <sgc/runtime.h>

/* Set while a progress line is on the terminal without its newline. */
extern int progress_line_open;

/* Ends an open progress line, so an error starts on a line of its own. */
void end_progress_line(void);

/* Prints |status| as error/note lines, frees it, returns its exit code. */
int report(sgc_status_t *status);

/* Prints a usage error and returns exit code 2. */
int usage_error(const char *fmt, ...);

/* Prints "error: out of memory" and returns the internal-error code. */
int out_of_memory(void);

#endif /* SGC_TOOLS_SGC_RUN_ERRORS_H */
