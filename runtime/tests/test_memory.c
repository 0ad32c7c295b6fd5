/* Tests of device addresses, the caching allocator, pinned host memory and copies. */
#include <stdint.h>

#include "gate.h"
#include "harness.h"

#define DEV 0

static size_t round512(size_t n) {
  return (n + 511) / 512 * 512;
}

static void test_malloc_free(void) {
  void *p = (void *)1;
  CHECK_OK(axon_malloc(DEV, 0, NULL, &p));
  CHECK(p == NULL, "malloc of 0 bytes gives NULL");
  CHECK_OK(axon_free(NULL));

  size_t sizes[] = {1, 511, 512, 513, 4096, 100000, (1u << 20), (1u << 20) + 1, 5u << 20};
  void *ptrs[sizeof sizes / sizeof *sizes];
  int all_ok = 1, all_distinct = 1, all_aligned = 1;
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    ptrs[i] = NULL;
    if (axon_malloc(DEV, sizes[i], NULL, &ptrs[i]) != AXON_SUCCESS || !ptrs[i]) all_ok = 0;
    if ((uintptr_t)ptrs[i] % 512) all_aligned = 0;
    for (size_t j = 0; j < i; j++)
      if (ptrs[j] == ptrs[i]) all_distinct = 0;
  }
  CHECK(all_ok, "malloc of sizes 1 .. 5 MiB succeeds");
  CHECK(all_distinct, "live allocations have distinct addresses");
  CHECK(all_aligned, "allocations are 512-byte aligned");
  int dev = -1;
  CHECK(axon_is_device_ptr(ptrs[3], &dev) && dev == DEV, "axon_is_device_ptr on an allocation");
  int x = 0;
  CHECK(!axon_is_device_ptr(&x, NULL), "axon_is_device_ptr on a stack address is 0");
  /* Every allocation is usable over its whole length. */
  int usable = 1;
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    unsigned char *h = malloc(sizes[i]), *back = malloc(sizes[i]);
    for (size_t k = 0; k < sizes[i]; k++) h[k] = (unsigned char)(k * 7 + i);
    if (axon_copy_h2d(ptrs[i], h, sizes[i], NULL, 1) != AXON_SUCCESS ||
        axon_copy_d2h(back, ptrs[i], sizes[i], NULL, 1) != AXON_SUCCESS ||
        memcmp(h, back, sizes[i]))
      usable = 0;
    free(h);
    free(back);
  }
  CHECK(usable, "each allocation holds its full size (write then read back)");
  int freed = 1;
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    if (axon_free(ptrs[i]) != AXON_SUCCESS) freed = 0;
  CHECK(freed, "free of every allocation succeeds");
}

static void test_resolve(void) {
  void *pad = NULL, *p = NULL;
  /* The padding allocation puts p inside the segment, at a non-zero base offset. */
  if (!CHECK_OK(axon_malloc(DEV, 1000, NULL, &pad))) return;
  if (!CHECK_OK(axon_malloc(DEV, 10000, NULL, &p))) return;
  axon_buffer_ref base, inner, last, padref;
  CHECK_OK(axon_resolve(pad, &padref));
  CHECK_OK(axon_resolve(p, &base));
  CHECK(base.mem == padref.mem && base.offset == padref.offset + 1024,
        "a second small allocation shares the segment at a later offset (%zu)", base.offset);
  CHECK_OK(axon_resolve((char *)p + 1234, &inner));
  CHECK_OK(axon_resolve((char *)p + 9999, &last));
  CHECK(base.mem != NULL && base.device == DEV, "resolve of the base gives a cl_mem on device 0");
  CHECK(inner.mem == base.mem && inner.offset == base.offset + 1234 && inner.device == DEV,
        "interior pointer resolves to the same cl_mem at base offset + 1234 (%zu vs %zu)",
        inner.offset, base.offset);
  CHECK(last.mem == base.mem && last.offset == base.offset + 9999,
        "last byte resolves to base offset + 9999");
  int stack_var = 0;
  axon_buffer_ref r;
  CHECK_STATUS(axon_resolve(&stack_var, &r), AXON_ERROR_INVALID_POINTER);
  CHECK_STATUS(axon_free(&stack_var), AXON_ERROR_INVALID_POINTER);
  CHECK(strstr(axon_last_error(), "axon_free") != NULL, "free of a foreign pointer explains: %s",
        axon_last_error());
  CHECK_STATUS(axon_free((char *)p + 512), AXON_ERROR_INVALID_POINTER);
  CHECK_STATUS(axon_free((char *)p + 1), AXON_ERROR_INVALID_POINTER);
  CHECK(axon_is_device_ptr(p, NULL), "the allocation survives the rejected frees");
  CHECK_OK(axon_free(p));
  CHECK_STATUS(axon_free(p), AXON_ERROR_INVALID_POINTER);
  CHECK(strstr(axon_last_error(), "double free") != NULL, "double free message: %s",
        axon_last_error());
  CHECK_OK(axon_free(pad));
  CHECK_STATUS(axon_free(pad), AXON_ERROR_INVALID_POINTER);
}

