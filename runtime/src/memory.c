/*
 * Device addresses and the caching allocator.
 *
 * One range of host address space is reserved with no access rights. Each cl_mem segment
 * the allocator creates is given a slice of that range; blocks carved out of a segment are
 * addresses inside its slice. So any pointer PyTorch derives from an allocation (views,
 * offsets) resolves by binary search to (segment's cl_mem, pointer - segment base), and a
 * host dereference faults at once instead of reading garbage.
 *
 * The caching follows PyTorch's CUDA allocator in outline: sizes are rounded to 512 bytes;
 * requests up to 1 MiB share 2 MiB segments, larger ones get segments of their own (rounded
 * to 2 MiB); free blocks are split and merged with free neighbours; a free block is reused
 * only on the stream it was allocated for, unless other streams recorded with
 * axon_record_stream have since passed a marker queued at the free.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fused/fused.h"
#include "internal.h"
#include "live_objects.h"
#include "usage_board.h"

#define ROUND 512
#define SMALL_LIMIT (1u << 20)
#define SMALL_SEGMENT (2u << 20)
#define LARGE_ROUND (2u << 20)
#define RESERVED_SPACE ((size_t)1 << 40) /* 1 TiB of address space, never backed */
#define RESERVED_SPACE_MIN ((size_t)1 << 30)

typedef struct segment segment;

typedef struct block {
  uintptr_t addr;
  size_t size;
  int allocated;
  segment *seg;
  struct block *prev, *next; /* address-order neighbours within the segment */
  struct block *free_next;   /* in a pool's free list */
  axon_stream_t stream;
  axon_stream_t *extra_streams; /* from axon_record_stream */
  int nextra;
  cl_event *pending; /* markers that must complete before reuse */
  int npending;
} block;

struct segment {
  uintptr_t base;
  size_t size;
  cl_mem mem;
  uint64_t sequence; /* creation order of the cl_mem */
  int device;
  int small;
  block *first;
};

typedef struct axon_memory_pool {
  block *free_small, *free_large; /* sorted by size */
  block *pending;                 /* freed, waiting for other streams (linked by free_next) */
  axon_memory_stats stats;
  uint64_t limit;
} axon_memory_pool;

/* ---- a sorted table of address ranges ----------------------------------------------------- */

typedef struct range {
  uintptr_t base;
  size_t size;
  void *payload;
} range;

typedef struct range_table {
  range *items;
  size_t count, capacity;
} range_table;

