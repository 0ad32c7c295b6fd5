/*
 * The program cache: kernel programs are built lazily and kept twice.
 *
 * In memory, per device: key -> built program, with its kernel objects.
 * On disk: one file per key under the cache directory. The key is a 128-bit hash of the
 * source, the build options, the device name, the driver and platform versions and the cache
 * format version, so any change to one of them misses instead of loading a stale binary.
 * A file is: magic "AXONPRG\0", format version, key, payload size, payload checksum, payload
 * (the program binary). It is written to a temporary file and renamed into place, so readers
 * never see half a file; a file that fails any check is deleted and the program rebuilt.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "profiler_internal.h"

#define CACHE_FORMAT_VERSION 1u
#define CACHE_MAGIC "AXONPRG"

/* The value a kernel argument was last set to. PoCL allocates and copies on every
 * clSetKernelArg, so launches skip the ones whose value has not changed (on a hot loop of
 * small ops, most of them: geometry, scalars, often the buffers too). */
typedef struct arg_value {
  size_t size;
  unsigned char *bytes;
} arg_value;

#define MAX_CACHED_ARGS 32

typedef struct kernel_entry {
  uint64_t hash; /* of the name: compared before the name itself */
  char name[64];
  cl_kernel kernel;
  arg_value *args; /* MAX_CACHED_ARGS of them, allocated with the entry */
} kernel_entry;

struct axon_program {
  uint64_t key[2];
  cl_program program;
  axon_device *device;
  kernel_entry *kernels;
  int nkernels;
  struct axon_program *next;
};

/* A kernel family already resolved on a device: (family, options) -> program. Launches look
 * here first, so the hot path neither reassembles a family's source nor hashes its tens of
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
static pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;
static axon_cache_stats stats;

pthread_mutex_t *axon_launch_lock(void) {
  return &launch_lock;
}

axon_program_cache *axon_program_cache_create(void) {
  return calloc(1, sizeof(axon_program_cache));
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

static char cache_dir[1024];
static pthread_once_t cache_dir_once = PTHREAD_ONCE_INIT;

static void resolve_cache_dir(void) {
  const char *env = getenv("AXON_CACHE_DIR");
  if (env && (!strcmp(env, "off") || !strcmp(env, "0") || !*env)) return;
  if (env) {
    snprintf(cache_dir, sizeof cache_dir, "%s", env);
  } else if (getenv("XDG_CACHE_HOME") && *getenv("XDG_CACHE_HOME")) {
    snprintf(cache_dir, sizeof cache_dir, "%s/axon", getenv("XDG_CACHE_HOME"));
  } else if (getenv("HOME")) {
    snprintf(cache_dir, sizeof cache_dir, "%s/.cache/axon", getenv("HOME"));
  }
  /* Create each level; an existing folder is fine, a failure just disables the disk cache. */
  for (char *p = cache_dir + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(cache_dir, 0755);
      *p = '/';
    }
  if (mkdir(cache_dir, 0755) != 0 && errno != EEXIST) cache_dir[0] = '\0';
}

static const char *disk_dir(void) {
  pthread_once(&cache_dir_once, resolve_cache_dir);
  return cache_dir[0] ? cache_dir : NULL;
}

const char *axon_program_cache_dir(void) {
  return disk_dir();
}

typedef struct file_header {
  char magic[8];
  uint32_t version, reserved;
  uint64_t key[2];
  uint64_t size, checksum;
} file_header;

static void entry_path(char *dst, size_t n, const uint64_t key[2]) {
  snprintf(dst, n, "%s/%016llx%016llx.bin", disk_dir(), (unsigned long long)key[0],
           (unsigned long long)key[1]);
}

/* The cached binary for key, or NULL (missing or damaged; damaged files are removed). */
static unsigned char *disk_load(const uint64_t key[2], size_t *size) {
  if (!disk_dir()) return NULL;
  char path[1200];
  entry_path(path, sizeof path, key);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  file_header h;
  unsigned char *data = NULL;
  int ok = fread(&h, sizeof h, 1, f) == 1 && !memcmp(h.magic, CACHE_MAGIC, 8) &&
           h.version == CACHE_FORMAT_VERSION && h.key[0] == key[0] && h.key[1] == key[1] &&
           h.size > 0 && h.size < (1ull << 31);
  if (ok) {
    data = malloc(h.size);
    ok = data && fread(data, 1, h.size, f) == h.size &&
         fnv1a(0xcbf29ce484222325ull, data, h.size) == h.checksum;
  }
  fclose(f);
  if (!ok) {
    free(data);
    remove(path);
    pthread_mutex_lock(&cache_lock);
    stats.damaged_entries++;
    pthread_mutex_unlock(&cache_lock);
    return NULL;
  }
  *size = h.size;
  return data;
}