static void test_out_of_memory(void) {
  axon_memory_stats before, after;
  axon_memory_stats_get(DEV, &before);
  void *p = (void *)1;
  CHECK_STATUS(axon_malloc(DEV, (size_t)1e15, NULL, &p), AXON_ERROR_OUT_OF_MEMORY);
  CHECK(p == NULL, "failed malloc leaves *ptr NULL");
  CHECK(strstr(axon_last_error(), "Tried to allocate") != NULL, "OOM message: %s",
        axon_last_error());
  axon_memory_stats_get(DEV, &after);
  CHECK(after.oom_count == before.oom_count + 1, "oom_count counts the failure");
  CHECK(after.allocated_bytes == before.allocated_bytes, "a failed malloc allocates nothing");
  void *q = NULL;
  CHECK_OK(axon_malloc(DEV, 4096, NULL, &q));
  CHECK(q != NULL, "a normal allocation after the OOM succeeds");
  axon_free(q);
  CHECK_STATUS(axon_malloc(DEV, SIZE_MAX, NULL, &p), AXON_ERROR_OUT_OF_MEMORY);
}

static void test_caching_and_stats(void) {
  axon_memory_stats s0, s1, s2, s3;
  CHECK_OK(axon_empty_cache(DEV));
  CHECK_OK(axon_memory_stats_get(DEV, &s0));
  CHECK(s0.allocated_bytes == 0, "nothing allocated at the start (%llu)",
        (unsigned long long)s0.allocated_bytes);
  CHECK(s0.reserved_bytes == 0, "empty cache with nothing allocated reserves 0 bytes (%llu)",
        (unsigned long long)s0.reserved_bytes);
  CHECK(s0.limit_bytes > 0, "limit_bytes is set");

  size_t size = 3000;
  void *a = NULL, *b = NULL;
  CHECK_OK(axon_malloc(DEV, size, NULL, &a));
  CHECK_OK(axon_memory_stats_get(DEV, &s1));
  CHECK(s1.allocated_bytes == s0.allocated_bytes + round512(size),
        "allocated_bytes grows by the rounded size (%llu)", (unsigned long long)s1.allocated_bytes);
  CHECK(s1.alloc_count == s0.alloc_count + 1, "alloc_count + 1");
  CHECK(s1.reserved_bytes >= s1.allocated_bytes && s1.reserved_bytes > 0,
        "reserved_bytes covers the allocation");
  CHECK(s1.segment_count >= 1, "a segment exists");
  CHECK(s1.allocated_peak >= s1.allocated_bytes, "allocated_peak >= allocated_bytes");
  CHECK_OK(axon_free(a));
  CHECK_OK(axon_memory_stats_get(DEV, &s2));
  CHECK(s2.allocated_bytes == s0.allocated_bytes, "allocated_bytes drops back after free");
  CHECK(s2.free_count == s1.free_count + 1, "free_count + 1");
  CHECK(s2.allocated_peak == s1.allocated_peak, "peak stays after free");
  CHECK(s2.reserved_bytes == s1.reserved_bytes, "free keeps the segment cached");
  CHECK_OK(axon_malloc(DEV, size, NULL, &b));
  CHECK(b == a, "free then malloc of the same size reuses the address");
  CHECK_OK(axon_memory_stats_get(DEV, &s3));
  CHECK(s3.reserved_bytes == s2.reserved_bytes, "reuse creates no new segment");

  /* A second allocation raises the peak; reset_peak lowers it to the current figure. */
  void *c = NULL;
  CHECK_OK(axon_malloc(DEV, 2u << 20, NULL, &c));
  CHECK_OK(axon_memory_stats_get(DEV, &s3));
  CHECK(s3.allocated_peak >= round512(size) + (2u << 20), "peak includes both allocations");
  CHECK_OK(axon_free(c));
  CHECK_OK(axon_memory_reset_peak(DEV));
  CHECK_OK(axon_memory_stats_get(DEV, &s3));
  CHECK(s3.allocated_peak == s3.allocated_bytes && s3.allocated_bytes == round512(size),
        "reset_peak sets the peak to the current allocation (%llu)",
        (unsigned long long)s3.allocated_peak);
  CHECK_OK(axon_free(b));

  uint64_t free_bytes = 0, total_bytes = 0;
  CHECK_OK(axon_memory_info(DEV, &free_bytes, &total_bytes));
  CHECK(total_bytes > 0 && free_bytes <= total_bytes, "memory_info: free <= total");

  CHECK_OK(axon_empty_cache(DEV));
  CHECK_OK(axon_memory_stats_get(DEV, &s3));
  CHECK(s3.reserved_bytes == 0 && s3.segment_count == 0,
        "empty_cache releases every segment when nothing is allocated (%llu bytes)",
        (unsigned long long)s3.reserved_bytes);

  /* A live allocation keeps its segment. */
  CHECK_OK(axon_malloc(DEV, 1000, NULL, &a));
  CHECK_OK(axon_empty_cache(DEV));
  CHECK_OK(axon_memory_stats_get(DEV, &s3));
  CHECK(s3.reserved_bytes > 0, "empty_cache keeps segments in use");
  CHECK_OK(axon_free(a));
  CHECK_OK(axon_empty_cache(DEV));
}

