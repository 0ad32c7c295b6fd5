/*
 * The program cache: kernels are built lazily, one at a time, and kept twice.
 *
 * A family program (axon_program_get) is a handle on a family's source and build options;
 * nothing is compiled until a kernel of it is launched. Then that kernel alone is built, as a
 * program of its own from the family source with -DAXON_ONLY -DAXON_WANT_<name>=1 (KERNEL() in
 * kernels/common.cl drops every other kernel before code generation): on PoCL a family's
 * whole program costs a second or more, and exporting its binary compiles every one of its
 * hundred-odd kernels (34 s for elementwise), where one kernel costs a fraction of a second.
 * AXON_PROGRAMS=family builds each family whole instead (for drivers where that is cheaper).
 * User sources (axon_program_from_source) are built whole at once, so errors show at once.
 *
 * In memory, per device: (family, options) -> program, and each program's kernels by name.
 * On disk: one file per built program under the cache directory. The key is a 128-bit hash of
 * the source, the build options (which name the kernel), the device name, the driver and
 * platform versions and the cache format version, so any change to one of them misses
 * instead of loading a stale binary. A file is: magic "AXONPRG\0", format version, flags, key,
 * payload size, payload checksum, payload (the program binary; none for a kernel name known
 * to be absent from its family). It is written to a temporary file and renamed into place, so
 * readers never see half a file; a file that fails any check is deleted and rebuilt.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "live_objects.h"
#include "program_internal.h"
#include "quirks.h"

#include "axon/sources.h"

#define CACHE_FORMAT_VERSION 2u
#define CACHE_MAGIC "AXONPRG"

/* Flags of a disk entry. */
#define ENTRY_ABSENT 1u /* the kernel is not in its family: no payload */

struct axon_program {
  axon_device *device;
  char *source;         /* the family's source; NULL for user source, which is built whole */
  char *options;        /* as built: the request's plus the device's (EXACT_DIV_SQRT) */
  char what[96];        /* for build errors: kernel family "reduce" */
  int alone_left;       /* kernels still to build alone before the whole family; INT_MAX: all */
  int store_binaries;   /* in Axon's disk cache (not where the driver keeps its own) */
  uint64_t user_key[2]; /* user source: the key it was built under */
  kernel_entry *kernels;
  int nkernels;
  struct axon_program *next; /* the device's user programs */
  /* Written under build_lock and read without it (size_builds before taking it, and
   * axon_program_lacks_kernel under launch_lock alone), hence atomic: whether the sizing was
   * chosen (axon_program_build_sparsely or _first_alone was called; the race ThreadSanitizer
   * found in test_threads), and every kernel of the source, once built. */
  atomic_int sizing_checked;
  _Atomic(cl_program) whole;
};

/* A family already requested on a device: (family, options) -> program. Launches look here
 * first, so the hot path neither reassembles a family's source nor hashes its tens of
 * kilobytes; only the first request of a family per device and process does. */
typedef struct family_entry {
  uint64_t hash;
  char *family, *options;
  struct axon_program *program;
  struct family_entry *next;
} family_entry;

#define FAMILY_BUCKETS 256

typedef struct axon_program_cache {
  struct axon_program *head;
  family_entry *families[FAMILY_BUCKETS];
} axon_program_cache;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
/* Guards every program's kernel list, and the launches that set kernel arguments. */
static pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;
/* One build at a time: PoCL serialises its compiler anyway, and a kernel requested by two
 * threads is then built once. Never held together with cache_lock's callers' waits. */
static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;
static axon_cache_stats stats;

pthread_mutex_t *axon_launch_lock(void) {
  return &launch_lock;
}

/* The device's cache, made at its first use (NULL when out of memory). Called with cache_lock
 * held. */
static axon_program_cache *cache_of(axon_device *d) {
  if (!d->programs) d->programs = calloc(1, sizeof(axon_program_cache));
  return d->programs;
}

void axon_program_cache_stats(axon_cache_stats *out) {
  pthread_mutex_lock(&cache_lock);
  *out = stats;
  pthread_mutex_unlock(&cache_lock);
}

/* FNV-1a, 64-bit; two different offsets make a 128-bit key. */
static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static void hash_str(uint64_t key[2], const char *s) {
  size_t n = strlen(s) + 1; /* the terminator separates fields */
  key[0] = fnv1a(key[0], s, n);
  key[1] = fnv1a(key[1], s, n);
}

static uint64_t hash_name(const char *a, const char *b) {
  uint64_t h = fnv1a(0xcbf29ce484222325ull, a, strlen(a) + 1);
  return b ? fnv1a(h, b, strlen(b) + 1) : h;
}

