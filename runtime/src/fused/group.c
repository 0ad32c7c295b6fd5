/*
 * Fused eager mode: recording pointwise ops per stream and launching each group as one kernel
 * (docs/fused-eager.md).
 *
 * A group holds ops of one float type (float32, float64, float16, bfloat16) over one contiguous
 * range length. A stream keeps a few groups open at once, one per length, type and form, so that
 * the per-tensor ops of a foreach call (every tensor's first op, then every tensor's second ...)
 * gather by tensor size. The open groups of a stream are independent of one another: an op that
 * reads what another open group writes, or writes what it uses, launches that group first. Within
 * its group, an op is refused (the group is launched and a new one begun) when one of its memory
 * operands overlaps a range the group writes other than exactly: with exact overlaps only, element
 * i of every operand belongs to one work-item, which reads and writes it in op order, as the
 * unfused kernels one after another do. Anything else enqueued on the stream launches its groups
 * first (axon_fused_settle at every enqueue).
 *
 * A group's kernel is built on the second appearance of its structure, on the builder's thread
 * (builder.c); until it is built the group runs op by op, so neither a cold first step nor the
 * second waits for a build; later steps reuse the built program (and the disk cache keeps it for
 * the next process). A group of one op always runs as its own kernel.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "../ops/launch_common.h"
#include "../program_internal.h"
#include "axon/fused.h"
#include "builder.h"
#include "fused.h"
#include "group.h"

static pthread_mutex_t lock;
static pthread_once_t lock_once = PTHREAD_ONCE_INIT;
static fused_group *pending; /* groups with recorded work, newest first */
static atomic_int npending;
static atomic_int enabled = -1; /* -1: AXON_FUSED_EAGER not read yet */
static axon_fused_stats stats;

/* Recursive: launching a group goes through axon_launch, which settles its stream again. */
static void make_lock(void) {
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&lock, &attributes);
  pthread_mutexattr_destroy(&attributes);
}
static void lock_groups(void) {
  pthread_once(&lock_once, make_lock);
  pthread_mutex_lock(&lock);
}

int axon_fused_eager_enabled(void) {
  int state = atomic_load(&enabled);
  if (state < 0) {
    const char *env = getenv("AXON_FUSED_EAGER");
    state = env && *env ? strcmp(env, "0") != 0 : 1; /* on unless AXON_FUSED_EAGER=0 */
    atomic_store(&enabled, state);
  }
  return state;
}

axon_status_t axon_fused_eager_set(int on) {
  if (!on) AXON_TRY(axon_fused_settle_all());
  atomic_store(&enabled, on ? 1 : 0);
  return AXON_SUCCESS;
}

void axon_fused_wait_builds(void) {
  fused_build_wait();
}

void axon_fused_stop_builds(void) {
  fused_build_stop();
}

void axon_fused_stats_get(axon_fused_stats *out, int reset) {
  lock_groups();
  *out = stats;
  if (reset) memset(&stats, 0, sizeof stats);
  pthread_mutex_unlock(&lock);
}

int axon_fused_any_pending(void) {
  return atomic_load(&npending) > 0;
}

/* ---- which kernels are built ---------------------------------------------------------------- */

/* Per structure (its hash): seen once, building, built (with its program and kernel name, so that
 * a launch writes no source), or failed to build. The builder's thread sets the state a build
 * ends in, and holds &build meanwhile: a structure lives on the heap and is freed only when no
 * build of it is queued or running. */
enum { UNSEEN, SEEN_ONCE, BUILDING, BUILT, BUILD_FAILED };
typedef struct structure {
  fused_build build; /* first: builder.c hands it back */
  uint64_t hash;
  atomic_int state;
  uint64_t last_used; /* the launch that last met it: eviction takes the least recent */
  char kernel[60];    /* program_internal.h keeps kernel names below 64 */
} structure;

/* Open addressing (linear probing) over pointers, so that entries can be removed and the table
 * rebuilt. At three quarters full, the structures seen once are forgotten. */
#define STRUCTURES 4096
static structure *table[STRUCTURES];
static int nstructures;
static uint64_t launches;

/* Structures holding a program (building, built or failed), each about half a megabyte of the
 * driver's memory on PoCL. A loop of pointwise work that nothing launches between iterations
 * cuts its groups where they fill up, at a place that moves from one iteration to the next, and
 * so meets structure after structure (docs/fused-eager.md); a long process meets new workloads.
 * Past the limit the least recently launched program is discarded to make room (the disk cache
 * brings it back cheaply if its structure returns). AXON_FUSED_MAX_KERNELS sets the limit. */
