/* The table of driver quirks: one row per known bug, matched on platform and device names.
 * Each bug has a standalone reproducer in tools/rusticl/mesa_bugs.c (README.md there). */
#include "quirks.h"

#include "axon/quirks.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct quirk_row {
  const char *platform; /* substring of CL_PLATFORM_NAME */
  const char *device;   /* prefix of CL_DEVICE_NAME; NULL: any */
  unsigned quirks;
} quirk_row;

static const quirk_row table[] = {
    /* Mesa 22.3 rusticl on llvmpipe: compiling a kernel that reads an array member of a struct
     * argument at a computed index crashes the process (SIGSEGV in LLVMBuildBitCast under
     * launch_grid); reading a private copy compiles. Bug 2 of tools/rusticl/README.md. */
    {"rusticl", "llvmpipe", AXON_QUIRK_PRIVATE_STRUCT_ARGS},
    /* Mesa 22.3 llvmpipe (gallivm): one loop limiter per kernel invocation, set to 65535 at
     * entry and decremented by every loop's iterations, never reset; at zero every loop exits,
     * silently. A float32 sum of 1e6 elements in one work-item returned the sum of the first
     * 524288 (65536 iterations of eight). Bug 3 of tools/rusticl/README.md. */
    {"rusticl", "llvmpipe", AXON_QUIRK_LOOP_BUDGET},
    /* Mesa 22.3 llvmpipe: `(long)i < 8L` with an int i is always false, `>=` always true.
     * F.pad with a value, compiled with 32-bit indices, wrote the value everywhere. Bug 4 of
     * tools/rusticl/README.md. */
    {"rusticl", "llvmpipe", AXON_QUIRK_WIDENED_INT_COMPARE},
};

/* The names axon_device_quirk_names gives, one per bit. */
static const struct {
  unsigned quirk;
  const char *name;
} quirk_names[] = {
    {AXON_QUIRK_PRIVATE_STRUCT_ARGS, "private_struct_args"},
    {AXON_QUIRK_LOOP_BUDGET, "loop_budget"},
    {AXON_QUIRK_WIDENED_INT_COMPARE, "widened_int_compare"},
};

#define ALL_QUIRKS \
  (AXON_QUIRK_PRIVATE_STRUCT_ARGS | AXON_QUIRK_LOOP_BUDGET | AXON_QUIRK_WIDENED_INT_COMPARE)

unsigned axon_device_quirks(const axon_device_info *info) {
  const char *force = getenv("AXON_QUIRKS");
  if (force && !strcmp(force, "none")) return 0;
  if (force && !strcmp(force, "all")) return ALL_QUIRKS;
  unsigned quirks = 0;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    const quirk_row *r = &table[i];
    if (strstr(info->platform_name, r->platform) &&
        (!r->device || !strncmp(info->name, r->device, strlen(r->device))))
      quirks |= r->quirks;
  }
  return quirks;
}

const char *axon_quirk_build_options(unsigned quirks) {
  return quirks & AXON_QUIRK_PRIVATE_STRUCT_ARGS ? " -DAXON_PRIVATE_STRUCT_ARGS" : "";
}

axon_status_t axon_loop_budget_refusal(const char *what, long long n, long long max) {
  return axon_fail(AXON_ERROR_UNSUPPORTED,
                   "%s %lld, at most %lld on this device: refused, as its driver stops a "
                   "work-item's loops after 65535 iterations in all (the driver's loop budget; "
                   "Mesa llvmpipe) and the result would be wrong",
                   what, n, max);
}

axon_status_t axon_device_quirk_names(int device, char *names, size_t size) {
  axon_device *d;
  axon_status_t st = axon_device_get(device, &d);
  if (st != AXON_SUCCESS) return st;
  if (size == 0) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "quirk names: no room");
  names[0] = '\0';
  for (size_t i = 0; i < sizeof quirk_names / sizeof quirk_names[0]; i++) {
    if (!(d->quirks & quirk_names[i].quirk)) continue;
    size_t used = strlen(names);
    int n = snprintf(names + used, size - used, "%s%s", used ? " " : "", quirk_names[i].name);
    if (n < 0 || (size_t)n >= size - used)
      return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "quirk names: %zu bytes are too few", size);
  }
  return AXON_SUCCESS;
}