typedef struct file_header {
  char magic[8];
  uint32_t version, flags;
  uint64_t key[2];
  uint64_t size, checksum;
} file_header;

static void entry_path(char *dst, size_t n, const uint64_t key[2]) {
  snprintf(dst, n, "%s/%016llx%016llx.bin", axon_program_cache_dir(), (unsigned long long)key[0],
           (unsigned long long)key[1]);
}

static void count_damaged(void) {
  pthread_mutex_lock(&cache_lock);
  stats.damaged_entries++;
  pthread_mutex_unlock(&cache_lock);
}

/* The cached binary for key, or NULL (missing, absent or damaged; damaged files are removed).
 * *absent says the entry records a kernel name its family does not define. */
static unsigned char *disk_load(const uint64_t key[2], size_t *size, int *absent) {
  *absent = 0;
  if (!axon_program_cache_dir()) return NULL;
  char path[1200];
  entry_path(path, sizeof path, key);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  file_header h;
  unsigned char *data = NULL;
  int ok = fread(&h, sizeof h, 1, f) == 1 && !memcmp(h.magic, CACHE_MAGIC, 8) &&
           h.version == CACHE_FORMAT_VERSION && h.key[0] == key[0] && h.key[1] == key[1] &&
           h.size < (1ull << 31) && (h.size > 0) != ((h.flags & ENTRY_ABSENT) != 0);
  if (ok && (h.flags & ENTRY_ABSENT)) {
    fclose(f);
    *absent = 1;
    return NULL;
  }
  if (ok) {
    data = malloc(h.size);
    ok = data && fread(data, 1, h.size, f) == h.size &&
         fnv1a(0xcbf29ce484222325ull, data, h.size) == h.checksum;
  }
  fclose(f);
  if (!ok) {
    free(data);
    remove(path);
    count_damaged();
    return NULL;
  }
  *size = h.size;
  return data;
}

/* Writes an entry (data may be NULL with flags ENTRY_ABSENT) through a renamed temporary. */
static void disk_write(const uint64_t key[2], uint32_t flags, const unsigned char *data,
                       size_t size) {
  file_header h = {.version = CACHE_FORMAT_VERSION,
                   .flags = flags,
                   .key = {key[0], key[1]},
                   .size = size,
                   .checksum = data ? fnv1a(0xcbf29ce484222325ull, data, size) : 0};
  memcpy(h.magic, CACHE_MAGIC, 8);
  char path[1200], tmp[1300];
  entry_path(path, sizeof path, key);
  snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
  /* Private to the user: the entries are machine code that this process will run. */
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
  if (!f) {
    if (fd >= 0) close(fd);
    return;
  }
  int ok = fwrite(&h, sizeof h, 1, f) == 1 && (!size || fwrite(data, 1, size, f) == size);
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path) != 0) remove(tmp);
}

static void disk_store(const uint64_t key[2], cl_program program) {
  if (!axon_program_cache_dir()) return;
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
      size == 0)
    return;
  unsigned char *data = malloc(size);
  if (!data) return;
  unsigned char *ptrs[1] = {data};
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof ptrs, ptrs, NULL) == CL_SUCCESS)
    disk_write(key, 0, data, size);
  free(data);
}

