/*
 * errors.c - sgc-run's error lines: one "error:" line, then notes, and the
 * exit code that goes with them.
 */
#include "tools/sgc-run/errors.h"

#include <stdarg.h>
#include <stdio.h>

/*===----------------------------------------------------------------------===*
 * Errors
 *===----------------------------------------------------------------------===*/

/* Set while a progress line is on the terminal without its newline. */
int progress_line_open = 0;

void end_progress_line(void) {
  if (progress_line_open) {
    fputc('\n', stderr);
    progress_line_open = 0;
  }
}

/* Prints |status| as error/note lines, frees it, returns its exit code. */
int report(sgc_status_t *status) {
  int code = (int)sgc_status_code(status);
  size_t i;
  end_progress_line();
  fprintf(stderr, "error: %s\n", sgc_status_message(status));
  for (i = 0; i < sgc_status_note_count(status); ++i)
    fprintf(stderr, "note: %s\n", sgc_status_note(status, i));
  sgc_status_free(status);
  return code == 0 ? SGC_STATUS_INTERNAL : code;
}

/* Prints a usage error and returns exit code 2. */
int usage_error(const char *fmt, ...) {
  va_list args;
  end_progress_line();
  fputs("error: ", stderr);
  va_start(args, fmt);
  vfprintf(stderr, fmt, args);
  va_end(args);
  fputs("\nnote: see 'sgc-run --help'\n", stderr);
  return SGC_STATUS_USAGE;
}

int out_of_memory(void) {
  end_progress_line();
  fputs("error: out of memory\n", stderr);
  return SGC_STATUS_INTERNAL;
}