static void test_record_stream(void) {
  axon_stream_t main_stream, side;
  CHECK_OK(axon_stream_default(DEV, &main_stream));
  if (!CHECK_OK(axon_stream_create(DEV, &side))) return;
  CHECK_OK(axon_empty_cache(DEV));
  size_t size = 8192;
  void *a = NULL, *b = NULL, *c = NULL;
  CHECK_OK(axon_malloc(DEV, size, main_stream, &a));
  CHECK_OK(axon_record_stream(a, side));
  CHECK_STATUS(axon_record_stream(a, NULL), AXON_ERROR_INVALID_ARGUMENT);
  int local = 0;
  CHECK_STATUS(axon_record_stream(&local, side), AXON_ERROR_INVALID_POINTER);
  cl_event gate = gate_close(side); /* the side stream cannot finish until the gate opens */
  CHECK(gate != NULL, "side stream held back by a user event");
  if (!gate) return;
  CHECK_OK(axon_free(a));
  CHECK_OK(axon_malloc(DEV, size, main_stream, &b));
  CHECK(b != a, "a block recorded on a busy stream is not reused (%p vs %p)", b, a);
  CHECK_OK(axon_stream_sync(main_stream));
  void *b2 = NULL;
  CHECK_OK(axon_malloc(DEV, size, main_stream, &b2));
  CHECK(b2 != a, "nor after its own stream syncs");
  gate_open(gate);
  CHECK_OK(axon_stream_sync(side));
  CHECK_OK(axon_malloc(DEV, size, main_stream, &c));
  CHECK(c == a, "once the other stream's work completes, the block is reused");
  axon_free(b);
  axon_free(b2);
  axon_free(c);

  /* A block that was only used on its own stream is reused at once. */
  CHECK_OK(axon_malloc(DEV, size, side, &a));
  CHECK_OK(axon_free(a));
  CHECK_OK(axon_malloc(DEV, size, side, &b));
  CHECK(b == a, "blocks are reused at once on their own stream");
  /* ... but not by another stream. */
  CHECK_OK(axon_free(b));
  CHECK_OK(axon_malloc(DEV, size, main_stream, &c));
  CHECK(c != a, "a free block of one stream is not handed to another stream");
  axon_free(c);
  CHECK_OK(axon_stream_destroy(side));
  CHECK_OK(axon_empty_cache(DEV));
}

