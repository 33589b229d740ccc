/* Job entry points, and (in the pthreads build) the decode pool: threads sharing the module's memory, fed from a FIFO of jobs.
 *
 * The JS event loop only enqueues (td_submit) and later sees `state` flip to DONE through
 * Atomics.waitAsync; it never blocks on a decode. Pool threads block on a condition variable
 * while idle. Stopping wakes them all; each finishes the job in hand, drains nothing further,
 * and exits, so no thread outlives td_pool_stop + the jobs already running. */
#include <pthread.h>
#include <string.h>
#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#else /* native build (bench/native): the same C, exported as plain functions */
#define EMSCRIPTEN_KEEPALIVE
#endif
#include "fail.h"
#include "image.h"
#include "io.h"
#include "media.h"
#include "demux.h"
#include "tandem_decode.h"
#include "yuv2rgb.h"

static pthread_once_t process_once = PTHREAD_ONCE_INIT;

#ifdef __EMSCRIPTEN__
static double now_ms(void) { return emscripten_get_now(); }
#else
#include <time.h>
static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}
#endif

static void td_decode_kind(td_worker *worker, td_job *job);

static void td_decode_job(td_worker *worker, td_job *job) {
  const double start = now_ms();
  td_decode_kind(worker, job);
  job->thread_us = (int32_t)((now_ms() - start) * 1000.0);
}

static void td_decode_kind(td_worker *worker, td_job *job) {
  switch (job->kind) {
    case TD_KIND_IMAGE: td_decode_image(worker, job); break;
    case TD_KIND_AUDIO: td_decode_audio(worker, job); break;
    case TD_KIND_VIDEO:
    case TD_KIND_VIDEO_PACKETS: td_decode_video(worker, job); break;
    case TD_KIND_VIDEO_STREAM:
      td_decode_video(worker, job);
      td_stream_close((td_stream *)(uintptr_t)job->src);
      break;
    case TD_KIND_VIDEO_DEMUX: td_demux_video(worker, job); break;
    case TD_KIND_VIDEO_DEMUX_STREAM:
      td_demux_video(worker, job);
      td_stream_close((td_stream *)(uintptr_t)job->src);
      break;
    default: job->status = TD_E_BAD_REQUEST; strcpy(job->message, "unknown job kind");
  }
}

EMSCRIPTEN_KEEPALIVE int td_job_words(void) { return TD_JOB_WORDS; }
#ifdef __EMSCRIPTEN__
#include <malloc.h>
/* Bytes the allocator has handed out and not had back, counted by malloc itself rather than by
 * Tandem's bookkeeping: what shows a cancelled job's input copy or a batch buffer left behind. */
EMSCRIPTEN_KEEPALIVE int td_heap_in_use(void) { return (int)mallinfo().uordblks; }
#endif
EMSCRIPTEN_KEEPALIVE int td_job_size(void) { return (int)sizeof(td_job); }

#ifdef __wasm_simd128__
/* Defined in the added libavcodec files (libavcodec's internal headers are not installed). */
int ff_vp9_wasm_check(unsigned seed, int rounds);
int ff_h264_wasm_check(unsigned seed, int rounds);
int ff_h264_deblock_wasm_check(unsigned seed, int rounds);
int ff_h264_idct_wasm_check(unsigned seed, int rounds);
int ff_vp9_itxfm_wasm_check(unsigned seed, int rounds);
int ff_vp9_lpf_wasm_check(unsigned seed, int rounds);
int ff_renorm_wasm_check(unsigned seed, int rounds);
/* Runs Tandem's SIMD128 versions of libavcodec's C (wasm/ffmpeg/: VP9 and H.264 motion
 * compensation, H.264 deblocking, VP9 loop filters, H.264 and VP9 inverse transforms) against
 * ffmpeg's own C on random and extreme blocks, and its YUV to RGB converter (yuv2rgb.c) against
 * libswscale's on every Y, U and V, and the arithmetic decoders' clz shifts (renorm-clz.patch)
 * against ffmpeg's tables: 0 when every output is equal, else a code naming the first that is not
 * (VP9 motion compensation's as they come, H.264 motion compensation's plus 1 000 000, deblocking's
 * plus 2 000 000, H.264 transforms' plus 3 000 000, the converter's plus 4 000 000 (run once, not per
 * seed), VP9 transforms' plus 5 000 000, VP9 loop filters' plus 6 000 000, the decoders' plus
 * 7 000 000).
 * For test/unit/simd-check.test.ts. */
EMSCRIPTEN_KEEPALIVE int td_simd_check(unsigned seed, int rounds) {
  const int vp9 = ff_vp9_wasm_check(seed, rounds);
  if (vp9 != 0) return vp9;
  const int h264 = ff_h264_wasm_check(seed, rounds);
  if (h264 != 0) return 1000000 + h264;
  const int deblock = ff_h264_deblock_wasm_check(seed, rounds);
  if (deblock != 0) return 2000000 + deblock;
  const int idct = ff_h264_idct_wasm_check(seed, rounds);
  if (idct != 0) return 3000000 + idct;
  static int yuv = -1; /* exhaustive and seedless: once per module */
  if (yuv < 0) yuv = td_yuv2rgb_check();
  if (yuv != 0) return 4000000 + yuv;
  const int vp9_idct = ff_vp9_itxfm_wasm_check(seed, rounds);
  if (vp9_idct != 0) return 5000000 + vp9_idct;
  const int vp9_lpf = ff_vp9_lpf_wasm_check(seed, rounds);
  if (vp9_lpf != 0) return 6000000 + vp9_lpf;
  const int renorm = ff_renorm_wasm_check(seed, rounds);
  return renorm == 0 ? 0 : 7000000 + renorm;
}
#endif

