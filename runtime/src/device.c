/* Device discovery across every OpenCL platform, and per-device state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "axon/sources.h"
#include "internal.h"
#include "live_objects.h"
#include "quirks.h"

static axon_device devices[AXON_MAX_DEVICES];
static int device_total;
static axon_status_t discovery_status = AXON_SUCCESS;
static char discovery_message[1024];
static pthread_once_t discovery_once = PTHREAD_ONCE_INIT;

static void read_string(cl_device_id id, cl_device_info what, char *dst, size_t size) {
  dst[0] = '\0';
  if (clGetDeviceInfo(id, what, size, dst, NULL) != CL_SUCCESS) dst[0] = '\0';
  dst[size - 1] = '\0';
}

static void fill_info(axon_device *d) {
  axon_device_info *info = &d->info;
  cl_device_id id = d->id;
  read_string(id, CL_DEVICE_NAME, info->name, sizeof info->name);
  read_string(id, CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
  read_string(id, CL_DRIVER_VERSION, info->driver_version, sizeof info->driver_version);
  read_string(id, CL_DEVICE_OPENCL_C_VERSION, info->opencl_c_version,
              sizeof info->opencl_c_version);
  read_string(id, CL_DEVICE_EXTENSIONS, info->extensions, sizeof info->extensions);
  clGetPlatformInfo(d->platform, CL_PLATFORM_NAME, sizeof info->platform_name, info->platform_name,
                    NULL);
  clGetPlatformInfo(d->platform, CL_PLATFORM_VERSION, sizeof info->platform_version,
                    info->platform_version, NULL);
  cl_ulong u64 = 0;
  cl_uint u32 = 0;
  size_t sz = 0;
  cl_device_type type = 0;
  cl_device_exec_capabilities caps = 0;
  clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof u64, &u64, NULL);
  info->global_mem_bytes = u64;
  clGetDeviceInfo(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof u64, &u64, NULL);
  info->max_alloc_bytes = u64;
  clGetDeviceInfo(id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof u64, &u64, NULL);
  info->local_mem_bytes = u64;
  clGetDeviceInfo(id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof u32, &u32, NULL);
  info->compute_units = u32;
  clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof sz, &sz, NULL);
  info->max_work_group_size = (uint32_t)sz;
  clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  info->is_cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
  clGetDeviceInfo(id, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL);
  info->native_kernels = (caps & CL_EXEC_NATIVE_KERNEL) != 0;
  cl_device_fp_config fp = 0;
  clGetDeviceInfo(id, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL);
  info->exact_div_sqrt = (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
  info->has_denormals = (fp & CL_FP_DENORM) != 0;
  info->has_fp64 = strstr(info->extensions, "cl_khr_fp64") != NULL;
  info->has_fp16 = strstr(info->extensions, "cl_khr_fp16") != NULL;
}

typedef struct candidate {
  cl_platform_id platform;
  cl_device_id id;
  int platform_index, device_index;
  cl_device_type type;
  int taken;
  char platform_words[256]; /* the platform's name and version ("... PoCL 3.1", "rusticl") */
} candidate;

/* Does one AXON_DEVICES entry select this candidate? Besides the keywords and P:D pairs, an
 * entry selects every device of the platforms whose name or version contains it, ignoring case
 * (pocl, rusticl, nvidia): platform indices change as ICDs come and go, names do not. */
static int selects(const char *entry, const candidate *c) {
  int p, d;
  if (sscanf(entry, "%d:%d", &p, &d) == 2) return p == c->platform_index && d == c->device_index;
  if (!strcmp(entry, "cpu")) return (c->type & CL_DEVICE_TYPE_CPU) != 0;
  if (!strcmp(entry, "gpu")) return (c->type & CL_DEVICE_TYPE_GPU) != 0;
  if (!strcmp(entry, "accelerator")) return (c->type & CL_DEVICE_TYPE_ACCELERATOR) != 0;
  if (!strcmp(entry, "all")) return 1;
  return strcasestr(c->platform_words, entry) != NULL;
}

static void read_platform_words(candidate *c) {
  char name[128] = "", version[128] = "";
  clGetPlatformInfo(c->platform, CL_PLATFORM_NAME, sizeof name, name, NULL);
  clGetPlatformInfo(c->platform, CL_PLATFORM_VERSION, sizeof version, version, NULL);
  name[sizeof name - 1] = version[sizeof version - 1] = '\0';
  snprintf(c->platform_words, sizeof c->platform_words, "%s %s", name, version);
}