static int nprograms;
static int max_programs(void) {
  static int limit; /* read once; a race writes the same value */
  if (!limit) {
    const char *env = getenv("AXON_FUSED_MAX_KERNELS");
    int n = env ? atoi(env) : 0;
    limit = n > 0 ? n : 512;
  }
  return limit;
}

/* The kernel file a structure's program is registered under. */
static void kernel_file_name(uint64_t hash, char file[40]) {
  snprintf(file, 40, "fused_%016llx", (unsigned long long)hash);
}

static void build_done(fused_build *build, axon_status_t st) {
  structure *s = (structure *)build;
  if (st != AXON_SUCCESS && getenv("AXON_FUSED_DEBUG"))
    fprintf(stderr, "axon fused eager: %s: %s\n", s->kernel, axon_last_error());
  lock_groups();
  if (st == AXON_SUCCESS) stats.kernels_built++;
  pthread_mutex_unlock(&lock);
  atomic_store(&s->state, st == AXON_SUCCESS ? BUILT : BUILD_FAILED);
}

static void table_insert(structure *s) {
  size_t i = s->hash % STRUCTURES;
  while (table[i]) i = (i + 1) % STRUCTURES;
  table[i] = s;
  nstructures++;
}

/* Empties slot i, moving later entries of its probe run back so that every lookup still finds
 * them (backward-shift deletion). */
static void table_remove(size_t i) {
  table[i] = NULL;
  nstructures--;
  for (size_t j = (i + 1) % STRUCTURES; table[j]; j = (j + 1) % STRUCTURES) {
    size_t home = table[j]->hash % STRUCTURES;
    int stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (!stays) {
      table[i] = table[j];
      table[j] = NULL;
      i = j;
    }
  }
}

/* Frees the structures seen once, which hold nothing but their count. */
static void forget_seen_once(void) {
  static structure *kept[STRUCTURES];
  int n = 0;
  for (size_t i = 0; i < STRUCTURES; i++) {
    structure *s = table[i];
    table[i] = NULL;
    if (s && atomic_load(&s->state) <= SEEN_ONCE)
      free(s);
    else if (s)
      kept[n++] = s;
  }
  nstructures = 0;
  for (int k = 0; k < n; k++) table_insert(kept[k]);
}

/* Discards the least recently launched program of a built (or failed) structure, and forgets
 * the structure; 0 when every program is still building. */
static int evict_least_used(void) {
  size_t victim = STRUCTURES;
  for (size_t i = 0; i < STRUCTURES; i++) {
    int state = table[i] ? atomic_load(&table[i]->state) : UNSEEN;
    if ((state == BUILT || state == BUILD_FAILED) &&
        (victim == STRUCTURES || table[i]->last_used < table[victim]->last_used))
      victim = i;
  }
  if (victim == STRUCTURES) return 0;
  structure *s = table[victim];
  char file[40];
  kernel_file_name(s->hash, file);
  axon_program_discard(s->build.program);
  axon_unregister_kernel_file(file);
  table_remove(victim);
  free(s);
  nprograms--;
  stats.kernels_evicted++;
  return 1;
}

/* The structure of this hash, made (unseen) at its first lookup; NULL when the table has no
 * room or no memory is left. */
static structure *find_structure(uint64_t hash) {
  size_t i = hash % STRUCTURES;
  for (; table[i]; i = (i + 1) % STRUCTURES)
    if (table[i]->hash == hash) return table[i];
  if (nstructures >= STRUCTURES * 3 / 4) {
    forget_seen_once();
    if (nstructures >= STRUCTURES * 3 / 4) return NULL;
  }
  structure *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->hash = hash;
  table_insert(s);
  return s;
}

static int overlap(uintptr_t a, size_t a_bytes, uintptr_t b, size_t b_bytes) {
  return a < b + b_bytes && b < a + a_bytes;
}

/* The bytes each operand of the group spans. */
static size_t group_bytes(const fused_group *g) {
  return (size_t)g->numel * axon_dtype_size(g->dtype);
}

size_t fused_param_size(const fused_group *g) {
  return g->dtype == AXON_F64 ? sizeof(double) : sizeof(float);
}

