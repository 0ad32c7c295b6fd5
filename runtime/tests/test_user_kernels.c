/* Tests of what user kernels need from the runtime (torch_axon/kernels/): a program built from
 * source with argument info, each parameter's type after macros, kernel and device limits, the
 * required work-group size, __local arguments, a NULL buffer after a real one (the argument
 * cache must not keep the old value), and a kernel file registered at run time that a family
 * names, launched through the elementwise launcher. */
#include <string.h>

#include "axon/sources.h"
#include "harness.h"
#include "internal.h" /* axon_dtype_macro */

#define DEV 0

static const char *source =
    "__kernel __attribute__((reqd_work_group_size(4, 1, 1)))\n"
    "void group_sums(__global const T *x, ulong x_off, __global T *out, ulong out_off,\n"
    "                __local T *scratch, float4 unused) {\n"
    "  __global const T *in = (__global const T *)((__global const uchar *)x + x_off);\n"
    "  __global T *sums = (__global T *)((__global uchar *)out + out_off);\n"
    "  size_t lane = get_local_id(0);\n"
    "  scratch[lane] = in[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (lane == 0)\n"
    "    sums[get_group_id(0)] = (in ? scratch[0] + scratch[1] + scratch[2] + scratch[3] : -1);\n"
    "}\n"
    "__kernel void mark(__global float *x, ulong x_off, __global float *out, ulong out_off) {\n"
    "  __global float *o = (__global float *)((__global uchar *)out + out_off);\n"
    "  o[get_global_id(0)] = x ? 1.0f : -1.0f;\n"
    "}\n";

static void test_program_queries(axon_stream_t s) {
  axon_program_t p;
  if (!CHECK_OK(axon_program_from_source(DEV, source, "-DT=float -cl-kernel-arg-info", &p))) return;
  char type[64] = {0};
  if (CHECK_OK(axon_kernel_arg_type(p, "group_sums", 0, type, sizeof type)))
    CHECK(strstr(type, "float") && strchr(type, '*'), "parameter 0's type after -DT=float: %s",
          type);
  if (CHECK_OK(axon_kernel_arg_type(p, "group_sums", 5, type, sizeof type)))
    CHECK(!strcmp(type, "float4"), "parameter 5's type: %s", type);
  axon_kernel_limits limits;
  if (CHECK_OK(axon_kernel_limits_get(p, "group_sums", &limits)))
    CHECK(limits.max_group_size >= 4 && limits.preferred_group_multiple >= 1,
          "limits: max group %zu, multiple %zu", limits.max_group_size,
          limits.preferred_group_multiple);
  size_t group[3];
  if (CHECK_OK(axon_kernel_required_group(p, "group_sums", group)))
    CHECK(group[0] == 4 && group[1] == 1 && group[2] == 1, "required group %zu x %zu x %zu",
          group[0], group[1], group[2]);
  axon_kernel_device_limits device;
  if (CHECK_OK(axon_kernel_device_limits_get(DEV, &device)))
    CHECK(device.preferred_vector_width[4] >= 1 && device.max_work_item_sizes[0] >= 4,
          "device: float vector width %u, work-item sizes %zu", device.preferred_vector_width[4],
          device.max_work_item_sizes[0]);

  /* Eight floats in two groups of four, with __local scratch; then a NULL input, then the same
   * input again (the cached argument must be set again). */
  float host[8] = {1, 2, 3, 4, 10, 20, 30, 40}, sums[2] = {0}, zero4[4] = {0};
  void *x = dev_upload(DEV, host, sizeof host), *out = dev_upload(DEV, sums, sizeof sums);
  size_t global = 8, local = 4;
  for (int round = 0; round < 3; round++) {
    int null_input = round == 1;
    axon_arg args[4] = {{AXON_ARG_BUFFER, null_input ? NULL : x, 0},
                        {AXON_ARG_BUFFER, out, 0},
                        {AXON_ARG_LOCAL, NULL, 4 * sizeof(float)},
                        {AXON_ARG_BYTES, zero4, sizeof zero4}};
    if (null_input) { /* a NULL buffer reads nothing: run the kernel that only tests it */
      float marks[8];
      void *m = dev_upload(DEV, marks, sizeof marks);
      axon_arg margs[2] = {{AXON_ARG_BUFFER, NULL, 0}, {AXON_ARG_BUFFER, m, 0}};
      CHECK_OK(axon_launch(p, "mark", s, 1, &global, NULL, margs, 2));
      axon_copy_d2h(marks, m, sizeof marks, s, 1);
      CHECK(marks[0] == -1.0f && marks[7] == -1.0f, "a NULL buffer arrives as a NULL pointer");
      margs[0].ptr = x;
      CHECK_OK(axon_launch(p, "mark", s, 1, &global, NULL, margs, 2));
      axon_copy_d2h(marks, m, sizeof marks, s, 1);
      CHECK(marks[0] == 1.0f, "the real buffer after it is set again (not the cached NULL)");
      axon_free(m);
      continue;
    }
    CHECK_OK(axon_launch(p, "group_sums", s, 1, &global, &local, args, 4));
    axon_copy_d2h(sums, out, sizeof sums, s, 1);
    CHECK(sums[0] == 10 && sums[1] == 100, "round %d: group sums through __local: %g %g", round,
          sums[0], sums[1]);
  }
  axon_free(x);
  axon_free(out);
}