/* Index of the last range with base <= addr, or -1. */
static long range_floor(const range_table *t, uintptr_t addr) {
  long lo = 0, hi = (long)t->count - 1, found = -1;
  while (lo <= hi) {
    long mid = (lo + hi) / 2;
    if (t->items[mid].base <= addr) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

static void *range_find(const range_table *t, uintptr_t addr) {
  long i = range_floor(t, addr);
  if (i < 0 || addr >= t->items[i].base + t->items[i].size) return NULL;
  return t->items[i].payload;
}

static int range_insert(range_table *t, uintptr_t base, size_t size, void *payload) {
  if (t->count == t->capacity) {
    size_t cap = t->capacity ? t->capacity * 2 : 64;
    range *items = realloc(t->items, cap * sizeof *items);
    if (!items) return 0;
    t->items = items;
    t->capacity = cap;
  }
  size_t at = (size_t)(range_floor(t, base) + 1);
  memmove(&t->items[at + 1], &t->items[at], (t->count - at) * sizeof *t->items);
  t->items[at] = (range){base, size, payload};
  t->count++;
  return 1;
}

static void range_remove(range_table *t, uintptr_t base) {
  long i = range_floor(t, base);
  if (i < 0 || t->items[i].base != base) return;
  memmove(&t->items[i], &t->items[i + 1], (t->count - (size_t)i - 1) * sizeof *t->items);
  t->count--;
}

/* ---- process-wide state ------------------------------------------------------------------ */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static range_table segments; /* all devices */
static range_table pinned;   /* pinned host allocations */
static uintptr_t space_base, space_next, space_end;
static range_table space_free; /* released slices of the reserved space */
static uint64_t segment_sequence;

static uint64_t parse_limit(const char *s) {
  if (!s || !*s) return 0;
  char *end;
  double v = strtod(s, &end);
  switch (*end) {
    case 'k':
    case 'K':
      v *= 1024.0;
      break;
    case 'm':
    case 'M':
      v *= 1024.0 * 1024.0;
      break;
    case 'g':
    case 'G':
      v *= 1024.0 * 1024.0 * 1024.0;
      break;
    default:
      break;
  }
  return v > 0 ? (uint64_t)v : 0;
}

static axon_status_t get_pool(int device, axon_device **dev_out, axon_memory_pool **out) {
  axon_device *d;
  AXON_TRY(axon_device_get(device, &d));
  if (!d->pool) {
    axon_memory_pool *p = calloc(1, sizeof *p);
    if (!p) return axon_fail(CL_OUT_OF_HOST_MEMORY, "out of host memory");
    p->limit = d->info.global_mem_bytes;
    uint64_t env = parse_limit(getenv("AXON_MEMORY_LIMIT"));
    if (env && env < p->limit) p->limit = env;
    p->stats.limit_bytes = p->limit;
    d->pool = p;
  }
  *dev_out = d;
  *out = d->pool;
  return AXON_SUCCESS;
}

/* Where address space is limited (ulimit -v; ThreadSanitizer's layout leaves 1 TiB free in about
 * half its runs) a smaller range, halving down to 1 GiB, rather than no device memory at all. */
static int reserve_space(void) {
  if (space_base) return 1;
  for (size_t size = RESERVED_SPACE; size >= RESERVED_SPACE_MIN; size /= 2) {
    void *p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) continue;
    space_base = space_next = (uintptr_t)p;
    space_end = space_base + size;
    return 1;
  }
  return 0;
}

/* A slice of the reserved space: first fit among released slices, else the unused tail. */
static uintptr_t take_space(size_t size) {
  for (size_t i = 0; i < space_free.count; i++) {
    range *r = &space_free.items[i];
    if (r->size < size) continue;
    uintptr_t base = r->base;
    if (r->size == size) {
      range_remove(&space_free, base);
    } else {
      r->base += size;
      r->size -= size;
    }
    return base;
  }
  if (space_end - space_next < size) return 0;
  uintptr_t base = space_next;
  space_next += size;
  return base;
}

static void give_space(uintptr_t base, size_t size) {
  range_insert(&space_free, base, size, NULL); /* not merged: slices are reused by size */
}

/* ---- free lists ----------------------------------------------------------------------------- */

static block **free_list(axon_memory_pool *p, const block *b) {
  return b->seg->small ? &p->free_small : &p->free_large;
}

static void free_list_insert(axon_memory_pool *p, block *b) {
  block **at = free_list(p, b);
  while (*at && (*at)->size < b->size) at = &(*at)->free_next;
  b->free_next = *at;
  *at = b;
}

static void free_list_remove(axon_memory_pool *p, block *b) {
  for (block **at = free_list(p, b); *at; at = &(*at)->free_next)
    if (*at == b) {
      *at = b->free_next;
      b->free_next = NULL;
      return;
    }
}

/* Returns a block to the free list, merging it with free neighbours of the same stream. */
static void release_block(axon_memory_pool *p, block *b) {
  b->allocated = 0;
  block *n = b->next;
  if (n && !n->allocated && n->stream == b->stream && !n->npending) {
    free_list_remove(p, n);
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    free(n);
  }
  block *prev = b->prev;
  if (prev && !prev->allocated && prev->stream == b->stream && !prev->npending) {
    free_list_remove(p, prev);
    prev->size += b->size;
    prev->next = b->next;
    if (b->next) b->next->prev = prev;
    free(b);
    b = prev;
  }
  free_list_insert(p, b);
}

/* Moves pending blocks whose markers have all completed (or all, if wait) to the free lists. */
static void process_pending(axon_memory_pool *p, int wait) {
  block **at = &p->pending;
  while (*at) {
    block *b = *at;
    int done = 1;
    for (int i = 0; i < b->npending && done; i++) {
      cl_int status = CL_COMPLETE;
      if (wait) clWaitForEvents(1, &b->pending[i]);
      clGetEventInfo(b->pending[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                     NULL);
      done = status == CL_COMPLETE || status < 0;
    }
    if (!done) {
      at = &b->free_next;
      continue;
    }
    *at = b->free_next;
    b->free_next = NULL;
    for (int i = 0; i < b->npending; i++) clReleaseEvent(b->pending[i]);
    axon_live_add(AXON_LIVE_EVENT, -b->npending);
    free(b->pending);
    b->pending = NULL;
    b->npending = 0;
    release_block(p, b);
  }
}

static block *find_free(axon_memory_pool *p, size_t size, axon_stream_t stream, int small) {
  for (block *b = small ? p->free_small : p->free_large; b; b = b->free_next) {
    if (b->size < size || b->stream != stream) continue;
    /* Large requests do not take blocks far bigger than themselves (fragmentation). */
    if (!small && size < (64u << 20) && b->size > size + (64u << 20)) continue;
    return b;
  }
  return NULL;
}

/* ---- segments --------------------------------------------------------------------------- */

static axon_status_t create_segment(axon_device *d, axon_memory_pool *p, size_t size, int small,
                                    segment **out) {
  if (p->stats.reserved_bytes + size > p->limit) return AXON_ERROR_OUT_OF_MEMORY;
  if (size > d->info.max_alloc_bytes) return AXON_ERROR_OUT_OF_MEMORY;
  if (!reserve_space()) return axon_fail(AXON_ERROR_OUT_OF_MEMORY, "cannot reserve address space");
  uintptr_t base = take_space(size);
  if (!base) return AXON_ERROR_OUT_OF_MEMORY;
  cl_int err;
  cl_mem mem = clCreateBuffer(d->context, CL_MEM_READ_WRITE, size, NULL, &err);
  if (!mem) {
    give_space(base, size);
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
        err == CL_OUT_OF_HOST_MEMORY || err == CL_INVALID_BUFFER_SIZE)
      return AXON_ERROR_OUT_OF_MEMORY;
    return axon_fail(err, "clCreateBuffer(%zu bytes) failed: %s", size, axon_status_name(err));
  }
  axon_live_add(AXON_LIVE_BUFFER, 1);
  segment *s = calloc(1, sizeof *s);
  block *b = calloc(1, sizeof *b);
  if (!s || !b || !range_insert(&segments, base, size, s)) {
    free(s);
    free(b);
    clReleaseMemObject(mem);
    axon_live_add(AXON_LIVE_BUFFER, -1);
    give_space(base, size);
    return axon_fail(CL_OUT_OF_HOST_MEMORY, "out of host memory");
  }
  *s = (segment){base, size, mem, ++segment_sequence, d->index, small, b};
  *b = (block){.addr = base, .size = size, .seg = s};
  p->stats.reserved_bytes += size;
  if (p->stats.reserved_bytes > p->stats.reserved_peak)
    p->stats.reserved_peak = p->stats.reserved_bytes;
  p->stats.segment_count++;
  *out = s;
  return AXON_SUCCESS;
}

/* Releases every segment of the pool that holds no allocation and no pending block. */
static void release_cached(axon_memory_pool *p, int device) {
  process_pending(p, 1);
  for (size_t i = 0; i < segments.count;) {
    segment *s = segments.items[i].payload;
    block *b = s->first;
    if (s->device != device || b->allocated || b->next || b->npending) {
      i++;
      continue;
    }
    free_list_remove(p, b);
    free(b);
    clReleaseMemObject(s->mem);
    axon_live_add(AXON_LIVE_BUFFER, -1);
    range_remove(&segments, s->base);
    give_space(s->base, s->size);
    p->stats.reserved_bytes -= s->size;
    p->stats.segment_count--;
    free(s);
  }
}

static void format_size(char *dst, size_t n, uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    u++;
  }
  snprintf(dst, n, u ? "%.2f %s" : "%.0f %s", v, units[u]);
}

