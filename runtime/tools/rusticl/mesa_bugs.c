/*
 * Standalone reproducer of four bugs of Mesa's rusticl (22.3.6, llvmpipe) that Axon works
 * around; no Axon code. Build and run (README.md):
 *
 *   cc -o /tmp/mesa_bugs mesa_bugs.c -lOpenCL
 *   RUSTICL_ENABLE=llvmpipe /tmp/mesa_bugs [platform name, any part, any case; default rusticl]
 *
 * 1. Size: a struct holding a two-dimensional array, struct { long a; long m[4][12]; } (392
 *    bytes, as sizeof says on the device and the host), is refused by clSetKernelArg with
 *    CL_INVALID_ARG_SIZE; rusticl expects 40 bytes, as if m were long[4].
 * 2. Crash: a kernel reading an array member of a struct argument at a computed index,
 *    o[0] = g.v[get_global_id(0)], kills the process with SIGSEGV when enqueued (llvmpipe
 *    compiles at launch: LLVMBuildBitCast under PipeContext::launch_grid). Reading a private
 *    copy (geom c = g; c.v[i]) runs. Run in a child process here, so the report survives.
 * 3. Loops: a work-item's loops together stop after 65535 iterations, silently: a loop of
 *    100000 counts 65535, and a second loop after it runs once.
 * 4. Compares: an int widened to long and compared with a long constant that fits in 32 bits,
 *    (long)i < 8L, is always false (and (long)i >= 8L always true); (long)i == 3L, a
 *    constant beyond 32 bits, a compare of (long)i - 8L with 0, or (ulong)i are right.
 *
 * Prints one line per check and exits 1 when a bug reproduces, 0 when none does (PoCL).
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static cl_device_id device;
static cl_context context;
static cl_command_queue queue;

static int pick_device(const char *platform_name) {
  cl_platform_id platforms[16];
  cl_uint n = 0;
  if (clGetPlatformIDs(16, platforms, &n) != CL_SUCCESS) return 0;
  for (cl_uint i = 0; i < n && i < 16; i++) {
    char name[256] = "";
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
    if (strcasestr(name, platform_name) &&
        clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &device, NULL) == CL_SUCCESS) {
      cl_int err;
      context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
      queue = clCreateCommandQueue(context, device, 0, &err);
      return queue != NULL;
    }
  }
  return 0;
}

static cl_kernel build(const char *source) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(context, 1, &source, NULL, &err);
  if (clBuildProgram(p, 1, &device, "", NULL, NULL) != CL_SUCCESS) return NULL;
  return clCreateKernel(p, "k", &err);
}

/* 1: the struct's size as the device sees it (sizeof in a kernel) against the size that
 * clSetKernelArg accepts. Returns 1 when they differ. */
static int check_size(void) {
  static const char *source =
      "typedef struct geom { long a; long m[4][12]; } geom;\n"
      "kernel void size(global long *o) { o[0] = sizeof(geom); }\n"
      "kernel void k(global long *o, geom g) { o[0] = g.a + g.m[3][11]; }\n";
  cl_int err;
  cl_program p = clCreateProgramWithSource(context, 1, &source, NULL, &err);
  if (clBuildProgram(p, 1, &device, "", NULL, NULL) != CL_SUCCESS) return printf("build failed\n");
  cl_kernel size = clCreateKernel(p, "size", &err), k = clCreateKernel(p, "k", &err);
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(cl_long), NULL, &err);
  clSetKernelArg(size, 0, sizeof out, &out);
  size_t one = 1;
  cl_long device_size = 0;
  clEnqueueNDRangeKernel(queue, size, 1, NULL, &one, NULL, 0, NULL, NULL);
  clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof device_size, &device_size, 0, NULL, NULL);
  static unsigned char bytes[4096];
  cl_int set = clSetKernelArg(k, 1, (size_t)device_size, bytes);
  printf("struct with a 2-D array: sizeof %ld on the device, clSetKernelArg of that size: %s",
         (long)device_size, set == CL_SUCCESS ? "ok\n" : "refused");
  if (set == CL_SUCCESS) return 0;
  size_t accepted = 0; /* the size the driver wants instead */
  for (size_t s = 1; s < sizeof bytes && !accepted; s++)
    if (clSetKernelArg(k, 1, s, bytes) == CL_SUCCESS) accepted = s;
  printf(" (error %d; it accepts %zu)\n", set, accepted);
  return 1;
}

/* Builds and runs `body` as kernel k(global int *o, geom g) in a child; 0 when it ran,
 * else the signal that ended the child (or -1 for an OpenCL error). */
