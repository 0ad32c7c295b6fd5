/* Fault injection (axon/fault.h): a counter per kind, and the event it is armed to fail. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axon/fault.h"
#include "internal.h"

static const char *names[AXON_FAULT_KIND_COUNT] = {"alloc", "build", "launch", "copy",
                                                   "collective"};
static uint64_t counts[AXON_FAULT_KIND_COUNT], armed_at[AXON_FAULT_KIND_COUNT];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t from_env_once = PTHREAD_ONCE_INIT;

/* AXON_FAULTS="kind:n,kind:n". */
static void arm_from_env(void) {
  const char *spec = getenv("AXON_FAULTS");
  if (!spec) return;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", spec);
  for (char *save = NULL, *e = strtok_r(buf, ", ", &save); e; e = strtok_r(NULL, ", ", &save)) {
    char *colon = strchr(e, ':');
    if (!colon) continue;
    *colon = '\0';
    for (int k = 0; k < AXON_FAULT_KIND_COUNT; k++)
      if (!strcmp(e, names[k])) armed_at[k] = strtoull(colon + 1, NULL, 10);
  }
}

const char *axon_fault_kind_name(axon_fault_kind kind) {
  return (unsigned)kind < AXON_FAULT_KIND_COUNT ? names[kind] : NULL;
}

axon_status_t axon_fault_arm(axon_fault_kind kind, uint64_t n) {
  if ((unsigned)kind >= AXON_FAULT_KIND_COUNT)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "fault kind %d unknown", (int)kind);
  pthread_once(&from_env_once, arm_from_env);
  pthread_mutex_lock(&lock);
  counts[kind] = 0;
  armed_at[kind] = n;
  pthread_mutex_unlock(&lock);
  return AXON_SUCCESS;
}

uint64_t axon_fault_count(axon_fault_kind kind) {
  if ((unsigned)kind >= AXON_FAULT_KIND_COUNT) return 0;
  pthread_mutex_lock(&lock);
  uint64_t n = counts[kind];
  pthread_mutex_unlock(&lock);
  return n;
}

int axon_fault_hit(axon_fault_kind kind) {
  pthread_once(&from_env_once, arm_from_env);
  pthread_mutex_lock(&lock);
  int hit = ++counts[kind] == armed_at[kind];
  if (hit) armed_at[kind] = 0; /* once */
  pthread_mutex_unlock(&lock);
  return hit;
}

axon_status_t axon_fault_injected(axon_fault_kind kind, axon_status_t status, const char *what) {
  return axon_fail(status, "%s failed: %s (injected fault: AXON_FAULTS %s:%llu)", what,
                   axon_status_name(status), names[kind], (unsigned long long)counts[kind]);
}

axon_status_t axon_fault_point(axon_fault_kind kind, axon_status_t status, const char *what) {
  if ((unsigned)kind >= AXON_FAULT_KIND_COUNT)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "fault kind %d unknown", (int)kind);
  return axon_fault_hit(kind) ? axon_fault_injected(kind, status, what) : AXON_SUCCESS;
}
