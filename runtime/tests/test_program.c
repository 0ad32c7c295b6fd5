/* Tests of program building, the in-memory and on-disk program caches, and axon_launch. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "internal.h" /* axon_dtype_macro: the build options of a kernel family for a dtype */
#include "program_internal.h" /* axon_program_kernel_entry: a kernel built without launching */

#define DEV 0

static const char *user_source =
    "__kernel void k(__global float* p, ulong off, float v) {\n"
    "  ((__global float*)((__global char*)p + off))[get_global_id(0)] = v;\n"
    "}\n"
    "__kernel void axpy(__global float* x, ulong xoff, __global float* y, ulong yoff,\n"
    "                   float a, int n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  __global float* xs = (__global float*)((__global char*)x + xoff);\n"
    "  __global float* ys = (__global float*)((__global char*)y + yoff);\n"
    "  if (i < (size_t)n) ys[i] = a * xs[i] + ys[i];\n"
    "}\n";

static const char *cache_source =
    "__kernel void twice(__global int* p, ulong off) {\n"
    "  __global int* q = (__global int*)((__global char*)p + off);\n"
    "  q[get_global_id(0)] *= 2;\n"
    "}\n";

/* Child modes, run in a fresh process (exec of this program): the memory cache is empty there,
 * so the program comes from the disk cache or a build. Exit 0 when the stats are as expected. */
static int child(const char *mode) {
  axon_program_t prog;
  axon_status_t st = axon_program_from_source(DEV, cache_source, "", &prog);
  if (st != AXON_SUCCESS) {
    printf("#   child: build failed: %s\n", axon_last_error());
    return 2;
  }
  /* The program must work, whichever way it was obtained. */
  int32_t h[64], back[64];
  for (int i = 0; i < 64; i++) h[i] = i - 20;
  void *d = dev_upload(DEV, h, sizeof h);
  size_t global = 64;
  axon_arg arg = {AXON_ARG_BUFFER, d, 0};
  if (!d || axon_launch(prog, "twice", NULL, 1, &global, NULL, &arg, 1) != AXON_SUCCESS ||
      !dev_download(back, d, sizeof back))
    return 3;
  for (int i = 0; i < 64; i++)
    if (back[i] != 2 * h[i]) return 4;
  axon_free(d);
  axon_cache_stats s;
  axon_program_cache_stats(&s);
  printf("#   child %s: memory_hits %llu disk_hits %llu builds %llu damaged %llu\n", mode,
         (unsigned long long)s.memory_hits, (unsigned long long)s.disk_hits,
         (unsigned long long)s.builds, (unsigned long long)s.damaged_entries);
  fflush(stdout);
  const char *dir = axon_program_cache_dir(), *want = getenv("AXON_CACHE_DIR");
  if (!strcmp(mode, "off")) return dir == NULL && s.builds == 1 && s.disk_hits == 0 ? 0 : 1;
  if (!dir || !want || strcmp(dir, want)) {
    printf("#   child: cache folder %s, AXON_CACHE_DIR %s\n", dir ? dir : "NULL",
           want ? want : "NULL");
    return 5;
  }
  if (!strcmp(mode, "damaged")) return s.damaged_entries >= 1 && s.builds >= 1 ? 0 : 1;
  if (!strcmp(mode, "disk-hit"))
    return s.disk_hits >= 1 && s.builds == 0 && s.damaged_entries == 0 ? 0 : 1;
  return 1;
}

/* Runs this program in child mode with AXON_CACHE_DIR=cache_dir; returns its exit status. */
static int run_child(const char *mode, const char *cache_dir) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    setenv("AXON_CACHE_DIR", cache_dir, 1);
    execl("/proc/self/exe", "test_program", "--child", mode, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The .bin files in a folder: count, and the path of one. */
static int count_bins(const char *dir, char *one, size_t n) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int count = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len > 4 && !strcmp(e->d_name + len - 4, ".bin")) {
      if (one) snprintf(one, n, "%s/%s", dir, e->d_name);
      count++;
    }
  }
  closedir(d);
  return count;
}

/* The folder and what is in it (the driver's own cache is a tree inside Axon's). */
static void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  char path[2048];
  for (struct dirent *e; (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (remove(path) != 0) remove_tree(path);
  }
  closedir(d);
  rmdir(dir);
}

static int is_complex(int dt) {
  return dt == AXON_C64 || dt == AXON_C128;
}