/* ---- launching ------------------------------------------------------------------------------ */

/* The descriptor of a recorded call: every memory operand a unit-stride line of the group's
 * length. */
static void call_desc(const fused_group *g, const fused_call *c, axon_ew_desc *d) {
  memset(d, 0, sizeof *d);
  d->ndim = c->ndim;
  d->ninputs = c->ninputs;
  d->sizes[0] = g->numel;
  for (int k = 0; k <= c->ninputs; k++) {
    d->data[k] = c->data[k];
    d->is_scalar[k] = c->is_scalar[k];
    d->scalars[k] = c->scalars[k];
    d->strides[k][0] = c->is_scalar[k] ? 0 : 1;
  }
}

static axon_status_t launch_unfused(const fused_group *g) {
  for (int i = 0; i < g->nops; i++) {
    const fused_op *o = &g->ops[i];
    axon_ew_desc d;
    call_desc(g, &o->call, &d);
    AXON_TRY(axon_elementwise_now(g->stream, o->op, g->dtype, &d, o->alpha_value, o->beta_value));
  }
  return AXON_SUCCESS;
}

/* The group's program: its kernel file registered under the structure's hash, after the math. */
static axon_status_t group_program(const fused_group *g, uint64_t hash, const char *kernel,
                                   axon_program_t *program) {
  char file[40], family[96];
  kernel_file_name(hash, file);
  snprintf(family, sizeof family, "pointwise_math+%s%s", g->needs_special ? "special+" : "", file);
  char *source = fused_group_source(g, kernel);
  if (!source) return axon_fail(CL_OUT_OF_HOST_MEMORY, "out of host memory writing a kernel");
  axon_status_t st = axon_register_kernel_file(file, source);
  free(source);
  if (st != AXON_SUCCESS) return st;
  return family_program_variant(g->stream, family, g->dtype, NULL, program);
}

/* Each buffer as the kernel takes it: its memory and a 32-bit byte offset into it (codegen.c),
 * which keeps a wide group within the argument budget; 0 when an offset needs more bits (a
 * segment past 4 GiB), and the group then runs op by op. */
static int resolve_buffers(const fused_group *g, cl_mem *mems, cl_uint *offsets) {
  for (int b = 0; b < g->nbuffers; b++) {
    size_t offset;
    if (axon_resolve_mem((const void *)g->address[b], &mems[b], &offset) != AXON_SUCCESS ||
        offset > UINT32_MAX)
      return 0;
    offsets[b] = (cl_uint)offset;
  }
  return 1;
}

static axon_status_t launch_kernel(const fused_group *g, axon_program_t program, const char *kernel,
                                   const cl_mem *mems, const cl_uint *offsets) {
  axon_arg args[2 * FUSED_MAX_BUFFERS + 2];
  int nargs = 0;
  for (int b = 0; b < g->nbuffers; b++) {
    args[nargs++] = bytes_arg(&mems[b], sizeof mems[b]);
    args[nargs++] = bytes_arg(&offsets[b], sizeof offsets[b]);
  }
  int64_t n = g->numel;
  args[nargs++] = bytes_arg(&n, sizeof n);
  args[nargs++] =
      bytes_arg(&g->params, fused_param_size(g) * (size_t)(g->nparams > 0 ? g->nparams : 1));
  size_t local, global;
  if (g->vector) {
    /* As the unfused vector kernels: 128 elements a work-item, groups of 16. */
    local = 16;
    global = axon_round_up(((size_t)n + 127) / 128, local);
  } else {
    local = group_size_for(g->stream, n);
    global = axon_round_up((size_t)n, local);
  }
  return axon_launch(program, kernel, g->stream, 1, &global, &local, args, nargs);
}