static axon_status_t out_of_memory(axon_device *d, axon_memory_pool *p, size_t size) {
  char req[32], alloc[32], res[32], lim[32], maxa[32];
  format_size(req, sizeof req, size);
  format_size(alloc, sizeof alloc, p->stats.allocated_bytes);
  format_size(res, sizeof res, p->stats.reserved_bytes);
  format_size(lim, sizeof lim, p->limit);
  format_size(maxa, sizeof maxa, d->info.max_alloc_bytes);
  p->stats.oom_count++;
  return axon_fail(AXON_ERROR_OUT_OF_MEMORY,
                   "axon: out of memory on device %d (%s). Tried to allocate %s; %s allocated "
                   "by tensors, %s reserved by Axon (cached included), limit %s, largest single "
                   "allocation %s. Set AXON_MEMORY_LIMIT or free tensors.",
                   d->index, d->info.name, req, alloc, res, lim, maxa);
}

/* ---- public API ------------------------------------------------------------------------- */

axon_status_t axon_malloc(int device, size_t size, axon_stream_t stream, void **ptr) {
  *ptr = NULL;
  if (size == 0) return AXON_SUCCESS;
  AXON_FAULT_POINT(AXON_FAULT_ALLOC, CL_MEM_OBJECT_ALLOCATION_FAILURE, "device allocation");
  axon_device *d;
  axon_memory_pool *p;
  AXON_TRY(axon_stream_resolve(stream, device, &stream));
  pthread_mutex_lock(&lock);
  axon_status_t st = get_pool(device, &d, &p);
  if (st != AXON_SUCCESS) goto done;
  if (size > ((size_t)1 << 62)) {
    st = out_of_memory(d, p, size);
    goto done;
  }
  int small = size <= SMALL_LIMIT;
  size_t rounded = axon_round_up(size, ROUND);
  process_pending(p, 0);
  block *b = find_free(p, rounded, stream, small);
  if (!b) {
    size_t seg_size = small ? SMALL_SEGMENT : axon_round_up(rounded, LARGE_ROUND);
    segment *s = NULL;
    st = create_segment(d, p, seg_size, small, &s);
    if (st == AXON_ERROR_OUT_OF_MEMORY) { /* free the cache and try once more */
      if (axon_fused_any_pending()) {
        /* Recorded work may use cached blocks: it runs before their memory goes. */
        pthread_mutex_unlock(&lock);
        axon_fused_settle_all();
        pthread_mutex_lock(&lock);
      }
      release_cached(p, device);
      st = create_segment(d, p, seg_size, small, &s);
    }
    if (st == AXON_ERROR_OUT_OF_MEMORY) {
      st = out_of_memory(d, p, size);
      goto done;
    }
    if (st != AXON_SUCCESS) goto done;
    b = s->first;
    b->stream = stream;
  } else {
    free_list_remove(p, b);
  }
  /* Split off the remainder when it is worth keeping. */
  size_t remainder = b->size - rounded;
  if (remainder >= (small ? ROUND : SMALL_LIMIT + 1)) {
    block *rest = calloc(1, sizeof *rest);
    if (rest) {
      *rest = (block){.addr = b->addr + rounded,
                      .size = remainder,
                      .seg = b->seg,
                      .prev = b,
                      .next = b->next,
                      .stream = stream};
      if (b->next) b->next->prev = rest;
      b->next = rest;
      b->size = rounded;
      free_list_insert(p, rest);
    }
  }
  b->allocated = 1;
  b->stream = stream;
  p->stats.allocated_bytes += b->size;
  if (p->stats.allocated_bytes > p->stats.allocated_peak)
    p->stats.allocated_peak = p->stats.allocated_bytes;
  p->stats.alloc_count++;
  axon_usage_publish(device, d->info.name, &p->stats);
  *ptr = (void *)b->addr;
done:
  pthread_mutex_unlock(&lock);
  return st;
}