static int run_in_child(const char *body) {
  char source[1024];
  snprintf(source, sizeof source,
           "typedef struct geom { int n; int v[4]; } geom;\n"
           "kernel void k(global int *o, geom g) { %s }\n",
           body);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) { /* the driver's threads are the child's own: nothing ran before the fork */
    if (!pick_device(getenv("MESA_BUGS_PLATFORM"))) _exit(100);
    cl_kernel k = build(source);
    cl_int err;
    cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 16, NULL, &err);
    cl_int g[5] = {4, 10, 11, 12, 13};
    size_t one = 1;
    if (!k || clSetKernelArg(k, 0, sizeof out, &out) || clSetKernelArg(k, 1, sizeof g, g) ||
        clEnqueueNDRangeKernel(queue, k, 1, NULL, &one, NULL, 0, NULL, NULL) || clFinish(queue))
      _exit(101);
    cl_int v = 0;
    clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL);
    _exit(v == 10 ? 0 : 102);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return WTERMSIG(status);
  return WEXITSTATUS(status) == 100 ? -2 : WEXITSTATUS(status) ? -1 : 0;
}

static int check_index(void) {
  int direct = run_in_child("o[0] = g.v[get_global_id(0)];");
  if (direct == -2) return -1; /* no such platform */
  int copied = run_in_child("geom c = g; o[0] = c.v[get_global_id(0)];");
  printf("array in a struct argument at a computed index: %s%s; through a private copy: %s\n",
         direct > 0   ? "killed by signal "
         : direct < 0 ? "wrong result or OpenCL error"
                      : "ok",
         direct > 0 ? strsignal(direct) : "", copied ? "FAILS TOO" : "ok");
  return direct != 0;
}

/* 3: two loops of a work-item, 100000 then 1000 iterations, with a bound the compiler cannot
 * see; returns 1 when either counts short. */
static int check_loops(void) {
  static const char *source =
      "kernel void k(global long *o, long n) {\n"
      "  long a = 0, b = 0;\n"
      "  for (long i = 0; i < n; i++) a++;\n"
      "  for (long i = 0; i < n / 100; i++) b++;\n"
      "  o[0] = a; o[1] = b;\n"
      "}\n";
  cl_kernel k = build(source);
  cl_int err;
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 2 * sizeof(cl_long), NULL, &err);
  cl_long n = 100000, counts[2] = {0, 0};
  size_t one = 1;
  if (!k || clSetKernelArg(k, 0, sizeof out, &out) || clSetKernelArg(k, 1, sizeof n, &n) ||
      clEnqueueNDRangeKernel(queue, k, 1, NULL, &one, NULL, 0, NULL, NULL) ||
      clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof counts, counts, 0, NULL, NULL))
    return printf("loops: OpenCL error\n");
  int bug = counts[0] != n || counts[1] != n / 100;
  printf("loops of %ld then %ld iterations in one work-item counted %ld and %ld: %s\n", (long)n,
         (long)(n / 100), (long)counts[0], (long)counts[1], bug ? "BUG" : "ok");
  return bug;
}

/* 4: o[i] = (long)i < 8L for i in 0..11, against the same with the compare done on (long)i - 8L;
 * returns 1 when they differ. */
static int check_widened_compare(void) {
  static const char *source =
      "kernel void k(global int *o) {\n"
      "  int i = get_global_id(0);\n"
      "  long w = (long)i;\n"
      "  o[i] = w < 8L;\n"
      "  o[16 + i] = w - 8L < 0;\n"
      "}\n";
  cl_kernel k = build(source);
  cl_int err, out[32] = {0};
  cl_mem buf =
      clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof out, out, &err);
  size_t n = 12;
  if (!k || clSetKernelArg(k, 0, sizeof buf, &buf) ||
      clEnqueueNDRangeKernel(queue, k, 1, NULL, &n, NULL, 0, NULL, NULL) ||
      clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL))
    return printf("widened compare: OpenCL error\n");
  int wrong = 0;
  for (int i = 0; i < 12; i++) wrong += out[i] != (i < 8) || out[16 + i] != (i < 8);
  printf("(long)i < 8L for i in 0..11: %d of 12 wrong: %s\n", wrong, wrong ? "BUG" : "ok");
  return wrong != 0;
}

int main(int argc, char **argv) {
  setenv("MESA_BUGS_PLATFORM", argc > 1 ? argv[1] : "rusticl", 1);
  /* The parent touches OpenCL only after the children have run. */
  int bugs = check_index();
  if (bugs < 0 || !pick_device(getenv("MESA_BUGS_PLATFORM"))) {
    fprintf(stderr, "no OpenCL platform named like \"%s\" (set RUSTICL_ENABLE=llvmpipe)\n",
            getenv("MESA_BUGS_PLATFORM"));
    return 2;
  }
  bugs += check_size();
  bugs += check_loops();
  bugs += check_widened_compare();
  return bugs ? 1 : 0;
}
