/*
 * bench/dns/udp-sender.c: one fast DNS UDP flood sender (issue 33, finding 6). The Node sender of
 * flood.js tops out near 30,000 datagrams/s on this machine; this one builds its queries once and
 * hands them to the kernel 64 at a time with sendmmsg(2), paced to an offered rate.
 *
 *   udp-sender <port> <rate q/s> <seconds> <seed> [host]
 *
 * Loopback only (host defaults to 127.0.0.1; anything outside 127.0.0.0/8 is refused). Stops after
 * <seconds> whatever happens (the clock is checked between batches). Queries: A, SRV and TXT for
 * `web.service.registry`, A for `<seed-dependent>.node.registry` names (most of them NXDOMAIN),
 * each with its own ID (a counter mixed with the seed). Prints one JSON line: what it offered.
 *
 * Compiled at bench time into a temporary directory (bench/dns/fast-flood.js); never committed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64
#define TEMPLATES 256
#define MAX_PACKET 128

static uint8_t templates[TEMPLATES][MAX_PACKET];
static size_t template_len[TEMPLATES];

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Appends `name` (dotted) in wire form at p; returns the bytes written. */
static size_t put_name(uint8_t *p, const char *name) {
  size_t n = 0;
  const char *label = name;
  while (*label) {
    const char *dot = strchr(label, '.');
    size_t len = dot ? (size_t)(dot - label) : strlen(label);
    p[n++] = (uint8_t)len;
    memcpy(p + n, label, len);
    n += len;
    label += len + (dot ? 1 : 0);
  }
  p[n++] = 0;
  return n;
}

static size_t build_query(uint8_t *p, const char *name, uint16_t qtype) {
  size_t n = 0;
  p[n++] = 0; p[n++] = 0;          /* id, set per send */
  p[n++] = 0x01; p[n++] = 0x00;    /* RD */
  p[n++] = 0; p[n++] = 1;          /* QDCOUNT 1 */
  memset(p + n, 0, 6); n += 6;     /* AN, NS, AR */
  n += put_name(p + n, name);
  p[n++] = (uint8_t)(qtype >> 8); p[n++] = (uint8_t)qtype;
  p[n++] = 0; p[n++] = 1;          /* IN */
  return n;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s <port> <rate> <seconds> <seed> [127.x.y.z]\n", argv[0]);
    return 2;
  }
  int port = atoi(argv[1]);
  double rate = atof(argv[2]);
  double seconds = atof(argv[3]);
  unsigned seed = (unsigned)strtoul(argv[4], NULL, 10);
  const char *host = argc > 5 ? argv[5] : "127.0.0.1";
  if (port <= 0 || port > 65535 || rate <= 0 || seconds <= 0 || seconds > 600) {
    fprintf(stderr, "bad arguments\n");
    return 2;
  }
  struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
  if (inet_pton(AF_INET, host, &to.sin_addr) != 1 || (ntohl(to.sin_addr.s_addr) >> 24) != 127) {
    fprintf(stderr, "only loopback (127.0.0.0/8) targets\n");
    return 2;
  }

  srand(seed);
  for (int i = 0; i < TEMPLATES; i++) {
    char name[96];
    uint16_t qtype = 1;
    switch (i % 4) {
      case 0: snprintf(name, sizeof name, "web.service.registry"); qtype = 33; break; /* SRV */
      case 1: snprintf(name, sizeof name, "web.service.registry"); qtype = 1; break;  /* A */
      case 2: snprintf(name, sizeof name, "web.service.registry"); qtype = 16; break; /* TXT */
      default: snprintf(name, sizeof name, "n%u-%d.node.registry", seed, rand() % 100000); qtype = 1; break;
    }
    template_len[i] = build_query(templates[i], name, qtype);
  }

  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof to) < 0) {
    perror("socket/connect");
    return 1;
  }
  int sndbuf = 1 << 20;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);

  static uint8_t bufs[BATCH][MAX_PACKET];
  struct iovec iov[BATCH];
  struct mmsghdr msgs[BATCH];
  memset(msgs, 0, sizeof msgs);
  for (int i = 0; i < BATCH; i++) {
    iov[i].iov_base = bufs[i];
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }

  uint64_t attempted = 0, sent = 0, errors = 0, next = 0;
  uint32_t id = seed * 2654435761u;
  double start = now_s();
  double end = start + seconds;
  double t;
  while ((t = now_s()) < end) {
    double due = (t - start) * rate - (double)attempted;
    if (due < BATCH) {
      /* Ahead of the rate: sleep until one batch is due (at least 50 µs, to give the CPU away). */
      double wait = (BATCH - due) / rate;
      if (wait < 50e-6) wait = 50e-6;
      struct timespec ts = { 0, (long)(wait * 1e9) };
      nanosleep(&ts, NULL);
      continue;
    }
    int n = due > BATCH ? BATCH : (int)due;
    for (int i = 0; i < n; i++) {
      size_t k = next++ % TEMPLATES;
      memcpy(bufs[i], templates[k], template_len[k]);
      uint16_t qid = (uint16_t)(id++);
      bufs[i][0] = (uint8_t)(qid >> 8);
      bufs[i][1] = (uint8_t)qid;
      iov[i].iov_len = template_len[k];
    }
    int r = sendmmsg(fd, msgs, (unsigned)n, 0);
    if (r < 0) {
      /* ECONNREFUSED (the port was closed, an ICMP came back), ENOBUFS: count the batch as not sent. */
      errors++;
      if (errno != ECONNREFUSED && errno != ENOBUFS && errno != EAGAIN && errno != EINTR) {
        perror("sendmmsg");
        break;
      }
      /* Not handed to the kernel: not counted as offered, and not retried (the pace goes on). */
      attempted += (uint64_t)n;
      continue;
    }
    attempted += (uint64_t)n;
    sent += (uint64_t)r;
  }
  double took = now_s() - start;
  printf("{\"seed\":%u,\"offered\":%llu,\"seconds\":%.3f,\"offeredPerSecond\":%.0f,\"sendErrors\":%llu}\n",
         seed, (unsigned long long)sent, took, (double)sent / took, (unsigned long long)errors);
  close(fd);
  return 0;
}
