/*
 * other_load.h - how much CPU *other* processes used while a benchmark ran.
 *
 *   struct load_sample a = load_sample_now();
 *   ... timed part ...
 *   double other = other_load(&a, &(struct load_sample){...now...});
 *
 * other_load() = average CPUs busy (from /proc/stat, all CPUs) minus the
 * average CPUs this process used (getrusage: user + sys, all its threads),
 * over the wall time between the samples: 0 on a quiet host, up to the CPU
 * count. A 2-thread figure taken with other load near 1 measured the
 * neighbours rather than the code. /proc/stat counts in 10 ms ticks, so
 * windows under ~0.2 s are coarse.
 */
#ifndef SGC_BENCH_OTHER_LOAD_H
#define SGC_BENCH_OTHER_LOAD_H

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct load_sample {
  double wall, own;                   /* seconds */
  unsigned long long busy, total;     /* ticks, all CPUs */
};

static inline struct load_sample load_sample_now(void) {
  struct load_sample s = {0, 0, 0, 0};
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  s.wall = ts.tv_sec + ts.tv_nsec * 1e-9;
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0)
    s.own = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
            ru.ru_stime.tv_usec * 1e-6;
  FILE *f = fopen("/proc/stat", "r");
  if (f) {
    unsigned long long v[10] = {0};
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
               &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) >= 8) {
      for (int i = 0; i < 10; ++i)
        s.total += v[i];
      s.busy = s.total - v[3] - v[4]; /* minus idle and iowait */
    }
    fclose(f);
  }
  return s;
}

/* Average CPUs used by other processes between |a| and |b| (>= 0). */
static inline double other_load(const struct load_sample *a, const struct load_sample *b) {
  double wall = b->wall - a->wall;
  if (wall <= 0 || b->total <= a->total)
    return 0;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  double busy = (double)(b->busy - a->busy) / (double)(b->total - a->total) * ncpu;
  double own = (b->own - a->own) / wall;
  return busy > own ? busy - own : 0;
}

#endif /* SGC_BENCH_OTHER_LOAD_H */
