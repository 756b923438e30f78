// What a wake-up and a context switch cost on this machine, without Node or PostgreSQL: two
// parties ping-pong one byte over two pipes, as a runtime and its database backend do over a
// socket. The parties are two threads of one process or two processes, on one CPU or on two;
// after each wake-up a party touches a working set of its own, as a real one would. Between
// two processes on one CPU each switch changes address space; between threads it does not.
// docs/performance.md ("Scale-out") has this machine's figures.
//
//   gcc -O2 -pthread -o /tmp/switch-cost bench/tools/switch-cost.c
//   /tmp/switch-cost thread|process <working set KiB> <round trips> <cpu of the second party>
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int to_second[2], to_first[2];
static long round_trips, working_set, second_cpu;
static volatile long sink;

static void pin(long cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) perror("sched_setaffinity"), exit(1);
}

// One cache line in every 64 bytes, written so it stays this party's own.
static void touch(char *memory) {
  long sum = 0;
  for (long i = 0; i < working_set; i += 64) sum += memory[i]++;
  sink += sum;
}

static void party(int in, int out, int first, long cpu) {
  pin(cpu);
  char *memory = malloc(working_set + 1);
  memset(memory, 1, working_set + 1);
  char byte = 0;
  for (long i = 0; i < round_trips; i++) {
    if (first && write(out, &byte, 1) != 1) exit(1);
    if (read(in, &byte, 1) != 1) exit(1);
    touch(memory);
    if (!first && write(out, &byte, 1) != 1) exit(1);
  }
  free(memory);
}

static void *second_thread(void *unused) {
  (void)unused;
  party(to_second[0], to_first[1], 0, second_cpu);
  return NULL;
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s thread|process <working set KiB> <round trips> <cpu>\n", argv[0]);
    return 2;
  }
  int threads = strcmp(argv[1], "thread") == 0;
  working_set = atol(argv[2]) * 1024;
  round_trips = atol(argv[3]);
  second_cpu = atol(argv[4]);
  if (pipe(to_second) != 0 || pipe(to_first) != 0) return perror("pipe"), 1;
  double start = now_ns();
  if (threads) {
    pthread_t thread;
    pthread_create(&thread, NULL, second_thread, NULL);
    party(to_first[0], to_second[1], 1, 0);
    pthread_join(thread, NULL);
  } else {
    pid_t child = fork();
    if (child == 0) {
      party(to_second[0], to_first[1], 0, second_cpu);
      _exit(0);
    }
    party(to_first[0], to_second[1], 1, 0);
    waitpid(child, NULL, 0);
  }
  printf("%s, %ld KiB each, cpus 0 and %ld: %.2f us per round trip\n", argv[1],
         working_set / 1024, second_cpu, (now_ns() - start) / round_trips / 1000);
  return 0;
}