static axon_status_t launch(const fused_group *g) {
  structure *s = g->nops < 2 ? NULL : find_structure(fused_group_hash(g));
  int state = s ? atomic_load(&s->state) : UNSEEN;
  if (s) s->last_used = ++launches;
  if (s && state == SEEN_ONCE && (nprograms < max_programs() || evict_least_used())) {
    /* The second appearance: build its program (in the background), meanwhile op by op. */
    nprograms++;
    fused_group_kernel_name(g, s->kernel, sizeof s->kernel);
    s->build.done = build_done;
    if (group_program(g, s->hash, s->kernel, &s->build.program) == AXON_SUCCESS) {
      atomic_store(&s->state, BUILDING);
      fused_build_submit(&s->build);
    } else {
      atomic_store(&s->state, BUILD_FAILED);
    }
    state = atomic_load(&s->state);
  } else if (s && state == UNSEEN) {
    atomic_store(&s->state, SEEN_ONCE);
  }
  cl_mem mems[FUSED_MAX_BUFFERS];
  cl_uint offsets[FUSED_MAX_BUFFERS];
  if (state != BUILT || !resolve_buffers(g, mems, offsets)) {
    /* One op, a structure not built (yet), one the driver cannot build, or an offset past
     * 32 bits: op by op. */
    stats.groups_unfused++;
    return launch_unfused(g);
  }
  stats.groups_fused++;
  stats.ops_fused += (uint64_t)g->nops;
  for (int i = 0; i < g->nops; i++) {
    int b = g->ops[i].out; /* a last write whose memory was freed */
    stats.stores_skipped += g->last_writer[b] == i && i < g->freed_before[b];
  }
  return launch_kernel(g, s->build.program, s->kernel, mems, offsets);
}

/* Takes the group off the pending list; the pending count drops once its launch is enqueued
 * (settle_group), so that another thread's enqueue on the stream meanwhile waits for the lock
 * instead of passing the launch. */
static void unlink_pending(fused_group *g) {
  for (fused_group **at = &pending; *at; at = &(*at)->next_pending)
    if (*at == g) {
      *at = g->next_pending;
      g->next_pending = NULL;
      return;
    }
}

/* Set while this thread launches a group: the launch's own enqueues settle nothing (the stream's
 * other open groups are independent of it and stay open). */
static _Thread_local int launching;

/* Launches the group's work, leaving it empty (the lock held). A copy runs, so that the slot
 * can take new work at once; one copy serves every launch, since launches happen under the lock
 * and a launch settles nothing (launching). */
static axon_status_t settle_group(fused_group *g) {
  static fused_group work;
  if (!g || !g->nops) return AXON_SUCCESS;
  memcpy(&work, g, offsetof(fused_group, ops) + (size_t)g->nops * sizeof g->ops[0]);
  unlink_pending(g);
  g->nops = g->nbuffers = g->nparams = g->needs_special = 0;
  launching = 1;
  axon_status_t st = launch(&work);
  launching = 0;
  atomic_fetch_sub(&npending, 1);
  return st;
}

/* Launches the stream's open groups, oldest first (the lock held). */
static axon_status_t settle_stream(fused_stream *fs) {
  axon_status_t first = AXON_SUCCESS;
  for (;;) {
    fused_group *oldest = NULL;
    for (int i = 0; i < FUSED_MAX_OPEN; i++)
      if (fs->groups[i].nops && (!oldest || fs->groups[i].sequence < oldest->sequence))
        oldest = &fs->groups[i];
    if (!oldest) return first;
    axon_status_t st = settle_group(oldest);
    if (first == AXON_SUCCESS) first = st;
  }
}

axon_status_t axon_fused_settle(axon_stream_t stream) {
  if (!atomic_load(&npending) || !stream || !stream->fused || launching) return AXON_SUCCESS;
  lock_groups();
  axon_status_t st = settle_stream(stream->fused);
  pthread_mutex_unlock(&lock);
  return st;
}

axon_status_t axon_fused_settle_all(void) {
  if (!atomic_load(&npending)) return AXON_SUCCESS;
  axon_status_t first = AXON_SUCCESS;
  lock_groups();
  while (pending) {
    axon_status_t st = settle_stream(pending->stream->fused);
    if (first == AXON_SUCCESS) first = st;
  }
  pthread_mutex_unlock(&lock);
  return first;
}

void axon_fused_destroy_stream(axon_stream_t stream) {
  if (!stream || !stream->fused) return;
  lock_groups();
  settle_stream(stream->fused);
  free(stream->fused);
  stream->fused = NULL;
  pthread_mutex_unlock(&lock);
}

void axon_fused_before_free(axon_stream_t owner, uintptr_t addr, size_t size) {
  if (!atomic_load(&npending)) return;
  lock_groups();
restart:
  for (fused_group *g = pending; g; g = g->next_pending) {
    size_t bytes = group_bytes(g);
    for (int b = 0; b < g->nbuffers; b++) {
      if (!overlap(g->address[b], bytes, addr, size)) continue;
      if (g->stream == owner) {
        g->freed_before[b] = g->nops; /* its writes so far need not reach memory */
      } else {
        settle_stream(g->stream->fused); /* the allocator's marker there must follow its use */
        goto restart;                    /* the list changed */
      }
    }
  }
  pthread_mutex_unlock(&lock);
}