static axon_status_t build_log_failure(cl_program program, axon_device *d, cl_int err,
                                       const char *what) {
  size_t n = 0;
  clGetProgramBuildInfo(program, d->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
  char *log = malloc(n + 1);
  if (log) {
    log[0] = '\0';
    clGetProgramBuildInfo(program, d->id, CL_PROGRAM_BUILD_LOG, n, log, NULL);
    log[n] = '\0';
  }
  axon_status_t st = axon_fail(AXON_ERROR_BUILD_FAILED, "building %s failed (%s):\n%s", what,
                               axon_status_name(err), log ? log : "(no build log)");
  free(log);
  return st;
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void count(uint64_t *counter) {
  pthread_mutex_lock(&cache_lock);
  (*counter)++;
  pthread_mutex_unlock(&cache_lock);
}

/* The program for key: from the disk cache or built from source. *out is NULL with success
 * when the disk cache records that the kernel this build selects does not exist. */
static axon_status_t build(axon_device *d, const char *source, const char *options,
                           const char *what, const uint64_t key[2], cl_program *out) {
  cl_int err;
  size_t bin_size = 0;
  int absent = 0;
  unsigned char *bin = disk_load(key, &bin_size, &absent);
  *out = NULL;
  if (absent) return AXON_SUCCESS;
  if (bin) {
    const unsigned char *bins[1] = {bin};
    cl_int bin_status;
    cl_program p =
        clCreateProgramWithBinary(d->context, 1, &d->id, &bin_size, bins, &bin_status, &err);
    free(bin);
    if (p) axon_live_add(AXON_LIVE_PROGRAM, 1);
    if (p && clBuildProgram(p, 1, &d->id, options, NULL, NULL) == CL_SUCCESS) {
      count(&stats.disk_hits);
      *out = p;
      return AXON_SUCCESS;
    }
    if (p) { /* unusable binary: build from source below */
      clReleaseProgram(p);
      axon_live_add(AXON_LIVE_PROGRAM, -1);
    }
  }
  AXON_FAULT_POINT(AXON_FAULT_BUILD, CL_BUILD_PROGRAM_FAILURE, what);
  cl_program p = clCreateProgramWithSource(d->context, 1, &source, NULL, &err);
  if (!p) return axon_fail(err, "clCreateProgramWithSource failed: %s", axon_status_name(err));
  axon_live_add(AXON_LIVE_PROGRAM, 1);
  double start = seconds_now();
  err = clBuildProgram(p, 1, &d->id, options, NULL, NULL);
  if (getenv("AXON_LOG_BUILDS"))
    fprintf(stderr, "axon: built %s in %.0f ms\n", what, 1e3 * (seconds_now() - start));
  if (err != CL_SUCCESS) {
    axon_status_t st = build_log_failure(p, d, err, what);
    clReleaseProgram(p);
    axon_live_add(AXON_LIVE_PROGRAM, -1);
    return st;
  }
  count(&stats.builds);
  *out = p;
  return AXON_SUCCESS;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s) s[n] = '\0';
  fclose(f);
  return s;
}

/* Kernel files added at run time (axon_register_kernel_file): user elementwise kernels. */
typedef struct registered_file {
  char *name, *text;
  struct registered_file *next;
} registered_file;
static registered_file *registered_files;
static pthread_mutex_t registered_lock = PTHREAD_MUTEX_INITIALIZER;

static char *registered_text(const char *name) {
  char *text = NULL;
  pthread_mutex_lock(&registered_lock);
  for (registered_file *f = registered_files; f && !text; f = f->next)
    if (!strcmp(f->name, name)) text = strdup(f->text);
  pthread_mutex_unlock(&registered_lock);
  return text;
}

axon_status_t axon_register_kernel_file(const char *name, const char *text) {
  if (!name || !text || !*name || strlen(name) >= 128 || strchr(name, '+'))
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "kernel file: a name without '+' is needed");
  axon_status_t st = AXON_SUCCESS;
  pthread_mutex_lock(&registered_lock);
  registered_file *f = registered_files;
  while (f && strcmp(f->name, name)) f = f->next;
  if (f && strcmp(f->text, text)) {
    st = axon_fail(AXON_ERROR_INVALID_ARGUMENT,
                   "kernel file \"%s\" is registered already with "
                   "other text",
                   name);
  } else if (!f) {
    f = calloc(1, sizeof *f);
    char *n = strdup(name), *t = strdup(text);
    if (!f || !n || !t) {
      free(f);
      free(n);
      free(t);
      st = axon_fail(CL_OUT_OF_HOST_MEMORY, "out of host memory");
    } else {
      *f = (registered_file){n, t, registered_files};
      registered_files = f;
    }
  }
  pthread_mutex_unlock(&registered_lock);
  return st;
}

void axon_unregister_kernel_file(const char *name) {
  pthread_mutex_lock(&registered_lock);
  for (registered_file **at = &registered_files; *at; at = &(*at)->next)
    if (!strcmp((*at)->name, name)) {
      registered_file *f = *at;
      *at = f->next;
      free(f->name);
      free(f->text);
      free(f);
      break;
    }
  pthread_mutex_unlock(&registered_lock);
}

/* One embedded (or AXON_KERNEL_DIR, or registered) kernel file by name, or NULL: a .cl file or
 * the pointwise table by its name without the extension, a header (NAME_args.h) by its whole
 * name. Caller frees. */
static char *kernel_file_raw(const char *name) {
  char *registered = registered_text(name);
  if (registered) return registered;
  const char *dir = getenv("AXON_KERNEL_DIR");
  if (dir && *dir) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.cl", dir, name);
    char *text = read_file(path);
    if (text) return text;
    snprintf(path, sizeof path, "%s/%s.def", dir, name); /* the pointwise table */
    text = read_file(path);
    if (text) return text;
    snprintf(path, sizeof path, "%s/%s", dir, name); /* a header */
    return read_file(path);
  }
  for (const axon_embedded_source *e = axon_embedded_sources; e->name; e++)
    if (!strcmp(e->name, name)) return strdup(e->text);
  return NULL;
}

