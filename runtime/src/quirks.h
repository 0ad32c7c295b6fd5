/* Known bugs of OpenCL implementations that Axon works around (quirks.c). */
#ifndef AXON_QUIRKS_H
#define AXON_QUIRKS_H

#include "axon/axon.h"

typedef enum axon_quirk {
  /* Kernels read struct arguments that hold arrays through a private copy (the kernels'
   * PRIVATE_STRUCT, kernels/common.cl). */
  AXON_QUIRK_PRIVATE_STRUCT_ARGS = 1u << 0,
  /* A work-item runs at most 65535 loop iterations in all, its loops together; later ones stop
   * early without error. Rows of reductions and similar ops get a work-group each, never one
   * work-item (rows_per_item, ops/launch_common.h), which divides their loops by the group;
   * ops that would still loop longer in a work-item are refused (axon_loop_budget_refusal). */
  AXON_QUIRK_LOOP_BUDGET = 1u << 1,
  /* An int widened to long and compared with a long constant that fits in 32 bits is always
   * false. Axon's own kernels have no such compares; the kernels torch.compile generates index
   * in long on such devices (torch_axon/inductor/kernel.py reads the quirk's name). */
  AXON_QUIRK_WIDENED_INT_COMPARE = 1u << 2,
} axon_quirk;

/* The quirks of a device, from its platform and device names. AXON_QUIRKS=none turns them all
 * off (to check whether a driver still needs them), AXON_QUIRKS=all turns them all on (to test
 * the workarounds on any device). */
unsigned axon_device_quirks(const axon_device_info *info);
/* Build options that select the kernels' workarounds for these quirks ("" for none). */
const char *axon_quirk_build_options(unsigned quirks);
/* The loop iterations a work-item may run on a device with AXON_QUIRK_LOOP_BUDGET, less a
 * margin for the loops around the one counted. */
#define AXON_LOOP_BUDGET 60000
/* The error (AXON_ERROR_UNSUPPORTED, "driver's loop budget" in its message) for an op whose
 * size `n` (named by `what`, "kthvalue: elements per line") passes the `max` the budget allows. */
axon_status_t axon_loop_budget_refusal(const char *what, long long n, long long max);

#endif
