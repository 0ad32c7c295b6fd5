/*
 * Where compiled kernels live on disk: $AXON_CACHE_DIR, else $XDG_CACHE_HOME/axon, else
 * ~/.cache/axon; AXON_CACHE_DIR=off (or 0, or empty) turns the disk cache off. Resolved once.
 *
 * The folder holds machine code this process loads and runs (Axon's programs, and PoCL's
 * kernels in pocl/), so it must be the user's alone: it is created 0700, and an existing one
 * owned by another user, or writable by group or others, is not used (anyone who could write
 * there could plant code). Axon then warns and uses a private folder of its own,
 * $XDG_RUNTIME_DIR/axon-cache or /tmp/axon-cache-UID, checked the same way; failing that, the
 * disk cache is off.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static char cache_dir[1024];
static pthread_once_t cache_dir_once = PTHREAD_ONCE_INIT;

/* Creates dir (parents 0755 as usual for ~/.cache, the folder itself 0700); 0 on failure. */
static int make_dirs(char *dir) {
  for (char *p = dir + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(dir, 0755);
      *p = '/';
    }
  return mkdir(dir, 0700) == 0 || errno == EEXIST;
}

/* NULL when dir is a folder of this user that no one else can write, else why not. */
static const char *unsafe(const char *dir) {
  struct stat st;
  if (stat(dir, &st) != 0) return "it cannot be read";
  if (!S_ISDIR(st.st_mode)) return "it is not a folder";
  if (st.st_uid != geteuid()) return "it belongs to another user";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "others can write to it";
  return NULL;
}

static int usable(char *dir, const char **why) {
  *why = make_dirs(dir) ? unsafe(dir) : "it cannot be created";
  return *why == NULL;
}

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
  const char *why;
  if (!cache_dir[0] || usable(cache_dir, &why)) return;
  char chosen[1024];
  snprintf(chosen, sizeof chosen, "%s", cache_dir);
  const char *runtime_dir = getenv("XDG_RUNTIME_DIR");
  if (runtime_dir && *runtime_dir)
    snprintf(cache_dir, sizeof cache_dir, "%s/axon-cache", runtime_dir);
  else
    snprintf(cache_dir, sizeof cache_dir, "/tmp/axon-cache-%u", (unsigned)geteuid());
  const char *why_private;
  int ok = usable(cache_dir, &why_private);
  fprintf(stderr,
          "axon: not using the kernel cache folder %s: %s (compiled code is loaded from it); %s%s\n",
          chosen, why, ok ? "using " : "the disk cache is off", ok ? cache_dir : "");
  if (!ok) cache_dir[0] = '\0';
}

const char *axon_program_cache_dir(void) {
  pthread_once(&cache_dir_once, resolve_cache_dir);
  return cache_dir[0] ? cache_dir : NULL;
}