#define INCLUDE_DIRECTIVE "#include \""

/* text with each line `#include "NAME"` replaced by kernel file NAME (".cl" dropped), itself
 * expanded: the OpenCL compiler sees the sources as one string and cannot open files, so the
 * kernels include the launch descriptors they share with the C runtime (kernels/NAME_args.h)
 * and each other's helpers this way. The headers carry include guards. Frees text; NULL when
 * an included file is missing or the nesting runs deeper than 8. */
static char *expand_includes(char *text, int depth) {
  char *at = text ? strstr(text, INCLUDE_DIRECTIVE) : NULL;
  while (at && at != text && at[-1] != '\n') at = strstr(at + 1, INCLUDE_DIRECTIVE);
  if (!at) return text;
  const char *name = at + strlen(INCLUDE_DIRECTIVE);
  const char *close = strchr(name, '"');
  size_t len = close ? (size_t)(close - name) : 0;
  char file[128];
  if (depth >= 8 || len == 0 || len >= sizeof file) {
    free(text);
    return NULL;
  }
  memcpy(file, name, len);
  file[len] = '\0';
  if (len > 3 && !strcmp(file + len - 3, ".cl")) file[len - 3] = '\0';
  char *inner = expand_includes(kernel_file_raw(file), depth + 1);
  const char *rest = close + 1 + strcspn(close + 1, "\n");
  size_t head = (size_t)(at - text);
  char *joined = inner ? malloc(head + strlen(inner) + strlen(rest) + 1) : NULL;
  if (joined) {
    memcpy(joined, text, head);
    strcpy(joined + head, inner);
    strcat(joined + head, rest);
  }
  free(inner);
  free(text);
  /* The rest of the file, which may include more. */
  return joined ? expand_includes(joined, depth) : NULL;
}

/* A kernel file with its includes expanded, or NULL. Caller frees. */
static char *kernel_file(const char *name) {
  return expand_includes(kernel_file_raw(name), 0);
}

char *axon_kernel_file_text(const char *name) {
  return name ? kernel_file(name) : NULL;
}

/* The source of a kernel family: the shared definitions (common.cl), then each '+'-separated
 * part of the name in order ("ew_common+special" shares the elementwise macros without
 * building the elementwise kernels). Caller frees; NULL when a part is unknown. */
static char *family_source(const char *family) {
  char *source = kernel_file("common");
  const char *part = family;
  while (source && *part) {
    size_t len = strcspn(part, "+");
    char name[128];
    if (len == 0 || len >= sizeof name) {
      free(source);
      return NULL;
    }
    memcpy(name, part, len);
    name[len] = '\0';
    char *text = kernel_file(name);
    char *joined = text ? malloc(strlen(source) + strlen(text) + 2) : NULL;
    if (joined) sprintf(joined, "%s\n%s", source, text);
    free(text);
    free(source);
    source = joined;
    part += len + (part[len] == '+');
  }
  return source;
}

/* The disk key of a build: source, options, device, driver, format. */
static void program_key(const axon_device *d, const char *source, const char *options,
                        uint64_t key[2]) {
  char version[16];
  snprintf(version, sizeof version, "%u", CACHE_FORMAT_VERSION);
  key[0] = 0xcbf29ce484222325ull;
  key[1] = 0x84222325cbf29ce4ull;
  hash_str(key, source);
  hash_str(key, options);
  hash_str(key, d->info.name);
  hash_str(key, d->info.driver_version);
  hash_str(key, d->info.platform_version);
  hash_str(key, version);
}

/* PyTorch divides and takes square roots correctly rounded (its CUDA build too); OpenCL's
 * default allows 2.5 and 3 ulp in float, and NVIDIA's compiler takes that licence. Where the
 * device offers IEEE division and sqrt, every program is built with them. */
#define EXACT_DIV_SQRT " -cl-fp32-correctly-rounded-divide-sqrt"

static char *device_options(const axon_device *d, const char *options) {
  const char *quirks = axon_quirk_build_options(d->quirks);
  size_t n = strlen(options) + sizeof EXACT_DIV_SQRT + strlen(quirks);
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s%s%s", options, d->info.exact_div_sqrt ? EXACT_DIV_SQRT : "", quirks);
  return s;
}

/* PoCL compiles a kernel's machine code at its first launch (and keeps it in its own disk
 * cache, keyed by source and options), so a family's program costs little more than one
 * kernel's: measured on 2 cores, 0.51 s for the 136 kernels of elementwise against 0.27 s for
 * one of them and 0.22 s for an empty program. Exporting the binary, though, compiles every
 * kernel (34 s for elementwise). Drivers that compile everything at build time (GPUs) pay per
 * kernel instead, and their binaries cost nothing to export. */