/* The allocated block starting exactly at ptr, or NULL. Caller holds the lock. */
static block *find_block(const void *ptr) {
  segment *s = range_find(&segments, (uintptr_t)ptr);
  if (!s) return NULL;
  for (block *b = s->first; b; b = b->next)
    if (b->addr == (uintptr_t)ptr) return b->allocated ? b : NULL;
  return NULL;
}

/* Tells fused eager the block is going (its recorded writes need not reach memory, other
 * streams' recorded uses of it run first), outside the lock: that may launch kernels. */
static void before_free(void *ptr) {
  if (!axon_fused_any_pending()) return;
  pthread_mutex_lock(&lock);
  block *b = find_block(ptr);
  uintptr_t addr = b ? b->addr : 0;
  size_t size = b ? b->size : 0;
  axon_stream_t owner = b ? b->stream : NULL;
  pthread_mutex_unlock(&lock);
  if (b) axon_fused_before_free(owner, addr, size);
}

axon_status_t axon_free(void *ptr) {
  if (!ptr || axon_forked_child()) return AXON_SUCCESS;
  before_free(ptr);
  pthread_mutex_lock(&lock);
  block *b = find_block(ptr);
  if (!b) {
    pthread_mutex_unlock(&lock);
    return axon_fail(AXON_ERROR_INVALID_POINTER,
                     "axon_free(%p): not the start of a live device allocation (double free, "
                     "interior or foreign pointer)",
                     ptr);
  }
  axon_device *d;
  axon_memory_pool *p;
  get_pool(b->seg->device, &d, &p);
  p->stats.allocated_bytes -= b->size;
  p->stats.free_count++;
  axon_usage_publish(b->seg->device, d->info.name, &p->stats);
  b->allocated = 0;
  if (b->nextra) {
    /* Other streams may still use the memory: reuse waits for a marker on each of them. */
    b->pending = calloc((size_t)b->nextra, sizeof *b->pending);
    for (int i = 0; b->pending && i < b->nextra; i++) {
      if (clEnqueueMarkerWithWaitList(b->extra_streams[i]->queue, 0, NULL,
                                      &b->pending[b->npending]) == CL_SUCCESS) {
        b->npending++;
        axon_live_add(AXON_LIVE_EVENT, 1);
      }
      clFlush(b->extra_streams[i]->queue);
    }
    free(b->extra_streams);
    b->extra_streams = NULL;
    b->nextra = 0;
    if (b->npending) {
      b->free_next = p->pending;
      p->pending = b;
      pthread_mutex_unlock(&lock);
      return AXON_SUCCESS;
    }
    free(b->pending);
    b->pending = NULL;
  }
  release_block(p, b);
  pthread_mutex_unlock(&lock);
  return AXON_SUCCESS;
}

