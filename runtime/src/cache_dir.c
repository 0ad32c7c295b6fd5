/*
 * Where compiled kernels live on disk: $AXON_CACHE_DIR, else $XDG_CACHE_HOME/axon, else
 * ~/.cache/axon; AXON_CACHE_DIR=off (or 0, or empty) turns the disk cache off. Resolved once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

static char cache_dir[1024];
static pthread_once_t cache_dir_once = PTHREAD_ONCE_INIT;

static void resolve_cache_dir(void) {
  const char *env = getenv("AXON_CACHE_DIR");
  if (env && (!strcmp(env, "off") || !strcmp(env, "0") || !*env)) return;
  if (env) {
    snprintf(cache_dir, sizeof cache_dir, "%s", env);
  } else if (getenv("XDG_CACHE_HOME") && *getenv("XDG_CACHE_HOME")) {
    snprintf(cache_dir, sizeof cache_dir, "%s/axon", getenv("XDG_CACHE_HOME"));
  } else if (getenv("HOME")) {
    snprintf(cache_dir, sizeof cache_dir, "%s/.cache/axon", getenv("HOME"));
  }
  /* Create each level; an existing folder is fine, a failure just disables the disk cache. */
  for (char *p = cache_dir + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(cache_dir, 0755);
      *p = '/';
    }
  if (mkdir(cache_dir, 0755) != 0 && errno != EEXIST) cache_dir[0] = '\0';
}

const char *axon_program_cache_dir(void) {
  pthread_once(&cache_dir_once, resolve_cache_dir);
  return cache_dir[0] ? cache_dir : NULL;
}