static int codegen_at_launch(const axon_device *d) {
  return strstr(d->info.platform_name, "Portable Computing Language") != NULL;
}

static int build_per_kernel(const axon_device *d) {
  const char *mode = getenv("AXON_PROGRAMS");
  if (mode && !strcmp(mode, "family")) return 0;
  if (mode && !strcmp(mode, "kernel")) return 1;
  return !codegen_at_launch(d);
}

static struct axon_program *program_new(axon_device *d, char *source, const char *options,
                                        const char *what) {
  struct axon_program *p = calloc(1, sizeof *p);
  char *opts = device_options(d, options);
  if (!p || !opts) {
    free(p);
    free(opts);
    return NULL;
  }
  p->device = d;
  p->source = source;
  p->options = opts;
  p->alone_left = source && build_per_kernel(d) ? INT_MAX : 0;
  p->store_binaries = !codegen_at_launch(d) || !source;
  snprintf(p->what, sizeof p->what, "%s", what);
  return p;
}

/* Builds (or loads) every kernel of the program's source as one program. build_lock held. */
static axon_status_t build_whole(struct axon_program *p, const char *source) {
  if (p->whole) return AXON_SUCCESS;
  uint64_t key[2];
  program_key(p->device, source, p->options, key);
  cl_program built = NULL;
  AXON_TRY(build(p->device, source, p->options, p->what, key, &built));
  if (!built) return axon_fail(AXON_ERROR_BUILD_FAILED, "%s: damaged cache entry", p->what);
  if (p->store_binaries) disk_store(key, built);
  p->whole = built;
  return AXON_SUCCESS;
}

void axon_program_discard(axon_program_t program) {
  if (!program) return;
  pthread_mutex_lock(&cache_lock);
  axon_program_cache *cache = program->device->programs;
  for (int b = 0; cache && b < FAMILY_BUCKETS; b++)
    for (family_entry **at = &cache->families[b]; *at;) {
      family_entry *e = *at;
      if (e->program != program) {
        at = &e->next;
        continue;
      }
      *at = e->next;
      free(e->family);
      free(e->options);
      free(e);
    }
  pthread_mutex_unlock(&cache_lock);
  pthread_mutex_lock(&launch_lock);
  for (int i = 0; i < program->nkernels; i++) {
    kernel_entry *k = &program->kernels[i];
    if (k->kernel) {
      clReleaseKernel(k->kernel);
      axon_live_add(AXON_LIVE_KERNEL, -1);
    }
    if (k->own) {
      clReleaseProgram(k->own);
      axon_live_add(AXON_LIVE_PROGRAM, -1);
    }
    axon_launch_args_free(k->args);
  }
  free(program->kernels);
  pthread_mutex_unlock(&launch_lock);
  cl_program whole = atomic_load(&program->whole);
  if (whole) {
    clReleaseProgram(whole);
    axon_live_add(AXON_LIVE_PROGRAM, -1);
  }
  free(program->source);
  free(program->options);
  free(program);
}

axon_device *axon_program_device(axon_program_t program) {
  return program->device;
}

axon_status_t axon_program_from_source(int device, const char *source, const char *options,
                                       axon_program_t *program) {
  axon_device *d;
  AXON_TRY(axon_device_get(device, &d));
  if (!source) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "NULL kernel source");
  char *opts = device_options(d, options ? options : "");
  if (!opts) return axon_fail(CL_OUT_OF_HOST_MEMORY, "out of host memory");
  uint64_t key[2];
  program_key(d, source, opts, key);
  free(opts);
  pthread_mutex_lock(&cache_lock);
  for (struct axon_program *p = cache_of(d) ? d->programs->head : NULL; p; p = p->next)
    if (p->user_key[0] == key[0] && p->user_key[1] == key[1] && p->whole) {
      stats.memory_hits++;
      pthread_mutex_unlock(&cache_lock);
      *program = p;
      return AXON_SUCCESS;
    }
  pthread_mutex_unlock(&cache_lock);
  struct axon_program *p = program_new(d, NULL, options ? options : "", "user kernel source");
  if (!p) return axon_fail(CL_OUT_OF_HOST_MEMORY, "out of host memory");
  pthread_mutex_lock(&build_lock);
  axon_status_t st = build_whole(p, source);
  pthread_mutex_unlock(&build_lock);
  if (st != AXON_SUCCESS) {
    free(p->options);
    free(p);
    return st;
  }
  p->user_key[0] = key[0];
  p->user_key[1] = key[1];
  pthread_mutex_lock(&cache_lock);
  if (cache_of(d)) { /* else unremembered: a later request builds it again, still correct */
    p->next = d->programs->head;
    d->programs->head = p;
  }
  pthread_mutex_unlock(&cache_lock);
  *program = p;
  return AXON_SUCCESS;
}