axon_status_t axon_record_stream(void *ptr, axon_stream_t stream) {
  if (!stream) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "axon_record_stream: NULL stream");
  pthread_mutex_lock(&lock);
  segment *s = range_find(&segments, (uintptr_t)ptr);
  block *b = NULL;
  if (s)
    for (b = s->first;
         b && !(b->allocated && (uintptr_t)ptr >= b->addr && (uintptr_t)ptr < b->addr + b->size);
         b = b->next) {
    }
  axon_status_t st = AXON_SUCCESS;
  if (!b) {
    st = axon_fail(AXON_ERROR_INVALID_POINTER, "axon_record_stream(%p): not device memory", ptr);
  } else if (stream != b->stream) {
    int known = 0;
    for (int i = 0; i < b->nextra; i++) known |= b->extra_streams[i] == stream;
    if (!known) {
      axon_stream_t *grown = realloc(b->extra_streams, (size_t)(b->nextra + 1) * sizeof *grown);
      if (grown) {
        grown[b->nextra++] = stream;
        b->extra_streams = grown;
      } else {
        st = axon_fail(CL_OUT_OF_HOST_MEMORY, "out of host memory");
      }
    }
  }
  pthread_mutex_unlock(&lock);
  return st;
}

axon_status_t axon_empty_cache(int device) {
  axon_device *d;
  axon_memory_pool *p;
  AXON_TRY(axon_fused_settle_all()); /* recorded work may use the cached blocks */
  pthread_mutex_lock(&lock);
  axon_status_t st = get_pool(device, &d, &p);
  if (st == AXON_SUCCESS) {
    release_cached(p, device);
    axon_usage_publish(device, d->info.name, &p->stats);
  }
  pthread_mutex_unlock(&lock);
  return st;
}

axon_status_t axon_memory_stats_get(int device, axon_memory_stats *stats) {
  axon_device *d;
  axon_memory_pool *p;
  pthread_mutex_lock(&lock);
  axon_status_t st = get_pool(device, &d, &p);
  if (st == AXON_SUCCESS) *stats = p->stats;
  pthread_mutex_unlock(&lock);
  return st;
}

axon_status_t axon_memory_reset_peak(int device) {
  axon_device *d;
  axon_memory_pool *p;
  pthread_mutex_lock(&lock);
  axon_status_t st = get_pool(device, &d, &p);
  if (st == AXON_SUCCESS) {
    p->stats.allocated_peak = p->stats.allocated_bytes;
    p->stats.reserved_peak = p->stats.reserved_bytes;
    axon_usage_publish(device, d->info.name, &p->stats);
  }
  pthread_mutex_unlock(&lock);
  return st;
}

