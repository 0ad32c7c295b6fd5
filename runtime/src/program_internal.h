/* Between the program cache (program_cache.c: builds and caches) and the launcher (launch.c:
 * arguments and enqueueing). */
#ifndef AXON_PROGRAM_INTERNAL_H
#define AXON_PROGRAM_INTERNAL_H

#include "internal.h"

struct launch_args; /* launch.c's record of a kernel's last argument values */
void axon_launch_args_free(struct launch_args *args);

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
/* A family a workload may use one or two kernels of, or many: its first n kernels build alone,
 * then the whole family. The contiguous elementwise family of a dtype: whole, 0.55 s on PoCL;
 * one kernel alone 0.14 s; float32 steps use fifteen of them, other dtypes often one or two
 * (and `torch.ones(3)`, a first contact, one). */
void axon_program_build_first_alone(axon_program_t program, int n);
/* 1 when program lacks kernel `name`: an absent entry, or a whole build without it (a program
 * building its first kernels alone is built whole to tell); 0 when it has it, or when only a
 * build of the name alone would tell (a program built a kernel at a time). */
int axon_program_lacks_kernel(axon_program_t program, const char *name);
/* Forgets a family program and releases its OpenCL objects (fused eager mode's eviction of its
 * least used kernels): a later request of its family makes a new one, from the disk cache. The
 * caller guarantees no build or launch of it is in progress or will follow; kernels already
 * enqueued keep what they use (OpenCL holds a command's kernel until it completes). */
void axon_program_discard(axon_program_t program);
/* Forgets a kernel file added by axon_register_kernel_file (the programs built from it first). */
void axon_unregister_kernel_file(const char *name);
/* The device a program was made for. */
axon_device *axon_program_device(axon_program_t program);
/* Held around a kernel's lookup, argument setting and enqueue. */
pthread_mutex_t *axon_launch_lock(void);

#endif
