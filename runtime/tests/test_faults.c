/* Tests of fault injection (axon/fault.h) and of the refusal in a forked child: each armed
 * event fails once with the driver's status and a message saying it was injected, counts
 * restart when armed, and a child forked after initialisation gets AXON_ERROR_FORKED from
 * every entry point it tries, promptly, while the parent carries on. */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "axon/fault.h"
#include "harness.h"
#include "internal.h" /* the OpenCL status codes the faults give */

#define DEV 0

static void test_alloc_and_copy_faults(axon_stream_t s) {
  void *p = NULL;
  CHECK_OK(axon_fault_arm(AXON_FAULT_ALLOC, 2));
  CHECK_OK(axon_malloc(DEV, 64, s, &p));
  CHECK_STATUS(axon_malloc(DEV, 64, s, &p), CL_MEM_OBJECT_ALLOCATION_FAILURE);
  CHECK(strstr(axon_last_error(), "injected fault") != NULL, "the message says: %s",
        axon_last_error());
  CHECK(axon_fault_count(AXON_FAULT_ALLOC) == 2, "two allocations counted");
  void *q = NULL;
  CHECK_OK(axon_malloc(DEV, 64, s, &q)); /* once: the next succeeds */
  float host[16] = {0};
  CHECK_OK(axon_fault_arm(AXON_FAULT_COPY, 1));
  CHECK_STATUS(axon_copy_h2d(q, host, sizeof host, s, 1), CL_OUT_OF_RESOURCES);
  CHECK_OK(axon_copy_h2d(q, host, sizeof host, s, 1));
  CHECK_STATUS(axon_fault_arm(AXON_FAULT_KIND_COUNT, 1), AXON_ERROR_INVALID_ARGUMENT);
  CHECK(!strcmp(axon_fault_kind_name(AXON_FAULT_LAUNCH), "launch"), "kind names");
  axon_free(p);
  axon_free(q);
}

static void test_forked_child_is_refused(axon_stream_t s) {
  void *p = NULL;
  if (!CHECK_OK(axon_malloc(DEV, 256, s, &p))) return; /* initialised, an allocation live */
  pid_t child = fork();
  if (child == 0) {
    void *q = NULL;
    int ok = axon_malloc(DEV, 64, NULL, &q) == AXON_ERROR_FORKED &&
             axon_stream_sync(s) == AXON_ERROR_FORKED &&
             axon_device_sync(DEV) == AXON_ERROR_FORKED &&
             strstr(axon_last_error(), "spawn") != NULL && axon_free(p) == AXON_SUCCESS;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  CHECK(child > 0 && waitpid(child, &status, 0) == child, "the child ended (no hang)");
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "the child was refused (AXON_ERROR_FORKED, a message naming 'spawn') and its free did "
        "nothing");
  CHECK_OK(axon_stream_sync(s)); /* the parent carries on */
  CHECK_OK(axon_free(p));
}

int main(void) {
  axon_stream_t s;
  REQUIRE_DEVICE_STREAM(DEV, s);
  test_alloc_and_copy_faults(s);
  test_forked_child_is_refused(s);
  REQUIRE_OK(axon_stream_sync(s));
  return harness_summary();
}
