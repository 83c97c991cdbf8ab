/*
 * openloop: an open-loop HTTP/1.1 keep-alive load for the bench's paced p99 (bench/openloop.ts
 * compiles it with cc at bench time).
 *
 * Each of C connections has its own schedule of intended send times, drawn before anything is
 * measured: Poisson arrivals (exponential gaps) or even gaps with a random phase, at RATE/C per
 * second each. A request is sent at its intended time if its connection is free, else as soon as
 * the response before it ends (HTTP/1.1 without pipelining). Latency is taken from the intended
 * send time to the end of the response, so time a request waited behind a slow one is counted
 * (no coordinated omission); the service time (from the real send) is reported beside it.
 *
 * Its own accuracy is measured too: "lag" is how late a request went out when its connection was
 * free at the intended time, i.e. the generator's timer wake-up and event handling. The timer is a
 * timerfd at absolute nanoseconds with the thread's timer slack set to 1 ns, not a millisecond
 * poll timeout, so requests are not sent in millisecond bursts.
 *
 * usage: openloop HOST PORT CONNECTIONS RATE DURATION_S WARMUP_S poisson|even SEED
 * Prints one line: "openloop" and key=value pairs (integers; times in microseconds).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 1024
#define BUF 4096
/** After the last intended send, responses still outstanding this long are counted as errors. */
#define DRAIN_NS 2000000000LL

struct conn {
  int fd;
  int busy;
  int64_t next;     /* intended send time of the next request */
  int64_t intended; /* of the request in flight */
  int64_t sent;
  char buf[BUF];
  size_t len;
};

