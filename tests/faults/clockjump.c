/* A node's wall clock stepped (issue 43's "clock jump on one node"), as NTP's step or an admin's `date -s` does it:
 * CLOCK_REALTIME (and gettimeofday, time) moves by the seconds written in DIR/<hostname>; CLOCK_MONOTONIC does not
 * (a step never moves it). Loaded with LD_PRELOAD into the job's ranks; CLOCKJUMP_DIR names DIR. The test nodes
 * share the machine's clock and a time namespace cannot move CLOCK_REALTIME, so this is the node's clock. libfaketime
 * was tried first: with its monotonic clock left alone (DONT_FAKE_MONOTONIC) Python's time.sleep fails with EINVAL.
 * The offset is re-read at most every 200 ms (a racing read is harmless: an offset is written whole). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef int (*gettime_fn)(clockid_t, struct timespec *);
static gettime_fn real_gettime;
static volatile long offset_s;
static volatile long long next_read_ns;

static void refresh(void) {
    struct timespec now;
    if (!real_gettime) real_gettime = (gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    real_gettime(CLOCK_MONOTONIC, &now);
    long long ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
    if (ns < next_read_ns) return;
    next_read_ns = ns + 200000000LL;
    const char *dir = getenv("CLOCKJUMP_DIR");
    char host[256], path[1024];
    if (!dir || gethostname(host, sizeof host) != 0) return;
    host[sizeof host - 1] = 0;
    snprintf(path, sizeof path, "%s/%s", dir, host);
    FILE *f = fopen(path, "r");
    long v = 0;
    if (f) {
        if (fscanf(f, "%ld", &v) == 1) offset_s = v;
        fclose(f);
    }
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    if (!real_gettime) real_gettime = (gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    int rc = real_gettime(id, ts);
    if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
        refresh();
        ts->tv_sec += offset_s;
    }
    return rc;
}

int gettimeofday(struct timeval *tv, void *tz) {
    struct timespec ts;
    int rc = clock_gettime(CLOCK_REALTIME, &ts);
    if (rc == 0 && tv) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    (void)tz;
    return rc;
}

time_t time(time_t *out) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out) *out = ts.tv_sec;
    return ts.tv_sec;
}
