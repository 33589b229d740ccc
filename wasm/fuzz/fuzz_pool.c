/* libFuzzer target for the decode pool's queue (wasm/src/tandem_decode.c, built with
 * TD_NATIVE_POOL), under ThreadSanitizer: the pool's own threads, mutex, condition variable and
 * state words, natively. What a job does once a thread holds it is fuzzed by fuzz_job.c; here the
 * decoders are stand-ins that check the job is RUNNING, spin for a while the input chooses, count
 * the run and set a result, so that an input is a schedule of the queue, run in microseconds.
 *
 * An input is a script. Byte 0: pool threads (1-4) and whether a thread fails to set up its
 * state (its jobs must end as out-of-memory). Then one byte per step: submit a job of some kind
 * and length; wait for one of the jobs submitted so far; stop the pool (once); or yield. Jobs may
 * be submitted after the stop, as a caller that has not seen it yet would.
 *
 * Checked after every input: every job submitted ends DONE, notified exactly once; it ran at most
 * once, on a pool thread; a job that ran carries its decoder's status (bad-request for an unknown
 * kind), one that did not is cancelled with a message; no pool thread is alive after the stop. A
 * wait longer than 2 s is a lost job or a thread that never left: the harness aborts. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "../src/demux.h"
#include "../src/fail.h"
#include "../src/image.h"
#include "../src/io.h"
#include "../src/media.h"
#include "../src/tandem_decode.h"

int td_pool_start(int n);
void td_submit(td_job *job);
void td_pool_stop(void);
int td_pool_alive(void);

#define MAX_JOBS   64
#define UNKNOWN    99         /* a kind no decoder takes */
#define STATUS_RAN TD_E_EMPTY /* what the stand-ins report; no queue path produces it */

static td_job *jobs;               /* below 4 GiB: the queue links jobs by 32-bit pointers */
static atomic_int runs[MAX_JOBS];  /* times a stand-in decoder ran job i */
static atomic_int notes[MAX_JOBS]; /* times job i's waiters were notified */
static int spin[MAX_JOBS];         /* how long job i's decoder works */
static atomic_int worker_setups;   /* pool threads that set up their state, this input */
static int failing_setup;          /* this input: the first pool thread fails to set up */

/* Code that runs on pool threads carries no coverage counters: libFuzzer's counters are plain
 * bytes, and ThreadSanitizer would report every concurrent increment as a race. build.sh compiles
 * tandem_decode.c without coverage for the same reason, so guidance comes from the script's path
 * through this harness; the schedules themselves are the point. */
#define POOL_THREAD_CODE __attribute__((no_sanitize("coverage")))

POOL_THREAD_CODE static int job_index(const td_job *job) {
  ptrdiff_t i = job - jobs;
  if (i < 0 || i >= MAX_JOBS) abort();
  return (int)i;
}

POOL_THREAD_CODE void td_native_notify(int32_t *state) {
  if (__atomic_load_n(state, __ATOMIC_SEQ_CST) != TD_STATE_DONE) abort();
  atomic_fetch_add(&notes[job_index((td_job *)(void *)state)], 1);
}

