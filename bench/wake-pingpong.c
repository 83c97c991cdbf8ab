/*
 * wake-pingpong: the round trip of a one-byte ping-pong over two pipes between a parent and a child
 * pinned to CPUs A and B, with GAP_US of sleep between round trips so the other CPU can go idle, as
 * it does under a paced load. Same CPU against two CPUs is what the pinned placement changes for
 * each hop of a proxied request (bench/placement.ts). Prints p50, p90, p99 and max in microseconds.
 * usage: wake-pingpong CPU_A CPU_B ROUND_TRIPS GAP_US   (cc -O2 -o wake-pingpong wake-pingpong.c)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    perror("sched_setaffinity");
    exit(1);
  }
}

static int cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: wake-pingpong CPU_A CPU_B ROUND_TRIPS GAP_US\n");
    return 2;
  }
  int a = atoi(argv[1]), b = atoi(argv[2]), n = atoi(argv[3]), gap = atoi(argv[4]);
  if (n < 1) return 2;
  int ping[2], pong[2];
  if (pipe(ping) || pipe(pong)) return 1;
  pid_t child = fork();
  char c = 0;
  if (child == 0) {
    pin(b);
    for (int i = 0; i < n; i++) {
      if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1) return 1;
    }
    return 0;
  }
  pin(a);
  int64_t *rt = malloc(sizeof *rt * (size_t)n);
  struct timespec g = {0, (long)gap * 1000};
  for (int i = 0; i < n; i++) {
    if (gap > 0) nanosleep(&g, NULL);
    int64_t t = now_ns();
    if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) return 1;
    rt[i] = now_ns() - t;
  }
  waitpid(child, NULL, 0);
  qsort(rt, (size_t)n, sizeof *rt, cmp);
  printf("cpus=%d,%d round_trips=%d gap_us=%d p50_us=%.1f p90_us=%.1f p99_us=%.1f max_us=%.1f\n", a, b, n, gap, rt[n / 2] / 1e3, rt[n * 9 / 10] / 1e3,
         rt[n * 99 / 100] / 1e3, rt[n - 1] / 1e3);
  return 0;
}