/* ---- recording ------------------------------------------------------------------------------ */

static int find_buffer(const fused_group *g, uintptr_t address) {
  for (int b = 0; b < g->nbuffers; b++)
    if (g->address[b] == address) return b;
  return -1;
}

static int add_buffer(fused_group *g, uintptr_t address) {
  int b = find_buffer(g, address);
  if (b >= 0) return b;
  b = g->nbuffers++;
  g->address[b] = address;
  g->last_writer[b] = -1;
  g->freed_before[b] = 0;
  return b;
}

static int partly_overlap(uintptr_t a, uintptr_t b, size_t bytes) {
  return a != b && overlap(a, bytes, b, bytes);
}

/* Whether an op over `bytes` would depend on the open group h, or h on it: it reads a range h
 * writes, or writes a range h uses. */
static int conflicts(const fused_group *h, const axon_ew_desc *d, int arity, size_t bytes) {
  size_t h_bytes = group_bytes(h);
  for (int b = 0; b < h->nbuffers; b++) {
    if (overlap((uintptr_t)d->data[0], bytes, h->address[b], h_bytes)) return 1;
    if (h->last_writer[b] < 0) continue;
    for (int k = 1; k <= arity; k++)
      if (!d->is_scalar[k] && overlap((uintptr_t)d->data[k], bytes, h->address[b], h_bytes))
        return 1;
  }
  return 0;
}

/* Whether the op can join the group as it is: its inputs overlap no range the group writes but
 * exactly, its output no range the group uses, and the group has room for it. */
static int fits(const fused_group *g, const axon_ew_desc *d, int arity) {
  int nbuffers = g->nbuffers + arity + 1, nparams = g->nparams + arity + 2; /* at most */
  size_t arg_bytes = (size_t)nbuffers * FUSED_BUFFER_ARG_BYTES + sizeof(int64_t) +
                     (size_t)nparams * fused_param_size(g);
  if (g->nops == FUSED_MAX_OPS || nbuffers > FUSED_MAX_BUFFERS || arg_bytes > FUSED_ARG_BYTES)
    return 0;
  size_t bytes = group_bytes(g);
  uintptr_t out = (uintptr_t)d->data[0];
  for (int b = 0; b < g->nbuffers; b++) {
    if (partly_overlap(out, g->address[b], bytes)) return 0;
    if (g->last_writer[b] < 0) continue; /* read only */
    for (int k = 1; k <= arity; k++)
      if (!d->is_scalar[k] && partly_overlap((uintptr_t)d->data[k], g->address[b], bytes)) return 0;
  }
  return 1;
}

/* In the compute type, as make_scalar gives the unfused kernels their scalars; a value the group
 * holds already (the same bits: the lr, betas and bias corrections a foreach call passes for
 * every tensor, alpha 1 and beta 0) is shared. */
static int param(fused_group *g, double value) {
  float single = (float)value;
  for (int k = 0; k < g->nparams; k++)
    if (g->dtype == AXON_F64 ? !memcmp(&g->params.d[k], &value, sizeof value)
                             : !memcmp(&g->params.f[k], &single, sizeof single))
      return k;
  if (g->dtype == AXON_F64)
    g->params.d[g->nparams] = value;
  else
    g->params.f[g->nparams] = single;
  return g->nparams++;
}

static void append(fused_group *g, axon_pointwise_op op, int arity, const axon_ew_desc *d,
                   double alpha, double beta) {
  fused_op *o = &g->ops[g->nops];
  memset(o, 0, sizeof *o);
  o->op = op;
  for (int k = 1; k <= arity; k++) {
    fused_source *s = &o->in[k - 1];
    if (d->is_scalar[k]) {
      *s = (fused_source){FROM_PARAM, param(g, d->scalars[k])};
      continue;
    }
    int b = add_buffer(g, (uintptr_t)d->data[k]);
    *s = g->last_writer[b] >= 0 ? (fused_source){FROM_RESULT, g->last_writer[b]}
                                : (fused_source){FROM_BUFFER, b};
  }
  o->alpha = param(g, alpha);
  o->beta = param(g, beta);
  o->out = add_buffer(g, (uintptr_t)d->data[0]);
  g->last_writer[o->out] = g->nops;
  o->call.ndim = (signed char)d->ndim;
  o->call.ninputs = (signed char)d->ninputs;
  for (int k = 0; k <= d->ninputs; k++) {
    o->call.data[k] = d->data[k];
    o->call.is_scalar[k] = (unsigned char)d->is_scalar[k];
    o->call.scalars[k] = d->scalars[k];
  }
  o->alpha_value = alpha;
  o->beta_value = beta;
  g->needs_special |= fused_op_info_of(op)->special;
  g->nops++;
}

