/* Native reference for bench/decode.ts: Tandem's C decode path (wasm/src/image.c over libavcodec
 * and libswscale) built with gcc against Debian's libav (with its x86 assembly), run the way the
 * wasm pool runs it: N threads, each with one td_worker reused across jobs, taking the next file
 * from a shared counter, one image per thread at a time.
 *
 *   decode-native [--threads N] [--width W --height H] [--native-size] [--reduced] FILE...
 *
 * Prints one JSON line: {"images":..,"seconds":..,"cpu":..,"maxrss_kb":..,"failed":..}
 * (wall and CPU seconds of the timed part only; files are read before the clock starts).
 *
 * The job record keeps 32-bit pointers (it mirrors wasm memory), so every buffer a job points
 * at is mapped below 2 GiB with MAP_32BIT. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include "../../wasm/src/fail.h"
#include "../../wasm/src/image.h"
#include "../../wasm/src/probe.h"
#include "../../wasm/src/tandem_decode.h"

#define PADDING 64 /* AV_INPUT_BUFFER_PADDING_SIZE: zero bytes after each input */

typedef struct {
  uint8_t *data;
  int len;
} input;

static input *inputs;
static int count, out_w = 224, out_h = 224, native_size, reduced;
static atomic_int next_item, failed;

static void *low_alloc(size_t n) {
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap(MAP_32BIT)");
    exit(2);
  }
  return p;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu_seconds(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

/* The request decodeInto(bytes, slot, { width, height, fit: 'cover', reducedScale }) makes;
 * --native-size asks for the source size with no resize (decode + colour conversion only). */
/* Peak resident set of this process image (VmHWM; ru_maxrss would include the parent's memory
 * from before exec). */
static long peak_rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
  if (f) fclose(f);
  return kb;
}

static void fill_job(td_job *job, const input *in, uint8_t *dst) {
  memset(job, 0, sizeof *job);
  job->kind = TD_KIND_IMAGE;
  job->src = (int32_t)(uintptr_t)in->data;
  job->src_len = in->len;
  job->dst = (int32_t)(uintptr_t)dst;
  job->channels = 3;
  job->filter = TD_FILTER_BILINEAR;
  job->max_pixels = 100000000;
  job->allow_reduced = reduced;
  job->apply_orientation = 1;
  if (native_size) {
    td_probe pr;
    td_probe_image(in->data, in->len, &pr);
    job->dst_w = pr.width;
    job->dst_h = pr.height;
    job->fit = TD_FIT_STRETCH;
  } else {
    job->dst_w = out_w;
    job->dst_h = out_h;
    job->fit = TD_FIT_COVER;
  }
}

static size_t max_out_bytes(void) {
  size_t most = (size_t)out_w * out_h * 3;
  for (int i = 0; native_size && i < count; i++) {
    td_probe pr;
    td_probe_image(inputs[i].data, inputs[i].len, &pr);
    if ((size_t)pr.width * pr.height * 3 > most) most = (size_t)pr.width * pr.height * 3;
  }
  return most;
}

static void *run_thread(void *arg) {
  uint8_t *dst = arg;
  td_worker worker;
  if (td_worker_init(&worker) != 0) {
    fprintf(stderr, "td_worker_init failed\n");
    exit(2);
  }
  td_job *job = low_alloc(sizeof *job);
  for (int i; (i = atomic_fetch_add(&next_item, 1)) < count;) {
    fill_job(job, &inputs[i], dst);
    if (td_decode_image(&worker, job) != TD_OK) {
      if (atomic_fetch_add(&failed, 1) == 0) fprintf(stderr, "item %d: %s\n", i, job->message);
    }
  }
  td_worker_free(&worker);
  munmap(job, sizeof *job);
  return NULL;
}

static uint8_t *read_file(const char *path, int *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *data = low_alloc((size_t)n + PADDING); /* zero-filled, padding included */
  if (fread(data, 1, (size_t)n, f) != (size_t)n) {
    perror(path);
    exit(2);
  }
  fclose(f);
  *len = (int)n;
  return data;
}

int main(int argc, char **argv) {
  int threads = 1;
  inputs = calloc((size_t)argc, sizeof *inputs);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--width") && i + 1 < argc)
      out_w = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--height") && i + 1 < argc)
      out_h = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--native-size"))
      native_size = 1;
    else if (!strcmp(argv[i], "--reduced"))
      reduced = 1;
    else {
      inputs[count].data = read_file(argv[i], &inputs[count].len);
      count++;
    }
  }
  if (count == 0 || threads < 1) {
    fprintf(stderr, "usage: decode-native [--threads N] [--width W --height H] [--native-size] [--reduced] FILE...\n");
    return 2;
  }
  td_log_init_process();
  size_t out_bytes = max_out_bytes();
  /* Warm-up outside the clock: libav's one-time tables, as the wasm pools are warm. */
  {
    uint8_t *dst = low_alloc(out_bytes);
    td_worker worker;
    td_job *job = low_alloc(sizeof *job);
    td_worker_init(&worker);
    fill_job(job, &inputs[0], dst);
    td_decode_image(&worker, job);
    td_worker_free(&worker);
  }
  pthread_t *ids = calloc((size_t)threads, sizeof *ids);
  double cpu0 = cpu_seconds(), t0 = now();
  for (int t = 0; t < threads; t++) pthread_create(&ids[t], NULL, run_thread, low_alloc(out_bytes));
  for (int t = 0; t < threads; t++) pthread_join(ids[t], NULL);
  double seconds = now() - t0, cpu = cpu_seconds() - cpu0;
  printf("{\"images\":%d,\"seconds\":%.6f,\"cpu\":%.6f,\"maxrss_kb\":%ld,\"failed\":%d}\n", count, seconds, cpu, peak_rss_kb(),
         atomic_load(&failed));
  return 0;
}