static void test_families(void) {
  /* Every family builds whole for each dtype it serves: the real ones for the real dtypes, the
   * complex ones for complex64 and complex128. */
  static const struct {
    const char *name;
    int complex;
  } families[] = {{"ew_common+pointwise_math+elementwise+pointwise_ops", 0},
                  {"reduce", 0},
                  {"gemm", 0},
                  {"softmax", 0},
                  {"loss", 0},
                  {"random", 0},
                  /* the families whose kernels include a launch descriptor (kernels/NAME_args.h):
                   * a field misspelt in a kernel fails here */
                  {"conv", 0},
                  {"pool", 0},
                  {"resample", 0},
                  {"embedding", 0},
                  {"grid_sample", 0},
                  {"margin_loss", 0},
                  {"ctc", 0},
                  {"distance", 0},
                  {"ew_common+complex", 1},
                  {"fft", 1}};
  for (size_t f = 0; f < sizeof families / sizeof *families; f++) {
    for (int dt = 0; dt < AXON_DTYPE_COUNT; dt++) {
      if (is_complex(dt) != families[f].complex) continue;
      if (!axon_device_supports_dtype(DEV, (axon_dtype)dt)) {
        printf("#   skipping %s for %s (unsupported on the device)\n", families[f].name,
               axon_dtype_name((axon_dtype)dt));
        continue;
      }
      axon_program_t prog = NULL;
      axon_status_t st =
          axon_program_get(DEV, families[f].name, axon_dtype_macro((axon_dtype)dt), &prog);
      if (st == AXON_SUCCESS) st = axon_program_build_all(prog);
      CHECK(st == AXON_SUCCESS && prog != NULL, "family \"%s\" builds for %s%s%s", families[f].name,
            axon_dtype_name((axon_dtype)dt), st ? ": " : "", st ? axon_last_error() : "");
    }
  }
  /* A second request is a memory-cache hit returning the same program. */
  axon_cache_stats before, after;
  axon_program_cache_stats(&before);
  axon_program_t p1 = NULL, p2 = NULL;
  CHECK_OK(axon_program_get(DEV, "reduce", axon_dtype_macro(AXON_F32), &p1));
  CHECK_OK(axon_program_get(DEV, "reduce", axon_dtype_macro(AXON_F32), &p2));
  axon_program_cache_stats(&after);
  CHECK(p1 == p2 && p1 != NULL, "the same family and options give the same program");
  CHECK(after.memory_hits == before.memory_hits + 2 && after.builds == before.builds,
        "repeated requests are memory-cache hits without builds");
  axon_program_t other = NULL;
  CHECK_OK(axon_program_get(DEV, "reduce", axon_dtype_macro(AXON_I32), &other));
  CHECK(other != p1, "different options give a different program");
  /* Without a dtype macro the family sources refuse to build (#error). */
  CHECK_OK(axon_program_get(DEV, "elementwise", "", &other));
  CHECK_STATUS(axon_program_build_all(other), AXON_ERROR_BUILD_FAILED);
  CHECK(strstr(axon_last_error(), "DT_F32") != NULL, "the log carries the #error text");
  CHECK_STATUS(axon_program_get(DEV, "no_such_family", axon_dtype_macro(AXON_F32), &other),
               AXON_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(axon_last_error(), "no_such_family") != NULL, "unknown family message: %s",
        axon_last_error());
  CHECK_STATUS(axon_program_get(DEV + 100, "reduce", axon_dtype_macro(AXON_F32), &other),
               AXON_ERROR_INVALID_ARGUMENT);
}