static void take(candidate *c) {
  if (c->taken || device_total >= AXON_MAX_DEVICES) return;
  c->taken = 1;
  axon_device *d = &devices[device_total];
  d->index = device_total++;
  d->platform = c->platform;
  d->id = c->id;
}

/* PoCL keeps the machine code of each kernel in its own disk cache; unless the user placed it,
 * it goes inside Axon's cache folder, so that one folder holds every compiled kernel (the
 * warm-up reports its size; removing it makes a cold start). Read by PoCL when the ICD loader
 * first loads it, below. */
static void place_driver_cache(void) {
  const char *axon_dir = axon_program_cache_dir();
  if (!axon_dir || getenv("POCL_CACHE_DIR")) return;
  char dir[1100];
  snprintf(dir, sizeof dir, "%s/pocl", axon_dir);
  mkdir(dir, 0700); /* private, as Axon's folder is (cache_dir.c) */
  axon_driver_cache_check(axon_dir, dir); /* PoCL aborts on a damaged entry: remove those */
  setenv("POCL_CACHE_DIR", dir, 0);
}

static volatile int forked_child;

static void mark_forked_child(void) {
  forked_child = 1;
}

int axon_forked_child(void) {
  return forked_child;
}

axon_status_t axon_forked_child_error(void) {
  return axon_fail(AXON_ERROR_FORKED,
                   "axon cannot be used in a process forked after axon was initialised in its "
                   "parent (the OpenCL driver's threads do not survive fork). To use axon with "
                   "multiprocessing, use the 'spawn' (or 'forkserver') start method; DataLoader "
                   "workers that do not touch axon may fork");
}

static void discover(void) {
  cl_platform_id platforms[16];
  cl_uint nplat = 0;
  /* From here on the driver runs threads of its own: a forked child must not use it. */
  pthread_atfork(NULL, NULL, mark_forked_child);
  place_driver_cache();
  if (clGetPlatformIDs(16, platforms, &nplat) != CL_SUCCESS || nplat == 0) {
    discovery_status = AXON_ERROR_NO_DEVICE;
    snprintf(discovery_message, sizeof discovery_message,
             "no OpenCL platform found (is an ICD such as pocl-opencl-icd installed?)");
    return;
  }
  candidate cands[64];
  int ncand = 0;
  for (cl_uint p = 0; p < nplat && p < 16; p++) {
    cl_device_id ids[16];
    cl_uint ndev = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 16, ids, &ndev) != CL_SUCCESS) continue;
    for (cl_uint i = 0; i < ndev && ncand < 64; i++) {
      candidate *c = &cands[ncand++];
      c->platform = platforms[p];
      c->id = ids[i];
      c->platform_index = (int)p;
      c->device_index = (int)i;
      c->taken = 0;
      clGetDeviceInfo(ids[i], CL_DEVICE_TYPE, sizeof c->type, &c->type, NULL);
      read_platform_words(c);
    }
  }
  const char *spec = getenv("AXON_DEVICES");
  if (spec && *spec) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *e = strtok_r(buf, ", ", &save); e; e = strtok_r(NULL, ", ", &save))
      for (int i = 0; i < ncand; i++)
        if (selects(e, &cands[i])) take(&cands[i]);
  } else {
    for (int i = 0; i < ncand; i++)
      if (!(cands[i].type & CL_DEVICE_TYPE_CPU)) take(&cands[i]);
    for (int i = 0; i < ncand; i++) take(&cands[i]);
  }
  if (device_total == 0) {
    discovery_status = AXON_ERROR_NO_DEVICE;
    snprintf(discovery_message, sizeof discovery_message,
             "no OpenCL device matches AXON_DEVICES=\"%s\" (%d device(s) present)",
             spec ? spec : "", ncand);
    return;
  }
  /* One context per platform holding all its selected devices. */
  for (int i = 0; i < device_total; i++) {
    axon_device *d = &devices[i];
    for (int j = 0; j < i; j++)
      if (devices[j].platform == d->platform) d->context = devices[j].context;
    if (d->context) {
      clRetainContext(d->context);
      continue;
    }
    cl_device_id ids[AXON_MAX_DEVICES];
    cl_uint n = 0;
    for (int j = i; j < device_total; j++)
      if (devices[j].platform == d->platform) ids[n++] = devices[j].id;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)d->platform, 0};
    cl_int err;
    d->context = clCreateContext(props, n, ids, NULL, NULL, &err);
    if (!d->context) {
      discovery_status = err;
      snprintf(discovery_message, sizeof discovery_message, "clCreateContext failed: %s",
               axon_status_name(err));
      device_total = 0;
      return;
    }
  }
  for (int i = 0; i < device_total; i++) {
    axon_device *d = &devices[i];
    fill_info(d);
    d->quirks = axon_device_quirks(&d->info);
    cl_int err = CL_OUT_OF_HOST_MEMORY;
    d->default_stream = calloc(1, sizeof *d->default_stream);
    if (d->default_stream) { /* ids 1 .. AXON_MAX_DEVICES; stream.c numbers the others */
      d->default_stream->device = d;
      d->default_stream->id = (uint64_t)i + 1;
      err = axon_device_queue(d, &d->default_stream->queue);
    }
    if (err != CL_SUCCESS) {
      discovery_status = err;
      snprintf(discovery_message, sizeof discovery_message,
               "creating the default stream failed: %s", axon_status_name(err));
      device_total = 0;
      return;
    }
  }
}