static const char REQUEST[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: kubeward-openloop\r\n\r\n";
static struct conn conns[MAX_CONNS];
static int nconns;
static double gap_mean_ns;
static int poisson;
static uint64_t rng;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* xorshift64*: the schedule is reproducible from SEED. */
static double uniform01(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static int64_t next_gap(void) {
  if (!poisson) return (int64_t)gap_mean_ns;
  double u = uniform01();
  return (int64_t)(-log(1.0 - u) * gap_mean_ns);
}

static int64_t *lat, *svc, *lag;
static size_t nlat, nlag, cap;
static long errors, queued;
static int64_t measure_from;

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least q of the values at or below it. */
static int64_t pct(int64_t *v, size_t n, double q) {
  if (n == 0) return -1;
  size_t k = (size_t)ceil(q * (double)n);
  if (k < 1) k = 1;
  return v[k - 1];
}

static void die(const char *what) {
  fprintf(stderr, "openloop: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void send_request(struct conn *c, int64_t now) {
  c->intended = c->next;
  c->sent = now;
  c->busy = 1;
  c->len = 0;
  ssize_t w = write(c->fd, REQUEST, sizeof REQUEST - 1);
  if (w != (ssize_t)(sizeof REQUEST - 1)) {
    errors++;
    c->busy = 0;
  }
  c->next += next_gap();
}

/* Returns 1 when buf holds one whole 200 response with a Content-Length body, 0 for more to read, -1 for anything else. */
static int complete(struct conn *c) {
  c->buf[c->len < BUF ? c->len : BUF - 1] = 0;
  char *end = strstr(c->buf, "\r\n\r\n");
  if (end == NULL) return c->len >= BUF - 1 ? -1 : 0;
  if (strncmp(c->buf, "HTTP/1.1 200 ", 13) != 0) return -1;
  long body = -1;
  for (char *line = strstr(c->buf, "\r\n"); line != NULL && line < end; line = strstr(line + 2, "\r\n")) {
    if (strncasecmp(line + 2, "content-length:", 15) == 0) body = strtol(line + 17, NULL, 10);
  }
  if (body < 0) return -1;
  size_t want = (size_t)(end + 4 - c->buf) + (size_t)body;
  if (c->len < want) return 0;
  return c->len == want ? 1 : -1;
}

int main(int argc, char **argv) {
  if (argc != 9) {
    fprintf(stderr, "usage: openloop HOST PORT CONNECTIONS RATE DURATION_S WARMUP_S poisson|even SEED\n");
    return 2;
  }
  nconns = atoi(argv[3]);
  double rate = atof(argv[4]);
  double duration = atof(argv[5]), warmup = atof(argv[6]);
  poisson = strcmp(argv[7], "poisson") == 0;
  rng = strtoull(argv[8], NULL, 10) * 0x9E3779B97F4A7C15ULL + 1;
  if (nconns < 1 || nconns > MAX_CONNS || !(rate > 0) || !(duration > 0) || !(warmup >= 0) || (!poisson && strcmp(argv[7], "even") != 0)) {
    fprintf(stderr, "openloop: bad arguments (1-%d connections, rate > 0, duration > 0, warmup >= 0, poisson|even)\n", MAX_CONNS);
    return 2;
  }
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  gap_mean_ns = 1e9 * nconns / rate;
  cap = (size_t)(rate * (duration + 1) * 1.5) + 1024;
  lat = malloc(cap * sizeof *lat);
  svc = malloc(cap * sizeof *svc);
  lag = malloc(cap * sizeof *lag);
  if (!lat || !svc || !lag) die("malloc");

  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
  if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) {
    fprintf(stderr, "openloop: HOST must be an IPv4 address, got %s\n", argv[1]);
    return 2;
  }
  int ep = epoll_create1(0);
  int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
  if (ep < 0 || tfd < 0) die("epoll/timerfd");
  struct epoll_event ev = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
  epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
  for (int i = 0; i < nconns; i++) {
    struct conn *c = &conns[i];
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0) die("socket");
    if (connect(c->fd, (struct sockaddr *)&addr, sizeof addr) != 0) die("connect");
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ev.events = EPOLLIN;
    ev.data.u32 = (uint32_t)i;
    epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
  }
  int64_t start = now_ns() + 10000000LL; /* 10 ms to settle after the connects */
  measure_from = start + (int64_t)(warmup * 1e9);
  int64_t stop_sending = measure_from + (int64_t)(duration * 1e9);
  /* Phases: even gaps start at a random point of the first gap, so connections are not in step. */
  for (int i = 0; i < nconns; i++) conns[i].next = start + (int64_t)(uniform01() * gap_mean_ns);

  long sent_measured = 0;
  for (;;) {
    int64_t now = now_ns();
    int inflight = 0;
    int64_t earliest = INT64_MAX;
    for (int i = 0; i < nconns; i++) {
      struct conn *c = &conns[i];
      if (!c->busy && c->next < stop_sending && c->next <= now) {
        int64_t late = now - c->next;
        if (c->next >= measure_from) {
          lag[nlag < cap ? nlag++ : cap - 1] = late;
          sent_measured++;
        }
        send_request(c, now);
      }
      if (c->busy) inflight++;
      else if (c->next < stop_sending && c->next < earliest) earliest = c->next;
    }
    if (now >= stop_sending && inflight == 0) break;
    if (now >= stop_sending + DRAIN_NS) {
      errors += inflight;
      break;
    }
    struct itimerspec its = {0};
    int64_t at = earliest != INT64_MAX ? earliest : stop_sending + DRAIN_NS;
    its.it_value.tv_sec = at / 1000000000LL;
    its.it_value.tv_nsec = at % 1000000000LL;
    timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
    struct epoll_event evs[64];
    int n = epoll_wait(ep, evs, 64, 1000);
    if (n < 0 && errno != EINTR) die("epoll_wait");
    for (int k = 0; k < n; k++) {
      if (evs[k].data.u32 == UINT32_MAX) {
        uint64_t expirations;
        if (read(tfd, &expirations, sizeof expirations) < 0 && errno != EAGAIN) die("timerfd read");
        continue;
      }
      struct conn *c = &conns[evs[k].data.u32];
      ssize_t r = read(c->fd, c->buf + c->len, BUF - 1 - c->len);
      if (r <= 0) {
        fprintf(stderr, "openloop: connection %u closed by the peer\n", evs[k].data.u32);
        return 1;
      }
      c->len += (size_t)r;
      int done = complete(c);
      if (done == 0) continue;
      int64_t t = now_ns();
      if (done < 0) {
        fprintf(stderr, "openloop: unexpected response on connection %u\n", evs[k].data.u32);
        return 1;
      }
      c->busy = 0;
      if (c->intended >= measure_from && nlat < cap) {
        lat[nlat] = t - c->intended;
        svc[nlat] = t - c->sent;
        nlat++;
      }
      /* Its next request is already due: it waited behind this response, and is sent now. */
      if (c->next <= t && c->next < stop_sending) {
        if (c->next >= measure_from) {
          queued++;
          sent_measured++;
        }
        send_request(c, t);
      }
    }
  }
  qsort(lat, nlat, sizeof *lat, cmp64);
  qsort(svc, nlat, sizeof *svc, cmp64);
  qsort(lag, nlag, sizeof *lag, cmp64);
#define US(v) ((long long)((v) < 0 ? -1 : ((v) + 500) / 1000))
  printf("openloop requests=%zu sent=%ld errors=%ld queued=%ld connections=%d rate=%.0f duration_s=%.3f arrivals=%s"
         " lat_p50_us=%lld lat_p90_us=%lld lat_p99_us=%lld lat_p999_us=%lld lat_max_us=%lld"
         " svc_p50_us=%lld svc_p99_us=%lld lag_p50_us=%lld lag_p99_us=%lld lag_max_us=%lld\n",
         nlat, sent_measured, errors, queued, nconns, rate, duration, poisson ? "poisson" : "even", US(pct(lat, nlat, 0.5)), US(pct(lat, nlat, 0.9)),
         US(pct(lat, nlat, 0.99)), US(pct(lat, nlat, 0.999)), US(nlat ? lat[nlat - 1] : -1), US(pct(svc, nlat, 0.5)), US(pct(svc, nlat, 0.99)),
         US(pct(lag, nlag, 0.5)), US(pct(lag, nlag, 0.99)), US(nlag ? lag[nlag - 1] : -1));
  return 0;
}