/* Stand-ins for the decoders and the per-thread state (see the top of the file). */
POOL_THREAD_CODE void td_log_init_process(void) {}
POOL_THREAD_CODE int td_worker_init(td_worker *w) {
  memset(w, 0, sizeof *w);
  return atomic_fetch_add(&worker_setups, 1) == 0 && failing_setup ? -1 : 0;
}
POOL_THREAD_CODE void td_worker_free(td_worker *w) { (void)w; }
POOL_THREAD_CODE void td_stream_close(td_stream *stream) { (void)stream; }
POOL_THREAD_CODE static int stand_in(td_job *job) {
  if (__atomic_load_n(&job->state, __ATOMIC_SEQ_CST) != TD_STATE_RUNNING || !job->on_pool_thread) abort();
  int i = job_index(job);
  atomic_fetch_add(&runs[i], 1);
  for (volatile int k = 0; k < spin[i]; k++) {}
  job->message[0] = 0;
  return job->status = STATUS_RAN;
}
POOL_THREAD_CODE int td_decode_image(td_worker *w, td_job *job) { return (void)w, stand_in(job); }
POOL_THREAD_CODE int td_decode_audio(td_worker *w, td_job *job) { return (void)w, stand_in(job); }
POOL_THREAD_CODE int td_decode_video(td_worker *w, td_job *job) { return (void)w, stand_in(job); }
POOL_THREAD_CODE int td_demux_video(td_worker *w, td_job *job) { return (void)w, stand_in(job); }

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void wait_done(const td_job *job) {
  double give_up = now_ms() + 2000;
  while (__atomic_load_n(&job->state, __ATOMIC_ACQUIRE) != TD_STATE_DONE) {
    if (now_ms() > give_up) {
      fprintf(stderr, "job %d never finished (state %d)\n", job_index(job), job->state);
      abort();
    }
    sched_yield();
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  jobs = mmap(NULL, MAX_JOBS * sizeof(td_job), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  if (jobs == MAP_FAILED) abort();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return -1;
  static const int32_t kinds[] = {TD_KIND_IMAGE, TD_KIND_AUDIO, TD_KIND_VIDEO, TD_KIND_VIDEO_STREAM, UNKNOWN};
  int threads = 1 + data[0] % 4;
  failing_setup = (data[0] >> 2) & 1;
  atomic_store(&worker_setups, 0);
  memset(jobs, 0, MAX_JOBS * sizeof(td_job));
  for (int i = 0; i < MAX_JOBS; i++) atomic_store(&runs[i], 0), atomic_store(&notes[i], 0);
  if (td_pool_start(threads) != threads) abort();

  int submitted = 0, stopped = 0;
  for (size_t step = 1; step < size; step++) {
    uint8_t op = data[step];
    switch (op & 3) {
      case 0:
      case 1:
        if (submitted == MAX_JOBS) break;
        spin[submitted] = (op >> 5) * (op >> 5) * 500;
        jobs[submitted].kind = kinds[(op >> 2) % 5];
        td_submit(&jobs[submitted++]);
        break;
      case 2:
        if (submitted && !stopped) wait_done(&jobs[(op >> 2) % submitted]);
        break;
      default:
        if ((op >> 2) & 1 && !stopped) {
          td_pool_stop();
          stopped = 1;
        } else {
          sched_yield();
        }
    }
  }
  if (!stopped) td_pool_stop();

  double give_up = now_ms() + 2000;
  while (td_pool_alive() > 0) {
    if (now_ms() > give_up) {
      fprintf(stderr, "%d pool threads alive 2 s after the stop\n", td_pool_alive());
      abort();
    }
    sched_yield();
  }
  for (int i = 0; i < submitted; i++) {
    const td_job *job = &jobs[i];
    wait_done(job);
    int ran = atomic_load(&runs[i]), notified = atomic_load(&notes[i]);
    int ok;
    if (!job->on_pool_thread) /* never taken: drained by the stop */
      ok = !ran && job->status == TD_E_CANCELLED;
    else if (ran)
      ok = ran == 1 && job->kind != UNKNOWN && job->status == STATUS_RAN;
    else /* taken but not decoded: an unknown kind, or a thread without its state */
      ok = (job->kind == UNKNOWN && job->status == TD_E_BAD_REQUEST) || (failing_setup && job->status == TD_E_NOMEM);
    if (!ok || notified != 1 || (job->status != STATUS_RAN && !job->message[0])) {
      fprintf(stderr, "job %d (kind %d): ran %d, notified %d, status %d, message \"%s\"\n", i, job->kind, ran, notified, job->status,
              job->message);
      abort();
    }
  }
  return 0;
}
