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

/* Prints an error about an input file and returns exit code 1. */
int bad_input(const char *fmt, ...);

/* Prints "error: out of memory" and returns the internal-error code. */
int out_of_memory(void);

/* Exit code of a run ended by Ctrl-C: 128 + SIGINT, what shells report. */
#define EXIT_INTERRUPTED 130

/* Installs the SIGINT handler. Outside a graceful section, and on a second
 * Ctrl-C, it prints "error: interrupted" and exits 130 at once; inside one
 * (generation), the first Ctrl-C only sets the flag, so that the caller can
 * stop, print and dump what was computed. A SIGINT ignored at start stays
 * ignored. */
void install_interrupt_handler(void);
/* Enters (1) or leaves (0) the graceful section. */
void set_interrupt_graceful(int on);
/* Nonzero once a Ctrl-C arrived. */
int interrupt_requested(void);
/* Forgets a Ctrl-C once it was handled (--chat: the answer stopped). */
void clear_interrupt(void);
/* Prints "error: interrupted" and returns 130. */
int interrupted_error(void);

#endif /* SGC_TOOLS_SGC_RUN_ERRORS_H */