/* The op's length when every memory operand walks one contiguous range (the unfused kernels'
 * EW_CONTIG case), else -1. */
static int64_t line_length(const axon_ew_desc *d) {
  if (d->ndim > 1) return -1;
  int64_t n = d->ndim ? d->sizes[0] : 1;
  for (int k = 0; k <= d->ninputs; k++) {
    if (k > 0 && d->is_scalar[k]) continue;
    if (!d->data[k] || (d->ndim == 1 && d->strides[k][0] != 1)) return -1;
  }
  return n;
}

/* The open group the op joins: the stream's group of its length, type and form, after launching
 * every other open group it conflicts with, and that group too if the op does not fit it; a new
 * group when there is none (the oldest is launched to make room). NULL when a launch failed (*st).
 */
static fused_group *group_for(fused_stream *fs, const axon_ew_desc *d, int arity, int64_t n,
                              axon_dtype dtype, int vector, axon_status_t *st) {
  fused_group *g = NULL, *oldest = NULL, *free_slot = NULL;
  for (int i = 0; i < FUSED_MAX_OPEN && *st == AXON_SUCCESS; i++) {
    fused_group *h = &fs->groups[i];
    if (!h->nops) {
      if (!free_slot) free_slot = h;
    } else if (h->numel == n && h->dtype == dtype && h->vector == vector) {
      g = h;
    } else if (conflicts(h, d, arity, (size_t)n * axon_dtype_size(dtype))) {
      *st = settle_group(h);
      if (!free_slot) free_slot = h;
    } else if (!oldest || h->sequence < oldest->sequence) {
      oldest = h;
    }
  }
  if (*st != AXON_SUCCESS) return NULL;
  if (g && !fits(g, d, arity)) {
    *st = settle_group(g);
    if (*st != AXON_SUCCESS) return NULL;
  }
  if (g && g->nops) return g;
  if (!g && !free_slot) {
    *st = settle_group(oldest);
    if (*st != AXON_SUCCESS) return NULL;
    free_slot = oldest;
  }
  g = g ? g : free_slot;
  g->stream = fs->stream;
  g->numel = n;
  g->dtype = dtype;
  g->vector = vector;
  g->sequence = ++fs->opened;
  g->next_pending = pending;
  pending = g;
  atomic_fetch_add(&npending, 1);
  return g;
}

axon_status_t axon_fused_record(axon_stream_t stream, axon_pointwise_op op, axon_dtype dtype,
                                const axon_ew_desc *d, double alpha, double beta, int *recorded) {
  *recorded = 0;
  if (!axon_fused_eager_enabled() || !is_float_dtype(dtype) || !stream || axon_forked_child())
    return AXON_SUCCESS;
  const fused_op_info *info = fused_op_info_of(op);
  if (!info || !info->fusable || d->ninputs != info->arity) return AXON_SUCCESS;
  int64_t n = line_length(d);
  if (n <= 0) return AXON_SUCCESS;
  /* The unfused kernels' choice (codegen.c); float64 has no eight-lane form (common.cl). */
  int vector = rows_per_item(stream) && n >= 8 && dtype != AXON_F64;
  lock_groups();
  if (!stream->fused && (stream->fused = calloc(1, sizeof *stream->fused)))
    stream->fused->stream = stream;
  axon_status_t st = AXON_SUCCESS;
  fused_group *g =
      stream->fused ? group_for(stream->fused, d, info->arity, n, dtype, vector, &st) : NULL;
  if (g) {
    append(g, op, info->arity, d, alpha, beta);
    stats.ops_recorded++;
    *recorded = 1;
  }
  pthread_mutex_unlock(&lock);
  return st;
}