static axon_status_t ensure_discovered(void) {
  pthread_once(&discovery_once, discover);
  if (discovery_status != AXON_SUCCESS) return axon_fail(discovery_status, "%s", discovery_message);
  return AXON_SUCCESS;
}

cl_int axon_device_queue(axon_device *d, cl_command_queue *queue) {
  cl_int err;
  /* Profiling is always on: event timing and the profiler read it. */
  *queue = clCreateCommandQueue(d->context, d->id, CL_QUEUE_PROFILING_ENABLE, &err);
  if (*queue) axon_live_add(AXON_LIVE_QUEUE, 1);
  return *queue ? CL_SUCCESS : err;
}

axon_status_t axon_device_get(int index, axon_device **device) {
  AXON_REFUSE_IN_FORKED_CHILD();
  if (index >= 0 && index < device_total && devices[index].context) {
    *device = &devices[index];
    return AXON_SUCCESS;
  }
  AXON_TRY(ensure_discovered());
  if (index < 0 || index >= device_total)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT,
                     "device index %d is out of range (%d axon device(s) available)", index,
                     device_total);
  *device = &devices[index];
  return AXON_SUCCESS;
}

axon_status_t axon_device_count(int *count) {
  axon_status_t st = ensure_discovered();
  *count = st == AXON_SUCCESS ? device_total : 0;
  return st;
}

axon_status_t axon_device_get_info(int index, axon_device_info *info) {
  axon_device *d;
  AXON_TRY(axon_device_get(index, &d));
  *info = d->info;
  return AXON_SUCCESS;
}

axon_status_t axon_kernel_device_limits_get(int index, axon_kernel_device_limits *limits) {
  static const cl_device_info preferred[7] = {
      CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR,  CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT,
      CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT,   CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG,
      CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE,
      CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF};
  static const cl_device_info native[7] = {
      CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR,  CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT,
      CL_DEVICE_NATIVE_VECTOR_WIDTH_INT,   CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG,
      CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE,
      CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF};
  axon_device *d;
  AXON_TRY(axon_device_get(index, &d));
  memset(limits, 0, sizeof *limits);
  for (int k = 0; k < 7; k++) {
    cl_uint width = 0;
    if (clGetDeviceInfo(d->id, preferred[k], sizeof width, &width, NULL) == CL_SUCCESS)
      limits->preferred_vector_width[k] = width;
    width = 0;
    if (clGetDeviceInfo(d->id, native[k], sizeof width, &width, NULL) == CL_SUCCESS)
      limits->native_vector_width[k] = width;
  }
  clGetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof limits->max_work_item_sizes,
                  limits->max_work_item_sizes, NULL);
  return AXON_SUCCESS;
}

int axon_device_supports_dtype(int index, axon_dtype dtype) {
  axon_device *d;
  if ((unsigned)dtype >= AXON_DTYPE_COUNT || axon_device_get(index, &d) != AXON_SUCCESS) return 0;
  return (dtype != AXON_F64 && dtype != AXON_C128) || d->info.has_fp64;
}