static axon_program_t family_find(axon_device *d, uint64_t hash, const char *family,
                                  const char *options) {
  pthread_mutex_lock(&cache_lock);
  family_entry *e = cache_of(d) ? d->programs->families[hash % FAMILY_BUCKETS] : NULL;
  while (e && (e->hash != hash || strcmp(e->family, family) || strcmp(e->options, options)))
    e = e->next;
  if (e) stats.memory_hits++;
  pthread_mutex_unlock(&cache_lock);
  return e ? e->program : NULL;
}

/* The program remembered for (family, options): program itself, or the one a racing thread
 * remembered first (program is then freed). */
static axon_program_t family_remember(axon_device *d, uint64_t hash, const char *family,
                                      const char *options, struct axon_program *program) {
  family_entry *e = calloc(1, sizeof *e);
  char *f = strdup(family), *o = strdup(options);
  if (!e || !f || !o) {
    free(e);
    free(f);
    free(o);
    return program; /* unremembered: a later request makes another handle, still correct */
  }
  *e = (family_entry){hash, f, o, program, NULL};
  pthread_mutex_lock(&cache_lock);
  if (!cache_of(d)) {
    pthread_mutex_unlock(&cache_lock);
    free(e);
    free(f);
    free(o);
    return program;
  }
  family_entry **bucket = &d->programs->families[hash % FAMILY_BUCKETS];
  for (family_entry *x = *bucket; x; x = x->next)
    if (x->hash == hash && !strcmp(x->family, family) && !strcmp(x->options, options)) {
      pthread_mutex_unlock(&cache_lock);
      free(e);
      free(f);
      free(o);
      free(program->source);
      free(program->options);
      free(program);
      return x->program;
    }
  e->next = *bucket;
  *bucket = e;
  pthread_mutex_unlock(&cache_lock);
  return program;
}

axon_status_t axon_program_get(int device, const char *family, const char *options,
                               axon_program_t *program) {
  axon_device *d;
  AXON_TRY(axon_device_get(device, &d));
  if (!options) options = "";
  uint64_t hash = hash_name(family, options);
  if ((*program = family_find(d, hash, family, options))) return AXON_SUCCESS;
  char *source = family_source(family);
  if (!source)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "unknown kernel family \"%s\"%s", family,
                     getenv("AXON_KERNEL_DIR") ? " (not found in AXON_KERNEL_DIR)" : "");
  char what[96];
  snprintf(what, sizeof what, "kernel family \"%s\"", family);
  struct axon_program *p = program_new(d, source, options, what);
  if (!p) {
    free(source);
    return axon_fail(CL_OUT_OF_HOST_MEMORY, "out of host memory");
  }
  *program = family_remember(d, hash, family, options, p);
  return AXON_SUCCESS;
}

/* Sets how many kernels build alone before the whole family, once per program, unless the
 * user chose (AXON_PROGRAMS) or the family is built already. */
static void size_builds(axon_program_t program, int alone) {
  if (program->sizing_checked) return;
  pthread_mutex_lock(&build_lock);
  if (!program->sizing_checked) {
    program->sizing_checked = 1;
    if (program->source && !getenv("AXON_PROGRAMS") && !program->whole &&
        program->alone_left < alone)
      program->alone_left = alone;
  }
  pthread_mutex_unlock(&build_lock);
}

void axon_program_build_sparsely(axon_program_t program) {
  size_builds(program, INT_MAX);
}

void axon_program_build_first_alone(axon_program_t program, int n) {
  size_builds(program, n);
}

axon_status_t axon_program_build_all(axon_program_t program) {
  if (!program) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "NULL program");
  pthread_mutex_lock(&build_lock);
  axon_status_t st = program->source ? build_whole(program, program->source) : AXON_SUCCESS;
  pthread_mutex_unlock(&build_lock);
  return st;
}

static kernel_entry *kernel_find(axon_program_t program, uint64_t hash, const char *name) {
  for (int i = 0; i < program->nkernels; i++)
    if (program->kernels[i].hash == hash && !strcmp(program->kernels[i].name, name))
      return &program->kernels[i];
  return NULL;
}

/* Builds kernel `name` on its own (or the whole program) and creates it. build_lock held.
 * *kernel stays NULL with success when the family has no such kernel. */
