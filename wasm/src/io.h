/* Where audio and video jobs read their bytes: a whole file in wasm memory, or (pthreads build) a
 * stream whose bytes JS delivers on request, a window at a time, so a long file is never held. */
#ifndef TANDEM_IO_H
#define TANDEM_IO_H
#include <stdint.h>
#include "tandem_decode.h"

typedef struct td_io {
  const uint8_t *data; /* the file (memory) or the current window (stream) */
  int64_t size;        /* -1 when a stream's size is unknown */
  int64_t pos;
  int64_t window_start; /* stream: file offset of data[0] */
  int32_t window_len;   /* stream: valid bytes at data */
  td_stream *stream;    /* NULL for a file in memory */
  int wanted_past_end;  /* a read at the end or a seek beyond it: the demuxer wanted more bytes */
  int source_failed;    /* the stream's source reported an error */
  /* The job's budget: a wall-clock deadline and a bound on bytes handed to the demuxer, so that
   * no input (timestamps that run backwards, demuxers that re-read) keeps a pool thread forever. */
  double deadline_ms;   /* on td_now_ms()'s clock; 0: none */
  int64_t read_left;    /* bytes the demuxer may still read; -1: no bound (stream of unknown size) */
  const char *exceeded; /* what ran out, once the budget is broken; NULL before */
} td_io;

/* A monotonic clock in ms, on any thread. */
double td_now_ms(void);
/* Nonzero (and io->exceeded set) once the job's deadline or read bound has passed. Cheap enough
 * to call per packet; also libavformat's interrupt callback (opaque: the td_io). */
int td_io_over_budget(void *opaque);

/* Bounds every single allocation inside libav* by what `job`'s pixel limit can need (rising only,
 * process-wide); called as each job starts. */
void td_bound_allocations(const td_job *job);

/* Sets up the reader for `job`: TD_KIND_VIDEO_STREAM and TD_KIND_VIDEO_DEMUX_STREAM jobs read
 * through job->src as a td_stream. */
int td_io_init(td_io *io, const td_job *job);
int td_io_read(void *opaque, uint8_t *buf, int n);
int64_t td_io_seek(void *opaque, int64_t offset, int whence);
/* Tells the stream's JS side that no more bytes will be asked for (also when a job never ran). */
void td_stream_close(td_stream *stream);
#endif