static void test_copies(void) {
  const size_t n = 300000;
  const size_t bytes = n * sizeof(float);
  float *src = malloc(bytes), *dst = malloc(bytes);
  for (size_t i = 0; i < n; i++) src[i] = (float)i * 0.5f - 7.0f;
  void *d1 = NULL, *d2 = NULL;
  CHECK_OK(axon_malloc(DEV, bytes, NULL, &d1));
  CHECK_OK(axon_malloc(DEV, bytes, NULL, &d2));
  CHECK_OK(axon_copy_h2d(d1, src, bytes, NULL, 1));
  memset(dst, 0, bytes);
  CHECK_OK(axon_copy_d2h(dst, d1, bytes, NULL, 1));
  CHECK(!memcmp(src, dst, bytes), "blocking h2d then d2h round-trips %zu bytes", bytes);

  /* Interior addresses: copy a slice into the middle. */
  float patch[100];
  for (int i = 0; i < 100; i++) patch[i] = -1000.0f - i;
  CHECK_OK(axon_copy_h2d((float *)d1 + 5000, patch, sizeof patch, NULL, 1));
  CHECK_OK(axon_copy_d2h(dst, d1, bytes, NULL, 1));
  int ok = !memcmp(dst + 5000, patch, sizeof patch) && !memcmp(dst, src, 5000 * sizeof(float)) &&
           !memcmp(dst + 5100, src + 5100, (n - 5100) * sizeof(float));
  CHECK(ok, "h2d to an interior address writes exactly that slice");
  CHECK_OK(axon_copy_h2d(d1, src, bytes, NULL, 1));

  /* Device to device, whole and at offsets. */
  CHECK_OK(axon_copy_d2d(d2, d1, bytes, NULL));
  memset(dst, 0, bytes);
  CHECK_OK(axon_copy_d2h(dst, d2, bytes, NULL, 1));
  CHECK(!memcmp(src, dst, bytes), "d2d copy of %zu bytes", bytes);
  CHECK_OK(axon_copy_d2d((float *)d2 + 10, (float *)d1 + 20000, 1000 * sizeof(float), NULL));
  CHECK_OK(axon_copy_d2h(dst, d2, bytes, NULL, 1));
  CHECK(!memcmp(dst + 10, src + 20000, 1000 * sizeof(float)) && !memcmp(dst, src, 10 * 4) &&
            !memcmp(dst + 1010, src + 1010, 1000 * sizeof(float)),
        "d2d between interior addresses");
  CHECK_OK(axon_copy_d2d(d1, d1, bytes, NULL)); /* self copy is a no-op */
  CHECK_OK(axon_copy_h2d(d1, src, 0, NULL, 1)); /* zero bytes */
  int on_stack = 0;
  CHECK_STATUS(axon_copy_h2d(&on_stack, src, 4, NULL, 1), AXON_ERROR_INVALID_POINTER);
  CHECK_STATUS(axon_copy_d2h(dst, &on_stack, 4, NULL, 1), AXON_ERROR_INVALID_POINTER);

  /* Non-blocking copies through pinned memory on a created stream. */
  axon_stream_t s;
  CHECK_OK(axon_stream_create(DEV, &s));
  float *pin_in = NULL, *pin_out = NULL;
  CHECK_OK(axon_host_alloc(bytes, (void **)&pin_in));
  CHECK_OK(axon_host_alloc(bytes, (void **)&pin_out));
  if (pin_in && pin_out) {
    CHECK(((uintptr_t)pin_in & 4095) == 0, "pinned memory is page-aligned");
    CHECK(axon_is_host_pinned(pin_in) && axon_is_host_pinned(pin_in + n / 2),
          "axon_is_host_pinned on pinned memory (base and interior)");
    CHECK(!axon_is_host_pinned(src), "axon_is_host_pinned on malloc'ed memory is 0");
    CHECK(!axon_is_host_pinned(NULL), "axon_is_host_pinned(NULL) is 0");
    for (size_t i = 0; i < n; i++) pin_in[i] = (float)(n - i) * 0.25f;
    memset(pin_out, 0, bytes);
    CHECK_OK(axon_copy_h2d(d2, pin_in, bytes, s, 0));
    CHECK_OK(axon_copy_d2d(d1, d2, bytes, s));
    CHECK_OK(axon_copy_d2h(pin_out, d1, bytes, s, 0));
    CHECK_OK(axon_stream_sync(s));
    CHECK(!memcmp(pin_in, pin_out, bytes),
          "non-blocking h2d, d2d, d2h on one stream round-trip after sync");
    CHECK_OK(axon_host_free(pin_in));
    CHECK_OK(axon_host_free(pin_out));
    CHECK(!axon_is_host_pinned(pin_in), "freed pinned memory is no longer pinned");
  }
  CHECK_STATUS(axon_host_free(src), AXON_ERROR_INVALID_POINTER);
  CHECK_OK(axon_host_free(NULL));
  void *none = (void *)1;
  CHECK_OK(axon_host_alloc(0, &none));
  CHECK(none == NULL, "host_alloc of 0 bytes gives NULL");
  CHECK_OK(axon_stream_destroy(s));
  axon_free(d1);
  axon_free(d2);
  free(src);
  free(dst);
}