static void test_build_failure(void) {
  axon_cache_stats before, after;
  axon_program_cache_stats(&before);
  const char *bad =
      "__kernel void broken(__global float* p, ulong off) {\n"
      "  p[0] = undeclared_identifier_xyz + 1.0f;\n"
      "}\n";
  axon_program_t prog = NULL;
  CHECK_STATUS(axon_program_from_source(DEV, bad, "", &prog), AXON_ERROR_BUILD_FAILED);
  const char *msg = axon_last_error();
  CHECK(strstr(msg, "undeclared_identifier_xyz") != NULL,
        "the message holds the compiler's log naming the bad identifier");
  CHECK(strstr(msg, "user kernel source") != NULL, "the message says what was built");
  printf("#   build failure message: %.300s\n", msg);
  axon_program_cache_stats(&after);
  CHECK(after.builds == before.builds, "a failed build is not counted as a build");
  CHECK_STATUS(axon_program_from_source(DEV, bad, "", &prog), AXON_ERROR_BUILD_FAILED);
  CHECK_STATUS(axon_program_from_source(DEV, NULL, "", &prog), AXON_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(axon_program_from_source(DEV, user_source, "-DX=1 -invalid-option-zz", &prog),
               AXON_ERROR_BUILD_FAILED);
}

static void test_launch(void) {
  axon_program_t prog = NULL;
  if (!CHECK_OK(axon_program_from_source(DEV, user_source, "", &prog))) return;
  const int n = 1000;
  float *h = malloc(n * sizeof(float)), *back = malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) h[i] = (float)i;
  void *d = dev_upload(DEV, h, n * sizeof(float));
  CHECK(d != NULL, "device buffer for the launch");
  if (!d) return;

  /* k over elements [100, 100 + 300) through an interior address: the offset is passed. */
  float v = 2.5f;
  size_t global = 300;
  axon_arg args[2] = {{AXON_ARG_BUFFER, (float *)d + 100, 0}, {AXON_ARG_BYTES, &v, sizeof v}};
  CHECK_OK(axon_launch(prog, "k", NULL, 1, &global, NULL, args, 2));
  CHECK(dev_download(back, d, n * sizeof(float)), "read back");
  int ok = 1;
  for (int i = 0; i < n; i++) ok &= back[i] == (i >= 100 && i < 400 ? 2.5f : (float)i);
  CHECK(ok, "kernel k wrote 2.5 to exactly elements 100..399 (BUFFER = cl_mem + byte offset)");

  /* axpy with two buffers, an explicit local size and a created stream. */
  axon_stream_t s;
  CHECK_OK(axon_stream_create(DEV, &s));
  float *hy = malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) hy[i] = 1.0f - (float)i;
  void *y = dev_upload(DEV, hy, n * sizeof(float));
  float a = -3.0f;
  int count = n - 1;
  size_t g2 = 1024, l2 = 64;
  axon_arg args2[4] = {{AXON_ARG_BUFFER, d, 0},
                       {AXON_ARG_BUFFER, (float *)y + 1, 0},
                       {AXON_ARG_BYTES, &a, sizeof a},
                       {AXON_ARG_BYTES, &count, sizeof count}};
  CHECK_OK(axon_launch(prog, "axpy", s, 1, &g2, &l2, args2, 4));
  CHECK_OK(axon_stream_sync(s));
  CHECK(dev_download(back, y, n * sizeof(float)), "read back y");
  ok = back[0] == hy[0];
  double worst = 0;
  for (int i = 0; i < count; i++) {
    double x = i >= 100 && i < 400 ? 2.5 : (double)i;
    double want = a * x + hy[i + 1];
    double e = fabs(back[i + 1] - want);
    if (e > worst) worst = e;
  }
  CHECK(ok && worst == 0, "axpy on a created stream with an explicit local size (err %g)", worst);

  /* Error cases. */
  CHECK_STATUS(axon_launch(prog, "no_such_kernel", NULL, 1, &global, NULL, args, 2),
               CL_INVALID_KERNEL_NAME);
  CHECK(strstr(axon_last_error(), "no_such_kernel") != NULL, "missing kernel message: %s",
        axon_last_error());
  int on_stack = 0;
  axon_arg bad_args[2] = {{AXON_ARG_BUFFER, &on_stack, 0}, {AXON_ARG_BYTES, &v, sizeof v}};
  CHECK_STATUS(axon_launch(prog, "k", NULL, 1, &global, NULL, bad_args, 2),
               AXON_ERROR_INVALID_POINTER);
  CHECK_STATUS(axon_launch(prog, "k", NULL, 0, &global, NULL, args, 2),
               AXON_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(axon_launch(NULL, "k", NULL, 1, &global, NULL, args, 2),
               AXON_ERROR_INVALID_ARGUMENT);
  size_t zero = 0;
  CHECK_OK(axon_launch(prog, "k", NULL, 1, &zero, NULL, args, 2)); /* empty range: no-op */
  CHECK_OK(axon_stream_destroy(s));
  axon_free(d);
  axon_free(y);
  free(h);
  free(hy);
  free(back);
}

/*
 * The on-disk cache. This process and its children (exec'd from this program) share a new,
 * empty AXON_CACHE_DIR; a child has an empty memory cache, so it must go to the disk.
 */
