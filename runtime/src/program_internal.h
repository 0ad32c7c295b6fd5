/* Between the program cache (program_cache.c: builds and caches) and the launcher (launch.c:
 * arguments and enqueueing). */
#ifndef AXON_PROGRAM_INTERNAL_H
#define AXON_PROGRAM_INTERNAL_H

#include "internal.h"

struct launch_args; /* launch.c's record of a kernel's last argument values */

/* A kernel of a program by name. kernel is NULL for a name known to be absent, so that
 * launchers probing for optional forms ask the driver once. */
typedef struct kernel_entry {
  uint64_t hash; /* of the name: compared before the name itself */
  char name[64];
  cl_kernel kernel;
  cl_program own; /* the one-kernel program it came from, or NULL (the program's whole one) */
  struct launch_args *args;
} kernel_entry;

/* The kernel `name` of program, built on first use. Called with the launch lock held, which
 * guards every kernel list; a build releases it meanwhile, so other launches go on. The entry
 * stays valid while the lock is held. */
axon_status_t axon_program_kernel_entry(axon_program_t program, const char *name,
                                        kernel_entry **entry);
/* A family a workload uses a few kernels of: build its kernels one at a time even where whole
 * families are the default (PoCL). The strided elementwise family is one: 269 kernels (each
 * with its rows form) cost 1.9 to 2.6 s whole, one of them 0.3 s, and a training step uses two
 * to eight of them, where it uses fifteen or more contiguous ones. */
void axon_program_build_sparsely(axon_program_t program);
/* 1 when program is known to lack kernel `name` without building anything (an absent entry,
 * or a whole build without it); 0 when it has it or only a build would tell. */
int axon_program_lacks_kernel(axon_program_t program, const char *name);
/* The device a program was made for. */
axon_device *axon_program_device(axon_program_t program);
/* Held around a kernel's lookup, argument setting and enqueue. */
pthread_mutex_t *axon_launch_lock(void);

#endif