/* Decodes on the calling thread: the single-threaded build's only entry (one instance per worker)
 * and, in the threaded build, tests of the C path itself. */
EMSCRIPTEN_KEEPALIVE int td_decode_now(td_job *job) {
  pthread_once(&process_once, td_log_init_process);
  td_worker worker;
  if (td_worker_init(&worker) != 0) return job->status = TD_E_NOMEM;
  job->on_pool_thread = 0;
  td_decode_job(&worker, job);
  td_worker_free(&worker);
  job->state = TD_STATE_DONE;
  return job->status;
}

#if defined(__EMSCRIPTEN_PTHREADS__) || defined(TD_NATIVE_POOL)
#include <stdatomic.h>
#ifdef __EMSCRIPTEN_PTHREADS__
#include <emscripten/threading.h>
#define notify_state_waiters(state) __builtin_wasm_memory_atomic_notify(state, 0x7FFFFFFF)
#define notify_alive_waiters()      __builtin_wasm_memory_atomic_notify((int32_t *)&threads_alive, 0x7FFFFFFF)
#define on_main_runtime_thread()    emscripten_is_main_runtime_thread()
#else /* wasm/fuzz/fuzz_pool.c: the same queue natively, under ThreadSanitizer; the harness waits */
void td_native_notify(int32_t *state);
#define notify_state_waiters(state) td_native_notify(state)
#define notify_alive_waiters()      ((void)0)
#define on_main_runtime_thread()    0
#endif

#define TD_MAX_THREADS 64

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_ready = PTHREAD_COND_INITIALIZER;
static td_job *queue_head, *queue_tail;
static int stopping;
static atomic_int threads_alive;
static void finish(td_job *job) {
  __atomic_store_n(&job->state, TD_STATE_DONE, __ATOMIC_SEQ_CST);
  notify_state_waiters(&job->state);
}
static void cancel(td_job *job, const char *why) {
  job->status = TD_E_CANCELLED;
  strcpy(job->message, why);
  finish(job);
}

static void *pool_thread(void *arg) {
  (void)arg;
  td_worker worker;
  int ok = td_worker_init(&worker) == 0;
  for (;;) {
    pthread_mutex_lock(&queue_lock);
    while (!queue_head && !stopping) pthread_cond_wait(&queue_ready, &queue_lock);
    td_job *job = stopping ? NULL : queue_head;
    if (job) {
      queue_head = (td_job *)(uintptr_t)job->next;
      if (!queue_head) queue_tail = NULL;
    }
    pthread_mutex_unlock(&queue_lock);
    if (!job) break;
    __atomic_store_n(&job->state, TD_STATE_RUNNING, __ATOMIC_SEQ_CST);
    job->on_pool_thread = !on_main_runtime_thread();
    if (ok)
      td_decode_job(&worker, job);
    else {
      job->status = TD_E_NOMEM;
      strcpy(job->message, "pool thread could not allocate its state");
    }
    finish(job);
  }
  td_worker_free(&worker);
  atomic_fetch_sub(&threads_alive, 1);
  notify_alive_waiters(); /* close() in JS waits on this word (Atomics.waitAsync) */
  return NULL;
}

/* Starts n pool threads; returns how many are running. */
EMSCRIPTEN_KEEPALIVE int td_pool_start(int n) {
  pthread_once(&process_once, td_log_init_process);
  if (n > TD_MAX_THREADS) n = TD_MAX_THREADS;
  pthread_mutex_lock(&queue_lock);
  stopping = 0;
  pthread_mutex_unlock(&queue_lock);
  for (int i = 0; i < n; i++) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, pool_thread, NULL) == 0) atomic_fetch_add(&threads_alive, 1);
    pthread_attr_destroy(&attr);
  }
  return atomic_load(&threads_alive);
}

/* A job submitted after td_pool_stop would wait forever for a thread: it ends at once as cancelled
 * (found by wasm/fuzz/fuzz_pool.c). */
EMSCRIPTEN_KEEPALIVE void td_submit(td_job *job) {
  job->state = TD_STATE_QUEUED;
  job->next = 0;
  pthread_mutex_lock(&queue_lock);
  if (stopping) {
    pthread_mutex_unlock(&queue_lock);
    cancel(job, "decode pool stopped before this job was submitted");
    return;
  }
  if (queue_tail)
    queue_tail->next = (int32_t)(uintptr_t)job;
  else
    queue_head = job;
  queue_tail = job;
  pthread_cond_signal(&queue_ready);
  pthread_mutex_unlock(&queue_lock);
}

/* Asks every pool thread to exit; jobs still queued are completed as cancelled, never lost. */
EMSCRIPTEN_KEEPALIVE void td_pool_stop(void) {
  pthread_mutex_lock(&queue_lock);
  stopping = 1;
  td_job *job = queue_head;
  queue_head = queue_tail = NULL;
  pthread_cond_broadcast(&queue_ready);
  pthread_mutex_unlock(&queue_lock);
  while (job) {
    td_job *next = (td_job *)(uintptr_t)job->next;
    cancel(job, "decode pool stopped before this job ran");
    job = next;
  }
}

EMSCRIPTEN_KEEPALIVE int td_pool_alive(void) { return atomic_load(&threads_alive); }

/* The address of the count of live pool threads: JS waits on it for the threads to exit, and every
 * exit notifies it. */
EMSCRIPTEN_KEEPALIVE int32_t *td_pool_alive_address(void) { return (int32_t *)&threads_alive; }

#endif /* __EMSCRIPTEN_PTHREADS__ || TD_NATIVE_POOL */