static void test_disk_cache(const char *dir) {
  const char *got = axon_program_cache_dir();
  CHECK(got && !strcmp(got, dir), "the cache folder is AXON_CACHE_DIR (%s)", got ? got : "NULL");
  CHECK(count_bins(dir, NULL, 0) == 0, "the cache folder starts empty");
  axon_cache_stats s0, s1;
  axon_program_cache_stats(&s0);
  axon_program_t prog = NULL;
  CHECK_OK(axon_program_from_source(DEV, cache_source, "", &prog));
  axon_program_cache_stats(&s1);
  CHECK(s1.builds == s0.builds + 1 && s1.disk_hits == s0.disk_hits, "a new source is built");
  char path[2048] = "";
  int n = count_bins(dir, path, sizeof path);
  CHECK(n == 1, "the build wrote one .bin file into the cache folder (%d)", n);
  struct stat st;
  CHECK(n == 1 && stat(path, &st) == 0 && st.st_size > 64, "the cache file is non-trivial (%s)",
        path);
  if (n != 1) return;

  /* A fresh process loads the intact file from disk instead of building. */
  int rc = run_child("disk-hit", dir);
  CHECK(rc == 0, "a new process loads the program from the disk cache (child exit %d)", rc);

  /* Corrupt the middle of the file: the next process must notice, rebuild and rewrite it. */
  FILE *f = fopen(path, "r+b");
  CHECK(f != NULL, "open the cache file for corruption");
  if (!f) return;
  long middle = (long)(st.st_size / 2);
  unsigned char old[16], junk[16];
  fseek(f, middle, SEEK_SET);
  size_t got_old = fread(old, 1, sizeof old, f);
  for (size_t i = 0; i < sizeof junk; i++) /* make sure every byte really changes */
    junk[i] = (unsigned char)(i < got_old ? old[i] ^ 0x5A : 0x5A);
  fseek(f, middle, SEEK_SET);
  CHECK(fwrite(junk, 1, sizeof junk, f) == sizeof junk,
        "overwrote 16 bytes in the middle of the cache file");
  fclose(f);
  rc = run_child("damaged", dir);
  CHECK(rc == 0, "a new process detects the damaged entry and rebuilds (child exit %d)", rc);
  rc = run_child("disk-hit", dir);
  CHECK(rc == 0, "the rebuilt entry was written back and loads again (child exit %d)", rc);

  /* A truncated file is damaged too. */
  CHECK(truncate(path, 20) == 0, "truncate the cache file");
  rc = run_child("damaged", dir);
  CHECK(rc == 0, "a truncated entry is detected and rebuilt (child exit %d)", rc);
  CHECK(count_bins(dir, NULL, 0) == 1, "still one cache file, no temporaries left behind");

  /* AXON_CACHE_DIR=off: no folder, every new process builds. */
  rc = run_child("off", "off");
  CHECK(rc == 0, "AXON_CACHE_DIR=off disables the disk cache (child exit %d)", rc);
}

/* The kernel `name` of program as a launch would get it: built on first request. */
static axon_status_t entry_of(axon_program_t program, const char *name, kernel_entry **e) {
  pthread_mutex_lock(axon_launch_lock());
  axon_status_t st = axon_program_kernel_entry(program, name, e);
  pthread_mutex_unlock(axon_launch_lock());
  return st;
}

static uint64_t builds_so_far(void) {
  axon_cache_stats s;
  axon_program_cache_stats(&s);
  return s.builds;
}

/* Requesting a family compiles nothing; its kernels are built when first needed, one program
 * per kernel (AXON_PROGRAMS=kernel, GPU drivers' default) or the family whole (=family, PoCL's
 * default), each once; a name the family lacks is found absent once. */