static void disk_store(const uint64_t key[2], cl_program program) {
  if (!disk_dir()) return;
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
      size == 0)
    return;
  unsigned char *data = malloc(size);
  if (!data) return;
  unsigned char *ptrs[1] = {data};
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof ptrs, ptrs, NULL) == CL_SUCCESS) {
    file_header h = {.version = CACHE_FORMAT_VERSION,
                     .key = {key[0], key[1]},
                     .size = size,
                     .checksum = fnv1a(0xcbf29ce484222325ull, data, size)};
    memcpy(h.magic, CACHE_MAGIC, 8);
    char path[1200], tmp[1300];
    entry_path(path, sizeof path, key);
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    if (f) {
      int ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(data, 1, size, f) == size;
      ok = (fclose(f) == 0) && ok;
      if (!ok || rename(tmp, path) != 0) remove(tmp);
    }
  }
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

static axon_status_t build(axon_device *d, const char *source, const char *options,
                           const char *what, const uint64_t key[2], cl_program *out) {
  cl_int err;
  size_t bin_size = 0;
  unsigned char *bin = disk_load(key, &bin_size);
  if (bin) {
    const unsigned char *bins[1] = {bin};
    cl_int bin_status;
    cl_program p =
        clCreateProgramWithBinary(d->context, 1, &d->id, &bin_size, bins, &bin_status, &err);
    free(bin);
    if (p && clBuildProgram(p, 1, &d->id, options, NULL, NULL) == CL_SUCCESS) {
      pthread_mutex_lock(&cache_lock);
      stats.disk_hits++;
      pthread_mutex_unlock(&cache_lock);
      *out = p;
      return AXON_SUCCESS;
    }
    if (p) clReleaseProgram(p); /* unusable binary: build from source below */
  }
  cl_program p = clCreateProgramWithSource(d->context, 1, &source, NULL, &err);
  if (!p) return axon_fail(err, "clCreateProgramWithSource failed: %s", axon_status_name(err));
  err = clBuildProgram(p, 1, &d->id, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    axon_status_t st = build_log_failure(p, d, err, what);
    clReleaseProgram(p);
    return st;
  }
  pthread_mutex_lock(&cache_lock);
  stats.builds++;
  pthread_mutex_unlock(&cache_lock);
  disk_store(key, p);
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

/* One embedded (or AXON_KERNEL_DIR) .cl file by name, or NULL. Caller frees. */
static char *kernel_file(const char *name) {
  const char *dir = getenv("AXON_KERNEL_DIR");
  if (dir && *dir) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.cl", dir, name);
    return read_file(path);
  }
  for (const axon_embedded_source *e = axon_embedded_sources; e->name; e++)
    if (!strcmp(e->name, name)) return strdup(e->text);
  return NULL;
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

static axon_status_t get_program_built_with(axon_device *d, const char *source, const char *options,
                                            const char *what, axon_program_t *program) {
  uint64_t key[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  char version[16];
  snprintf(version, sizeof version, "%u", CACHE_FORMAT_VERSION);
  hash_str(key, source);
  hash_str(key, options);
  hash_str(key, d->info.name);
  hash_str(key, d->info.driver_version);
  hash_str(key, d->info.platform_version);
  hash_str(key, version);
  pthread_mutex_lock(&cache_lock);
  for (struct axon_program *p = d->programs->head; p; p = p->next)
    if (p->key[0] == key[0] && p->key[1] == key[1]) {
      stats.memory_hits++;
      pthread_mutex_unlock(&cache_lock);
      *program = p;
      return AXON_SUCCESS;
    }
  pthread_mutex_unlock(&cache_lock);
  /* Built outside the lock (slow); a racing thread may build the same program, harmlessly. */
  cl_program built = NULL;
  AXON_TRY(build(d, source, options, what, key, &built));
  struct axon_program *p = calloc(1, sizeof *p);
  if (!p) {
    clReleaseProgram(built);
    return axon_fail(CL_OUT_OF_HOST_MEMORY, "out of host memory");
  }
  p->key[0] = key[0];
  p->key[1] = key[1];
  p->program = built;
  p->device = d;
  pthread_mutex_lock(&cache_lock);
  p->next = d->programs->head;
  d->programs->head = p;
  pthread_mutex_unlock(&cache_lock);
  *program = p;
  return AXON_SUCCESS;
}

/* PyTorch divides and takes square roots correctly rounded (its CUDA build too); OpenCL's
 * default allows 2.5 and 3 ulp in float, and NVIDIA's compiler takes that licence. Where the
 * device offers IEEE division and sqrt, every program is built with them. */
#define EXACT_DIV_SQRT " -cl-fp32-correctly-rounded-divide-sqrt"

static axon_status_t get_program(axon_device *d, const char *source, const char *user_options,
                                 const char *what, axon_program_t *program) {
  if (!user_options) user_options = "";
  size_t options_len = strlen(user_options) + sizeof EXACT_DIV_SQRT;
  char *options = malloc(options_len);
  if (!options) return axon_fail(CL_OUT_OF_HOST_MEMORY, "out of host memory");
  snprintf(options, options_len, "%s%s", user_options,
           d->info.exact_div_sqrt ? EXACT_DIV_SQRT : "");
  axon_status_t st = get_program_built_with(d, source, options, what, program);
  free(options);
  return st;
}

static axon_program_t family_find(axon_device *d, uint64_t hash, const char *family,
                                  const char *options) {
  pthread_mutex_lock(&cache_lock);
  family_entry *e = d->programs->families[hash % FAMILY_BUCKETS];
  while (e && (e->hash != hash || strcmp(e->family, family) || strcmp(e->options, options)))
    e = e->next;
  if (e) stats.memory_hits++;
  pthread_mutex_unlock(&cache_lock);
  return e ? e->program : NULL;
}

/* Best effort: without the entry, later requests take the slow path and still succeed. */
static void family_remember(axon_device *d, uint64_t hash, const char *family, const char *options,
                            axon_program_t program) {
  family_entry *e = calloc(1, sizeof *e);
  char *f = strdup(family), *o = strdup(options);
  if (!e || !f || !o) {
    free(e);
    free(f);
    free(o);
    return;
  }
  *e = (family_entry){hash, f, o, program, NULL};
  pthread_mutex_lock(&cache_lock);
  e->next = d->programs->families[hash % FAMILY_BUCKETS];
  d->programs->families[hash % FAMILY_BUCKETS] = e;
  pthread_mutex_unlock(&cache_lock);
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
  char what[128];
  snprintf(what, sizeof what, "kernel family \"%s\"", family);
  axon_status_t st = get_program(d, source, options, what, program);
  free(source);
  if (st == AXON_SUCCESS) family_remember(d, hash, family, options, *program);
  return st;
}

axon_status_t axon_program_from_source(int device, const char *source, const char *options,
                                       axon_program_t *program) {
  axon_device *d;
  AXON_TRY(axon_device_get(device, &d));
  if (!source) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "NULL kernel source");
  return get_program(d, source, options, "user kernel source", program);
}

/* An entry without a kernel: later lookups of the name fail without asking the driver. */
static void remember_missing(axon_program_t program, const char *name, uint64_t hash) {
  kernel_entry *grown = realloc(program->kernels, (size_t)(program->nkernels + 1) * sizeof *grown);
  if (!grown) return;
  program->kernels = grown;
  kernel_entry *e = &grown[program->nkernels++];
  memset(e, 0, sizeof *e);
  e->hash = hash;
  snprintf(e->name, sizeof e->name, "%s", name);
}

static kernel_entry *find_kernel(axon_program_t program, const char *name, axon_status_t *status) {
  /* Called with the launch lock held, which also guards the kernel list. */
  uint64_t hash = hash_name(name, NULL);
  for (int i = 0; i < program->nkernels; i++)
    if (program->kernels[i].hash == hash && !strcmp(program->kernels[i].name, name)) {
      if (program->kernels[i].kernel) return &program->kernels[i];
      /* Known to be absent (launchers probe for optional forms): no driver call. */
      *status = axon_fail(CL_INVALID_KERNEL_NAME, "kernel \"%s\" not found in program", name);
      return NULL;
    }
  cl_int err;
  cl_kernel k = clCreateKernel(program->program, name, &err);
  if (!k) {
    if (err == CL_INVALID_KERNEL_NAME) remember_missing(program, name, hash);
    *status = axon_fail(err, "kernel \"%s\" not found in program: %s", name, axon_status_name(err));
    return NULL;
  }
  arg_value *args = calloc(MAX_CACHED_ARGS, sizeof *args);
  kernel_entry *grown =
      args ? realloc(program->kernels, (size_t)(program->nkernels + 1) * sizeof *grown) : NULL;
  if (!grown) {
    free(args);
    clReleaseKernel(k);
    *status = axon_fail(CL_OUT_OF_HOST_MEMORY, "out of host memory");
    return NULL;
  }
  program->kernels = grown;
  kernel_entry *e = &grown[program->nkernels++];
  e->hash = hash;
  snprintf(e->name, sizeof e->name, "%s", name);
  e->kernel = k;
  e->args = args;
  return e;
}

cl_kernel axon_program_kernel(axon_program_t program, const char *name, axon_status_t *status) {
  kernel_entry *e = find_kernel(program, name, status);
  return e ? e->kernel : NULL;
}

/* clSetKernelArg unless the argument already holds this value. */
static cl_int set_arg(kernel_entry *e, cl_uint index, size_t size, const void *value) {
  arg_value *cached = index < MAX_CACHED_ARGS && value ? &e->args[index] : NULL;
  if (cached && cached->size == size && !memcmp(cached->bytes, value, size)) return CL_SUCCESS;
  cl_int err = clSetKernelArg(e->kernel, index, size, value);
  if (!cached || err != CL_SUCCESS) return err;
  if (cached->size != size) {
    unsigned char *bytes = realloc(cached->bytes, size);
    if (!bytes) {
      cached->size = 0; /* forget the value: the next launch sets it again */
      return CL_SUCCESS;
    }
    cached->bytes = bytes;
    cached->size = size;
  }
  memcpy(cached->bytes, value, size);
  return CL_SUCCESS;
}

axon_status_t axon_launch(axon_program_t program, const char *name, axon_stream_t stream, int dims,
                          const size_t *global, const size_t *local, const axon_arg *args,
                          int nargs) {
  if (!program || !name || dims < 1 || dims > 3)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "axon_launch: bad arguments");
  AXON_TRY(axon_stream_resolve(stream, program->device->index, &stream));
  for (int i = 0; i < dims; i++)
    if (global[i] == 0) return AXON_SUCCESS; /* nothing to do */
  pthread_mutex_lock(&launch_lock);
  axon_status_t st = AXON_SUCCESS;
  kernel_entry *e = find_kernel(program, name, &st);
  cl_uint index = 0;
  for (int i = 0; e && i < nargs && st == AXON_SUCCESS; i++) {
    cl_int err;
    if (args[i].kind == AXON_ARG_BUFFER) {
      cl_mem mem;
      size_t off = 0;
      st = axon_resolve_mem(args[i].ptr, &mem, &off);
      if (st != AXON_SUCCESS) break;
      cl_ulong off64 = off;
      err = set_arg(e, index++, sizeof mem, &mem);
      if (err == CL_SUCCESS) err = set_arg(e, index++, sizeof off64, &off64);
    } else {
      err = set_arg(e, index++, args[i].size, args[i].ptr);
    }
    if (err != CL_SUCCESS)
      st = axon_fail(err, "kernel \"%s\": argument %d: %s", name, i, axon_status_name(err));
  }
  if (e && st == AXON_SUCCESS) {
    cl_event event;
    cl_int err = clEnqueueNDRangeKernel(stream->queue, e->kernel, (cl_uint)dims, NULL, global,
                                        local, 0, NULL, axon_profile_event(&event));
    if (err != CL_SUCCESS)
      st = axon_fail(err, "launching kernel \"%s\" failed: %s", name, axon_status_name(err));
    else
      axon_profile_commit(event, AXON_PROFILE_KERNEL, name, stream, 0);
  }
  pthread_mutex_unlock(&launch_lock);
  return st;
}
