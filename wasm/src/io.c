/* The two byte sources of media jobs, behind libavformat's read and seek callbacks.
 *
 * A stream asks JS for bytes through its td_stream record in shared memory: the pool thread
 * writes the wanted offset, flips `state` to WANT, notifies, and blocks on that word; the event
 * loop (Atomics.waitAsync) reads from its source into the window buffer and flips `state` to
 * FILLED. Only the window (and libavformat's own buffer) is ever in memory. */
#include "io.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#ifdef __EMSCRIPTEN__
#include <emscripten/em_js.h>
#include <emscripten.h>
#endif
#include <pthread.h>
#include <libavformat/avio.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>

/* Demuxers re-read headers, indexes and, after seeks, data; legitimate files stay far below
 * this many passes over their bytes. */
#define READ_PASSES 64
#define READ_SLACK  (64 << 20)

/* Streams need a thread that can block while JS fills the window (the pthreads build), or, in the
 * native fuzz build (TD_NATIVE_STREAM), a harness that answers each request in place. */
#if defined(__EMSCRIPTEN_PTHREADS__) || defined(TD_NATIVE_STREAM)
#define TD_HAS_STREAM 1
#endif

double td_now_ms(void) {
#ifdef __EMSCRIPTEN__
  return emscripten_get_now();
#else
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
#endif
}

int td_io_over_budget(void *opaque) {
  td_io *io = opaque;
  if (io->exceeded) return 1;
  if (io->deadline_ms > 0 && td_now_ms() > io->deadline_ms) io->exceeded = "the job ran past its time limit";
  return io->exceeded != NULL;
}

/* Without a known input size, a demuxer sizes some buffers from what the file claims (an MP4 box
 * of 1.7 GB grew wasm memory, which never shrinks, by that much). No single allocation inside
 * libav* may exceed what the largest frame a job allows needs: 8 bytes per pixel (RGBA64) at its
 * pixel limit, plus room for everything else. The bound only rises, so a job with a higher limit
 * never leaves a lower one for jobs that are already running. */
#define ALLOC_SLACK ((size_t)64 << 20)
static pthread_mutex_t alloc_bound_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t alloc_bound;

void td_bound_allocations(const td_job *job) {
  size_t pixels = job->max_pixels > 0 ? (size_t)job->max_pixels : 0;
  size_t need = pixels * 8 + ALLOC_SLACK;
  if (need > INT_MAX) need = INT_MAX;
  pthread_mutex_lock(&alloc_bound_lock);
  if (need > alloc_bound) {
    alloc_bound = need;
    av_max_alloc(need);
  }
  pthread_mutex_unlock(&alloc_bound_lock);
}

static void init_budget(td_io *io, const td_job *job) {
  io->deadline_ms = job->time_limit_ms > 0 ? td_now_ms() + job->time_limit_ms : 0;
  io->read_left = io->size >= 0 ? io->size * READ_PASSES + READ_SLACK : -1;
}

int td_io_init(td_io *io, const td_job *job) {
  memset(io, 0, sizeof *io);
  if (job->kind != TD_KIND_VIDEO_STREAM && job->kind != TD_KIND_VIDEO_DEMUX_STREAM) {
    io->data = (const uint8_t *)(uintptr_t)job->src;
    io->size = job->src_len;
    init_budget(io, job);
    return 0;
  }
#ifdef TD_HAS_STREAM
  td_stream *s = (td_stream *)(uintptr_t)job->src;
  if (!s || !s->buffer || s->capacity <= 0) return -1;
  io->stream = s;
  io->data = (const uint8_t *)(uintptr_t)s->buffer;
  io->size = s->size_hi < 0 ? -1 : ((int64_t)s->size_hi << 32) | (uint32_t)s->size_lo;
  init_budget(io, job);
  return 0;
#else
  return -1; /* a single-threaded instance cannot wait for JS */
#endif
}

#if defined(__EMSCRIPTEN_PTHREADS__)
/* The wait is JS's Atomics.wait, not the wasm instruction: Node 20's baseline wasm compiler
 * (V8 11 Liftoff) can come back from memory.atomic.wait32 with the waiting code's values lost
 * (seen as the window copied to address 0). Pool threads are workers, where Atomics.wait is
 * allowed in every runtime. */