static void test_lazy_builds(void) {
  static const char *modes[] = {"kernel", "family"};
  for (int m = 0; m < 2; m++) {
    setenv("AXON_PROGRAMS", modes[m], 1);
    char options[96];
    /* an option of its own: a family handle no other test made */
    snprintf(options, sizeof options, "%s -DAXON_TEST_%s", axon_dtype_macro(AXON_F32), modes[m]);
    axon_program_t prog = NULL;
    uint64_t b0 = builds_so_far();
    CHECK_OK(axon_program_get(DEV, "random", options, &prog));
    unsetenv("AXON_PROGRAMS");
    CHECK(builds_so_far() == b0, "%s: requesting a family builds nothing", modes[m]);
    kernel_entry *e = NULL;
    CHECK_OK(entry_of(prog, "random_fill", &e));
    CHECK(builds_so_far() == b0 + 1, "%s: the first kernel costs one build", modes[m]);
    if (m == 0) {
      size_t kernels = 0;
      CHECK(e && e->own, "kernel mode: the kernel has a program of its own");
      if (e && e->own)
        clGetProgramInfo(e->own, CL_PROGRAM_NUM_KERNELS, sizeof kernels, &kernels, NULL);
      CHECK(kernels == 1, "kernel mode: that program holds 1 kernel (%zu)", kernels);
    } else {
      CHECK(e && !e->own, "family mode: the kernel comes from the family's program");
    }
    CHECK_OK(entry_of(prog, "random_fill", &e));
    CHECK(builds_so_far() == b0 + 1, "%s: a second request builds nothing", modes[m]);
    CHECK_OK(entry_of(prog, "random_int_fill", &e));
    CHECK(builds_so_far() == b0 + 1 + (m == 0), "%s: another kernel costs %s", modes[m],
          m == 0 ? "its own build" : "nothing more");
    uint64_t b1 = builds_so_far();
    CHECK_STATUS(entry_of(prog, "no_such_kernel", &e), CL_INVALID_KERNEL_NAME);
    CHECK_STATUS(entry_of(prog, "no_such_kernel", &e), CL_INVALID_KERNEL_NAME);
    CHECK(builds_so_far() <= b1 + (m == 0), "%s: an absent kernel is looked for once", modes[m]);
  }
}

/* A family whose first kernels build alone (axon_program_build_first_alone) builds the whole
 * family at the request after them, or when asked whether it lacks a kernel; kernels built
 * either way work. Where every kernel builds alone already (GPU drivers), nothing changes. */
static void test_first_alone(void) {
  setenv("AXON_PROGRAMS", "family", 1);
  axon_program_t prog = NULL;
  char options[96];
  snprintf(options, sizeof options, "%s -DAXON_TEST_first_alone", axon_dtype_macro(AXON_F32));
  CHECK_OK(axon_program_get(DEV, "random", options, &prog));
  unsetenv("AXON_PROGRAMS");
  axon_program_build_first_alone(prog, 1);
  uint64_t b0 = builds_so_far();
  kernel_entry *e = NULL;
  CHECK_OK(entry_of(prog, "random_fill", &e));
  CHECK(builds_so_far() == b0 + 1 && e && e->own, "the first kernel builds alone");
  CHECK_OK(entry_of(prog, "random_int_fill", &e));
  CHECK(builds_so_far() == b0 + 2 && e && !e->own, "the next one builds the whole family");
  CHECK(axon_program_lacks_kernel(prog, "no_such_kernel"), "the whole family lacks a name");
  CHECK(!axon_program_lacks_kernel(prog, "random_fill"), "and has the first kernel");
  CHECK(builds_so_far() == b0 + 2, "asking builds nothing more");

  /* Asked before its first kernel: built whole to tell. */
  setenv("AXON_PROGRAMS", "family", 1);
  snprintf(options, sizeof options, "%s -DAXON_TEST_first_alone_ask", axon_dtype_macro(AXON_F32));
  CHECK_OK(axon_program_get(DEV, "random", options, &prog));
  unsetenv("AXON_PROGRAMS");
  axon_program_build_first_alone(prog, 2);
  b0 = builds_so_far();
  CHECK(axon_program_lacks_kernel(prog, "no_such_kernel"), "a name the family lacks");
  CHECK(builds_so_far() == b0 + 1, "cost one whole build");
  CHECK_OK(entry_of(prog, "random_fill", &e));
  CHECK(builds_so_far() == b0 + 1 && e && !e->own, "after which kernels come from it");
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--child")) return child(argv[2]);

  char dir[] = "/tmp/axon-test-cache-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  /* Before any runtime call: the cache folder is resolved once per process. */
  setenv("AXON_CACHE_DIR", dir, 1);
  unsetenv("AXON_KERNEL_DIR");
  int count = 0;
  REQUIRE_OK(axon_device_count(&count));
  test_disk_cache(dir);
  test_build_failure();
  test_launch();
  test_lazy_builds();
  test_first_alone();
  test_families();
  remove_tree(dir);
  CHECK(rmdir(dir) != 0 && errno == ENOENT, "the temporary cache folder is removed");
  return harness_summary();
}
