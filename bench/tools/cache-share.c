// What sharing one CPU with other busy processes costs a process's own work on this machine,
// through the caches alone: a loop of random increments over a working set of its own, timed
// in CPU seconds (not wall time) alone and then as one of N copies pinned to the same CPU. The
// copies run in turn, so any extra CPU time is their working sets evicting each other's.
// docs/performance.md ("Scale-out") has this machine's figures.
//
//   gcc -O2 -o /tmp/cache-share bench/tools/cache-share.c
//   /tmp/cache-share <working set KiB> <copies> <increments>
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

// The CPU seconds of `increments` random increments over `size` bytes, on CPU 0.
static double work(long size, long increments) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) perror("sched_setaffinity"), exit(1);
  unsigned char *memory = calloc(size, 1);
  unsigned long x = 1;
  double start = cpu_seconds();
  for (long i = 0; i < increments; i++) {
    x = x * 6364136223846793005UL + 1442695040888963407UL;  // a linear congruential step
    memory[(x >> 20) % size]++;
  }
  double spent = cpu_seconds() - start;
  free(memory);
  return spent;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s <working set KiB> <copies> <increments>\n", argv[0]);
    return 2;
  }
  long size = atol(argv[1]) * 1024, copies = atol(argv[2]), increments = atol(argv[3]);
  double alone = work(size, increments);
  int out[2];
  if (pipe(out) != 0) return perror("pipe"), 1;
  for (long i = 0; i < copies; i++) {
    if (fork() == 0) {
      double spent = work(size, increments);
      if (write(out[1], &spent, sizeof spent) != sizeof spent) _exit(1);
      _exit(0);
    }
  }
  double shared = 0, each;
  for (long i = 0; i < copies; i++) {
    if (read(out[0], &each, sizeof each) != sizeof each) return 1;
    shared += each;
  }
  while (wait(NULL) > 0) {
  }
  printf("%ld KiB: %.3f s of CPU alone, %.3f s each as one of %ld copies on one CPU (%+.0f %%)\n",
         size / 1024, alone, shared / copies, copies, (shared / copies / alone - 1) * 100);
  return 0;
}