/* Host mappings see what the device holds and give back what the host writes, at interior
 * addresses too (the collectives' zero-copy staging). */
static void test_host_mapping(void) {
  const size_t n = 70000;
  float *src = malloc(n * sizeof(float)), *dst = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) src[i] = (float)i * 0.25f + 1.0f;
  void *d = NULL;
  CHECK_OK(axon_malloc(DEV, n * sizeof(float), NULL, &d));
  CHECK_OK(axon_copy_h2d(d, src, n * sizeof(float), NULL, 1));
  float *host = NULL;
  const size_t first = 1000, count = 5000;
  CHECK_OK(axon_map_host((float *)d + first, count * sizeof(float), NULL, (void **)&host));
  CHECK(host && !memcmp(host, src + first, count * sizeof(float)), "a mapping reads the device");
  for (size_t i = 0; i < count; i++) host[i] = -(float)i;
  CHECK_OK(axon_unmap_host((float *)d + first, host, NULL));
  CHECK_OK(axon_copy_d2h(dst, d, n * sizeof(float), NULL, 1));
  int ok = !memcmp(dst, src, first * sizeof(float)) &&
           !memcmp(dst + first + count, src + first + count, (n - first - count) * sizeof(float));
  for (size_t i = 0; i < count; i++) ok = ok && dst[first + i] == -(float)i;
  CHECK(ok, "writes through a mapping reach exactly its slice after the unmap");
  int on_stack = 0;
  void *unused = NULL;
  CHECK_STATUS(axon_map_host(&on_stack, 4, NULL, &unused), AXON_ERROR_INVALID_POINTER);
  axon_free(d);
  free(src);
  free(dst);
}

int main(void) {
  int count = 0;
  REQUIRE_OK(axon_device_count(&count));
  CHECK(count >= 1, "at least one device (%d)", count);
  test_malloc_free();
  test_resolve();
  test_out_of_memory();
  test_caching_and_stats();
  test_record_stream();
  test_copies();
  test_host_mapping();
  return harness_summary();
}
