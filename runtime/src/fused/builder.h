/* The fused groups' program builder (builder.c): a build request is a program to build and what
 * to do with the outcome, called on the builder's thread (or the submitter's, when building
 * synchronously). */
#ifndef AXON_FUSED_BUILDER_H
#define AXON_FUSED_BUILDER_H

#include "axon/axon.h"

typedef struct fused_build fused_build;
struct fused_build {
  axon_program_t program;
  void (*done)(fused_build *build, axon_status_t status);
};

/* Builds b->program, then calls b->done; b must live until then. Dropped (done never called)
 * once the builder is stopped. */
void fused_build_submit(fused_build *b);
/* Returns once every submitted build is done. */
void fused_build_wait(void);
/* Drops queued and later builds and waits for the one in flight (at exit). */
void fused_build_stop(void);

#endif