static axon_status_t kernel_build(struct axon_program *p, const char *name, cl_kernel *kernel,
                                  cl_program *own) {
  cl_program from = p->whole;
  *kernel = NULL;
  *own = NULL;
  if (!from && p->alone_left > 0) {
    if (p->alone_left != INT_MAX) p->alone_left--;
    size_t n = strlen(p->options) + strlen(name) + 48;
    char *options = malloc(n);
    if (!options) return axon_fail(CL_OUT_OF_HOST_MEMORY, "out of host memory");
    snprintf(options, n, "%s -DAXON_ONLY -DAXON_WANT_%s=1", p->options, name);
    uint64_t key[2];
    program_key(p->device, p->source, options, key);
    char what[192];
    snprintf(what, sizeof what, "kernel \"%s\" of %s", name, p->what);
    axon_status_t st = build(p->device, p->source, options, what, key, own);
    free(options);
    AXON_TRY(st);
    if (!*own) return AXON_SUCCESS; /* recorded as absent */
    size_t count = 0;
    if (clGetProgramInfo(*own, CL_PROGRAM_NUM_KERNELS, sizeof count, &count, NULL) == CL_SUCCESS &&
        count == 0) {
      clReleaseProgram(*own);
      axon_live_add(AXON_LIVE_PROGRAM, -1);
      *own = NULL;
      if (axon_program_cache_dir()) disk_write(key, ENTRY_ABSENT, NULL, 0);
      return AXON_SUCCESS;
    }
    if (p->store_binaries) disk_store(key, *own);
    from = *own;
  } else if (!from) {
    AXON_TRY(build_whole(p, p->source));
    from = p->whole;
  }
  cl_int err;
  *kernel = clCreateKernel(from, name, &err);
  if (*kernel) axon_live_add(AXON_LIVE_KERNEL, 1);
  if (*kernel || err == CL_INVALID_KERNEL_NAME) return AXON_SUCCESS;
  if (*own) {
    clReleaseProgram(*own);
    axon_live_add(AXON_LIVE_PROGRAM, -1);
  }
  *own = NULL;
  return axon_fail(err, "kernel \"%s\": clCreateKernel failed: %s", name, axon_status_name(err));
}

int axon_program_lacks_kernel(axon_program_t program, const char *name) {
  uint64_t hash = hash_name(name, NULL);
  pthread_mutex_lock(&launch_lock);
  kernel_entry *e = kernel_find(program, hash, name);
  int lacks = e ? !e->kernel : 0;
  if (!e && !program->whole && program->source) {
    /* Building its first kernels alone: the whole family, due soon anyway, answers exactly,
     * where a build of the name alone would cost as much to learn that it is absent. */
    pthread_mutex_unlock(&launch_lock);
    pthread_mutex_lock(&build_lock);
    int whole_next = program->alone_left != INT_MAX;
    if (whole_next) program->alone_left = 0;
    pthread_mutex_unlock(&build_lock);
    pthread_mutex_lock(&launch_lock);
    if (whole_next) lacks = axon_program_kernel_entry(program, name, &e) == CL_INVALID_KERNEL_NAME;
  } else if (!e && program->whole) {
    /* Built whole: creating the kernel builds nothing. */
    lacks = axon_program_kernel_entry(program, name, &e) == CL_INVALID_KERNEL_NAME;
  }
  pthread_mutex_unlock(&launch_lock);
  return lacks;
}

static axon_status_t absent_kernel(const char *name) {
  return axon_fail(CL_INVALID_KERNEL_NAME, "kernel \"%s\" not found in program", name);
}