static void test_registered_family(axon_stream_t s) {
  const char *text =
      "inline CT twice_plus(CT a, CT b) { return 2 * a + b; }\n"
      "EW_BOTH(ew_twice_plus, ewr_twice_plus, 2, BINARY_BODY(STORE, twice_plus(a, b)))\n";
  CHECK_OK(axon_register_kernel_file("test_user_twice_plus", text));
  CHECK_OK(axon_register_kernel_file("test_user_twice_plus", text)); /* the same text: fine */
  CHECK_STATUS(axon_register_kernel_file("test_user_twice_plus", "other"),
               AXON_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(axon_register_kernel_file("a+b", text), AXON_ERROR_INVALID_ARGUMENT);
  enum { N = 1000 };
  float a[N], b[N], got[N];
  for (int i = 0; i < N; i++) a[i] = rng_float(-1, 1), b[i] = rng_float(-1, 1);
  void *da = dev_upload(DEV, a, sizeof a), *db = dev_upload(DEV, b, sizeof b);
  void *dout = dev_upload(DEV, got, sizeof got);
  axon_ew_desc d;
  memset(&d, 0, sizeof d);
  d.ndim = 1;
  d.ninputs = 2;
  d.sizes[0] = N;
  for (int k = 0; k < 3; k++) d.strides[k][0] = 1;
  d.data[0] = dout;
  d.data[1] = da;
  d.data[2] = db;
  CHECK_OK(axon_elementwise_kernel(s, "ew_common+test_user_twice_plus", "ew_twice_plus", AXON_F32,
                                   &d, 0, 0));
  axon_copy_d2h(got, dout, sizeof got, s, 1);
  int same = 1;
  for (int i = 0; i < N; i++) same &= fabsf(got[i] - (2 * a[i] + b[i])) < 1e-6f;
  CHECK(same, "a registered file's kernel through the elementwise launcher");
  CHECK_STATUS(axon_elementwise_kernel(s, "ew_common+test_user_twice_plus", "twice_plus", AXON_F32,
                                       &d, 0, 0),
               AXON_ERROR_INVALID_ARGUMENT);
  axon_free(da);
  axon_free(db);
  axon_free(dout);
}

int main(void) {
  axon_stream_t s;
  REQUIRE_DEVICE_STREAM(DEV, s);
  test_program_queries(s);
  test_registered_family(s);
  REQUIRE_OK(axon_stream_sync(s));
  return harness_summary();
}
