/*
 * errors.c - sgc-run's error lines: one "error:" line, then notes, and the
 * exit code that goes with them.
 */
#include "tools/sgc-run/errors.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* "error: " and the formatted message, on a line of its own. */
static void print_error(const char *fmt, va_list args) {
  end_progress_line();
  fputs("error: ", stderr);
  vfprintf(stderr, fmt, args);
  fputc('\n', stderr);
}

/* Prints a usage error and returns exit code 2. */
int usage_error(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  print_error(fmt, args);
  va_end(args);
  fputs("note: see 'sgc-run --help'\n", stderr);
  return SGC_STATUS_USAGE;
}

/* Prints an error about an input file and returns exit code 1. */
int bad_input(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  print_error(fmt, args);
  va_end(args);
  return SGC_STATUS_BAD_INPUT;
}

int out_of_memory(void) {
  end_progress_line();
  fputs("error: out of memory\n", stderr);
  return SGC_STATUS_INTERNAL;
}


/*===----------------------------------------------------------------------===*
 * Ctrl-C
 *===----------------------------------------------------------------------===*/

static volatile sig_atomic_t interrupt_seen = 0;
static volatile sig_atomic_t interrupt_graceful = 0;

/* Only async-signal-safe calls here: write and _exit. */
static void on_sigint(int sig) {
  static const char message[] = "\nerror: interrupted\n";
  (void)sig;
  if (interrupt_graceful && !interrupt_seen) {
    interrupt_seen = 1;
    return;
  }
  if (write(STDERR_FILENO, message, sizeof message - 1) < 0) {
    /* Nothing left to tell. */
  }
  _exit(EXIT_INTERRUPTED);
}

void install_interrupt_handler(void) {
  struct sigaction action;
  /* Started with Ctrl-C ignored (nohup, a background job of a script): it
   * stays ignored. */
  if (sigaction(SIGINT, NULL, &action) == 0 && action.sa_handler == SIG_IGN)
    return;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  /* The runtime's reads and writes need not see EINTR. */
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, NULL);
}

void set_interrupt_graceful(int on) { interrupt_graceful = on ? 1 : 0; }

int interrupt_requested(void) { return interrupt_seen != 0; }

void clear_interrupt(void) { interrupt_seen = 0; }

int interrupted_error(void) {
  end_progress_line();
  fputs("error: interrupted\n", stderr);
  return EXIT_INTERRUPTED;
}