axon_status_t axon_program_kernel_entry(axon_program_t program, const char *name,
                                        kernel_entry **entry) {
  if (strlen(name) >= sizeof((kernel_entry *)0)->name)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "kernel name \"%s\" too long", name);
  uint64_t hash = hash_name(name, NULL);
  kernel_entry *e = kernel_find(program, hash, name);
  if (e) {
    *entry = e;
    return e->kernel ? AXON_SUCCESS : absent_kernel(name);
  }
  /* Build without the launch lock: launches of kernels already built go on meanwhile. The
   * lock order is build_lock, then launch_lock. */
  pthread_mutex_unlock(&launch_lock);
  pthread_mutex_lock(&build_lock);
  pthread_mutex_lock(&launch_lock);
  e = kernel_find(program, hash, name); /* built by another thread meanwhile? */
  pthread_mutex_unlock(&launch_lock);
  cl_kernel kernel = NULL;
  cl_program own = NULL;
  axon_status_t st = e ? AXON_SUCCESS : kernel_build(program, name, &kernel, &own);
  pthread_mutex_lock(&launch_lock);
  if (st == AXON_SUCCESS && !e) {
    kernel_entry *grown =
        realloc(program->kernels, (size_t)(program->nkernels + 1) * sizeof *grown);
    if (grown) {
      program->kernels = grown;
      e = &grown[program->nkernels++];
      memset(e, 0, sizeof *e);
      e->hash = hash;
      snprintf(e->name, sizeof e->name, "%s", name);
      e->kernel = kernel;
      e->own = own;
    } else {
      if (kernel) {
        clReleaseKernel(kernel);
        axon_live_add(AXON_LIVE_KERNEL, -1);
      }
      if (own) {
        clReleaseProgram(own);
        axon_live_add(AXON_LIVE_PROGRAM, -1);
      }
      st = axon_fail(CL_OUT_OF_HOST_MEMORY, "out of host memory");
    }
  } else if (e) {
    e = kernel_find(program, hash, name); /* the array may have moved */
  }
  pthread_mutex_unlock(&build_lock);
  if (st != AXON_SUCCESS) return st;
  *entry = e;
  return e->kernel ? AXON_SUCCESS : absent_kernel(name);
}

/* The kernel object of a user program for a query (launch lock held by the caller). */
static axon_status_t query_kernel(axon_program_t program, const char *name, cl_kernel *kernel) {
  if (!program || !name) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "NULL program or name");
  kernel_entry *e = NULL;
  AXON_TRY(axon_program_kernel_entry(program, name, &e));
  *kernel = e->kernel;
  return AXON_SUCCESS;
}

axon_status_t axon_kernel_arg_type(axon_program_t program, const char *name, int index, char *type,
                                   size_t size) {
  pthread_mutex_lock(&launch_lock);
  cl_kernel kernel = NULL;
  axon_status_t st = query_kernel(program, name, &kernel);
  if (st == AXON_SUCCESS) {
    cl_int err =
        clGetKernelArgInfo(kernel, (cl_uint)index, CL_KERNEL_ARG_TYPE_NAME, size, type, NULL);
    if (err == CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
      st = axon_fail(AXON_ERROR_UNSUPPORTED, "kernel \"%s\": the driver keeps no argument info",
                     name);
    else if (err != CL_SUCCESS)
      st = axon_fail(err, "kernel \"%s\": argument %d: %s", name, index, axon_status_name(err));
  }
  pthread_mutex_unlock(&launch_lock);
  return st;
}

axon_status_t axon_kernel_limits_get(axon_program_t program, const char *name,
                                     axon_kernel_limits *limits) {
  pthread_mutex_lock(&launch_lock);
  cl_kernel kernel = NULL;
  axon_status_t st = query_kernel(program, name, &kernel);
  if (st == AXON_SUCCESS) {
    cl_device_id id = program->device->id;
    cl_ulong local = 0, priv = 0;
    cl_int err =
        clGetKernelWorkGroupInfo(kernel, id, CL_KERNEL_WORK_GROUP_SIZE,
                                 sizeof limits->max_group_size, &limits->max_group_size, NULL);
    if (err == CL_SUCCESS)
      err = clGetKernelWorkGroupInfo(kernel, id, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                     sizeof limits->preferred_group_multiple,
                                     &limits->preferred_group_multiple, NULL);
    if (err == CL_SUCCESS)
      err = clGetKernelWorkGroupInfo(kernel, id, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local,
                                     NULL);
    if (err == CL_SUCCESS)
      err = clGetKernelWorkGroupInfo(kernel, id, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof priv, &priv,
                                     NULL);
    limits->local_mem_bytes = local;
    limits->private_mem_bytes = priv;
    if (err != CL_SUCCESS)
      st = axon_fail(err, "kernel \"%s\": work-group info: %s", name, axon_status_name(err));
  }
  pthread_mutex_unlock(&launch_lock);
  return st;
}

axon_status_t axon_kernel_required_group(axon_program_t program, const char *name,
                                         size_t group[3]) {
  pthread_mutex_lock(&launch_lock);
  cl_kernel kernel = NULL;
  axon_status_t st = query_kernel(program, name, &kernel);
  group[0] = group[1] = group[2] = 0;
  if (st == AXON_SUCCESS) {
    cl_int err =
        clGetKernelWorkGroupInfo(kernel, program->device->id, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                                 3 * sizeof *group, group, NULL);
    if (err != CL_SUCCESS)
      st = axon_fail(err, "kernel \"%s\": work-group info: %s", name, axon_status_name(err));
  }
  pthread_mutex_unlock(&launch_lock);
  return st;
}
