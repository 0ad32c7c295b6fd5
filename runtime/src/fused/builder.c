/* Builds fused groups' programs on a thread of its own, so that the step that first needs one
 * runs its groups op by op instead of waiting tens to hundreds of milliseconds per program (on
 * PoCL). AXON_FUSED_BUILD=sync builds in the calling thread instead. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../internal.h"
#include "builder.h"

#define QUEUE 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_ready = PTHREAD_COND_INITIALIZER, all_done = PTHREAD_COND_INITIALIZER;
static fused_build *queue[QUEUE];
static int head, count, busy, started;
static atomic_int stopped;

static void *builder(void *unused) {
  (void)unused;
  /* Below the threads that run kernels: on a CPU device the compiler shares their cores, and the
   * work it would slow is what the build is meant to speed up. */
  setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
  pthread_mutex_lock(&lock);
  for (;;) {
    while (!count) pthread_cond_wait(&work_ready, &lock);
    fused_build *b = queue[head];
    head = (head + 1) % QUEUE;
    count--;
    busy = 1;
    pthread_mutex_unlock(&lock);
    axon_status_t st = axon_program_build_all(b->program);
    b->done(b, st);
    pthread_mutex_lock(&lock);
    busy = 0;
    pthread_cond_broadcast(&all_done); /* fused_build_wait and fused_build_stop wait for it */
  }
  return NULL;
}

/* Stops the builder: queued builds are dropped (their groups run op by op), the one in flight is
 * waited for, and later submissions are dropped too. A build must not run while the process exits:
 * the driver's compiler constructs static objects on its first pass through a piece of code, and
 * their destructors, registered after ours, run before ours at exit; a build then in flight uses
 * destroyed objects (seen as "LLVM ERROR: out of memory" and processes growing to gigabytes).
 * torch_axon calls this from Python's exit, before any C exit handler; the C handler is the last
 * resort of programs that use the runtime alone. */
void fused_build_stop(void) {
  atomic_store(&stopped, 1);
  /* A forked child has no builder thread, and may hold copies of the lock and of busy as some
   * other thread of the parent left them: nothing to wait for, and waiting could never end. */
  if (axon_forked_child()) return;
  pthread_mutex_lock(&lock);
  count = 0;
  while (busy) pthread_cond_wait(&all_done, &lock);
  pthread_mutex_unlock(&lock);
}

static int in_background(void) {
  static int mode = -1; /* read once; a race writes the same value */
  if (mode < 0) {
    const char *env = getenv("AXON_FUSED_BUILD");
    mode = !(env && !strcmp(env, "sync"));
  }
  return mode;
}

void fused_build_submit(fused_build *b) {
  if (atomic_load(&stopped)) return;
  if (in_background()) {
    pthread_mutex_lock(&lock);
    if (!started) {
      pthread_t thread;
      pthread_attr_t attributes;
      pthread_attr_init(&attributes);
      pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
      started = pthread_create(&thread, &attributes, builder, NULL) == 0;
      pthread_attr_destroy(&attributes);
      if (started) atexit(fused_build_stop);
    }
    if (atomic_load(&stopped)) { /* stopped since the check above */
      pthread_mutex_unlock(&lock);
      return;
    }
    int queued = started && count < QUEUE;
    if (queued) {
      queue[(head + count) % QUEUE] = b;
      count++;
      pthread_cond_signal(&work_ready);
    }
    pthread_mutex_unlock(&lock);
    if (queued) return;
  }
  b->done(b, axon_program_build_all(b->program)); /* sync, or no thread or room for it */
}

void fused_build_wait(void) {
  if (axon_forked_child()) return; /* as fused_build_stop */
  pthread_mutex_lock(&lock);
  while (count || busy) pthread_cond_wait(&all_done, &lock);
  pthread_mutex_unlock(&lock);
}