EM_JS(void, wait_while_equal, (int32_t * word, int32_t value), { Atomics.wait(new Int32Array(wasmMemory.buffer), word >> 2, value); });

/* Hands the request to the event loop and blocks until it has answered. */
static void request_window(td_stream *s) {
  __atomic_store_n(&s->state, TD_STREAM_WANT, __ATOMIC_SEQ_CST);
  __builtin_wasm_memory_atomic_notify(&s->state, 1);
  while (__atomic_load_n(&s->state, __ATOMIC_SEQ_CST) == TD_STREAM_WANT) wait_while_equal(&s->state, TD_STREAM_WANT);
}

void td_stream_close(td_stream *s) {
  if (!s) return;
  __atomic_store_n(&s->state, TD_STREAM_CLOSED, __ATOMIC_SEQ_CST);
  __builtin_wasm_memory_atomic_notify(&s->state, 1);
}
#elif defined(TD_NATIVE_STREAM)
/* Provided by the fuzz harness: fills the window (or fails) as JS would, then returns. */
void td_native_stream_answer(td_stream *s);

static void request_window(td_stream *s) {
  s->state = TD_STREAM_WANT;
  td_native_stream_answer(s);
}

void td_stream_close(td_stream *s) {
  if (s) s->state = TD_STREAM_CLOSED;
}
#else
void td_stream_close(td_stream *s) { (void)s; }
#endif

#ifdef TD_HAS_STREAM
/* Asks for the bytes at `pos` and takes what came back as the window; whatever the other side
 * answered, a length outside 0..capacity is the source failing. */
static int fetch_window(td_io *io, int64_t pos) {
  td_stream *s = io->stream;
  s->want_lo = (int32_t)(uint32_t)(pos & 0xffffffff);
  s->want_hi = (int32_t)(pos >> 32);
  s->want_len = s->capacity;
  request_window(s);
  int32_t got = s->got_len;
  if (got < 0 || got > s->capacity) {
    io->source_failed = 1;
    return AVERROR(EIO);
  }
  io->window_start = pos;
  io->window_len = got;
  return got;
}
#else
static int fetch_window(td_io *io, int64_t pos) {
  (void)io;
  (void)pos;
  return AVERROR(ENOSYS);
}
#endif

int td_io_read(void *opaque, uint8_t *buf, int n) {
  td_io *io = opaque;
  if (n <= 0) return 0;
  if (td_io_over_budget(io)) return AVERROR_EXIT;
  if (io->size >= 0 && io->pos >= io->size) {
    io->wanted_past_end = 1;
    return AVERROR_EOF;
  }
  const uint8_t *from;
  int64_t left;
  if (!io->stream) {
    from = io->data + io->pos;
    left = io->size - io->pos;
  } else {
    if (io->pos < io->window_start || io->pos >= io->window_start + io->window_len) {
      int got = fetch_window(io, io->pos);
      if (got < 0) return got;
      if (got == 0) {
        io->wanted_past_end = 1;
        return AVERROR_EOF;
      }
    }
    from = io->data + (io->pos - io->window_start);
    left = io->window_start + io->window_len - io->pos;
  }
  if ((int64_t)n > left) n = (int)left;
  if (io->read_left >= 0) {
    if (io->read_left < n) {
      io->exceeded = "the demuxer read the input more than 64 times over";
      return AVERROR_EXIT;
    }
    io->read_left -= n;
  }
  memcpy(buf, from, (size_t)n);
  io->pos += n;
  return n;
}

int64_t td_io_seek(void *opaque, int64_t offset, int whence) {
  td_io *io = opaque;
  int64_t base;
  switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return io->size >= 0 ? io->size : AVERROR(ENOSYS);
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = io->pos; break;
    case SEEK_END:
      if (io->size < 0) return AVERROR(ENOSYS);
      base = io->size;
      break;
    default: return AVERROR(EINVAL);
  }
  if ((offset > 0 && offset > INT64_MAX - base) || base + offset < 0) return AVERROR(EINVAL);
  int64_t to = base + offset;
  if (io->size >= 0 && to > io->size) {
    io->wanted_past_end = 1;
    return AVERROR_EOF;
  }
  io->pos = to; /* a stream fetches lazily, on the next read outside its window */
  return to;
}