axon_status_t axon_memory_info(int device, uint64_t *free_bytes, uint64_t *total_bytes) {
  axon_device *d;
  axon_memory_pool *p;
  pthread_mutex_lock(&lock);
  axon_status_t st = get_pool(device, &d, &p);
  if (st == AXON_SUCCESS) {
    *total_bytes = p->limit;
    *free_bytes = p->limit - p->stats.reserved_bytes;
  }
  pthread_mutex_unlock(&lock);
  return st;
}

axon_status_t axon_resolve_mem(const void *ptr, cl_mem *mem, size_t *offset) {
  pthread_mutex_lock(&lock);
  segment *s = range_find(&segments, (uintptr_t)ptr);
  if (s) {
    *mem = s->mem;
    *offset = (uintptr_t)ptr - s->base;
  }
  pthread_mutex_unlock(&lock);
  if (!s)
    return axon_fail(AXON_ERROR_INVALID_POINTER,
                     "%p is not an axon device address (a CPU tensor passed to a device op?)", ptr);
  return AXON_SUCCESS;
}

axon_status_t axon_resolve(const void *ptr, axon_buffer_ref *ref) {
  cl_mem mem;
  AXON_TRY(axon_resolve_mem(ptr, &mem, &ref->offset));
  ref->mem = mem;
  pthread_mutex_lock(&lock);
  segment *s = range_find(&segments, (uintptr_t)ptr);
  ref->device = s ? s->device : -1;
  pthread_mutex_unlock(&lock);
  return AXON_SUCCESS;
}

int axon_is_device_ptr(const void *ptr, int *device) {
  pthread_mutex_lock(&lock);
  segment *s = range_find(&segments, (uintptr_t)ptr);
  if (s && device) *device = s->device;
  pthread_mutex_unlock(&lock);
  return s != NULL;
}

uint64_t axon_mem_sequence(const void *ptr) {
  pthread_mutex_lock(&lock);
  segment *s = range_find(&segments, (uintptr_t)ptr);
  uint64_t seq = s ? s->sequence : 0;
  pthread_mutex_unlock(&lock);
  return seq;
}

/* ---- pinned host memory ------------------------------------------------------------------- */

axon_status_t axon_host_alloc(size_t size, void **ptr) {
  *ptr = NULL;
  if (size == 0) return AXON_SUCCESS;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t rounded = axon_round_up(size, page);
  void *p = NULL;
  if (posix_memalign(&p, page, rounded) != 0)
    return axon_fail(AXON_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes of pinned host memory",
                     size);
  mlock(p, rounded); /* best effort: page-locking needs privileges or limits */
  pthread_mutex_lock(&lock);
  int ok = range_insert(&pinned, (uintptr_t)p, rounded, p);
  pthread_mutex_unlock(&lock);
  if (!ok) {
    free(p);
    return axon_fail(CL_OUT_OF_HOST_MEMORY, "out of host memory");
  }
  *ptr = p;
  return AXON_SUCCESS;
}

axon_status_t axon_host_free(void *ptr) {
  if (!ptr || axon_forked_child()) return AXON_SUCCESS;
  pthread_mutex_lock(&lock);
  long i = range_floor(&pinned, (uintptr_t)ptr);
  int ok = i >= 0 && pinned.items[i].base == (uintptr_t)ptr;
  size_t size = ok ? pinned.items[i].size : 0;
  if (ok) range_remove(&pinned, (uintptr_t)ptr);
  pthread_mutex_unlock(&lock);
  if (!ok)
    return axon_fail(AXON_ERROR_INVALID_POINTER, "axon_host_free(%p): not pinned memory", ptr);
  munlock(ptr, size);
  free(ptr);
  return AXON_SUCCESS;
}

int axon_is_host_pinned(const void *ptr) {
  pthread_mutex_lock(&lock);
  int found = range_find(&pinned, (uintptr_t)ptr) != NULL;
  pthread_mutex_unlock(&lock);
  return found;
}

void axon_memory_pool_destroy(struct axon_memory_pool *pool) {
  free(pool);
}
