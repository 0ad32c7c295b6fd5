/*
 * PoCL's kernel cache inside Axon's folder (pocl/): PoCL aborts the process on a damaged entry
 * (a truncated kernel .so fails dlopen, a truncated program.bc trips an assertion) instead of
 * rebuilding it. So before PoCL first reads the folder, Axon removes each program folder
 * (pocl/XX/HASH/) holding a file that cannot be right, and PoCL builds that program again:
 *   - an empty file (no entry PoCL writes is empty);
 *   - a kernel .so whose ELF header is missing or whose section headers lie past its end;
 *   - a file whose size differs from what the manifest recorded (pocl.manifest, written at
 *     exit: path, size and modification time of every file then present). Only the size: a
 *     process that keeps PoCL's cache here by POCL_CACHE_DIR (CI does) may rebuild an entry and
 *     rename the same bytes over it, a new time on a good file; a garbled file of unchanged
 *     size is not caught.
 * PoCL writes each entry to a temporary file and renames it into place, so a file another
 * process is writing never shows under its final name; files the manifest has not seen yet are
 * checked by the first two rules only. `last_accessed` files change as PoCL uses them and are
 * not recorded.
 */
#define _XOPEN_SOURCE 700
#include <elf.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static char root[1100];          /* pocl/, with the trailing slash */
static char manifest_path[1200]; /* Axon's folder/pocl.manifest */
static char **damaged; /* program folders to remove, each after a letter: S sure, R record */
static size_t ndamaged;

typedef struct recorded {
  char *path;
  long long size, sec, nsec;
} recorded;
static recorded *manifest;
static size_t nmanifest;
static FILE *writing; /* the manifest being written at exit */
/* pocl/'s modification time at start: PoCL writes each entry as a temporary file there before
 * renaming it into place, so an unchanged time at exit means no new entries to record. */
static struct timespec root_time_at_start;

static int by_path(const void *a, const void *b) {
  return strcmp(((const recorded *)a)->path, ((const recorded *)b)->path);
}

static void load_manifest(void) {
  FILE *f = fopen(manifest_path, "r");
  if (!f) return;
  char line[1400];
  size_t cap = 0;
  while (fgets(line, sizeof line, f)) {
    recorded r;
    int used = 0;
    if (sscanf(line, "%lld %lld %lld %n", &r.size, &r.sec, &r.nsec, &used) != 3) continue;
    line[strcspn(line, "\n")] = '\0';
    if (nmanifest == cap) {
      recorded *grown = realloc(manifest, (cap = cap ? 2 * cap : 256) * sizeof *grown);
      if (!grown) break;
      manifest = grown;
    }
    r.path = strdup(line + used);
    if (r.path) manifest[nmanifest++] = r;
  }
  fclose(f);
  qsort(manifest, nmanifest, sizeof *manifest, by_path);
}

/* The program folder (XX/HASH) of a path relative to pocl/, or 0 when it has none. */
static size_t program_prefix(const char *rel) {
  const char *first = strchr(rel, '/');
  const char *second = first ? strchr(first + 1, '/') : NULL;
  return second ? (size_t)(second - rel) : 0;
}

static int elf_truncated(const char *path, off_t size) {
  FILE *f = fopen(path, "rb");
  if (!f) return 1;
  Elf64_Ehdr h;
  int bad = fread(&h, sizeof h, 1, f) != 1 || memcmp(h.e_ident, ELFMAG, SELFMAG) ||
            h.e_ident[EI_CLASS] != ELFCLASS64 ||
            (off_t)(h.e_shoff + (Elf64_Off)h.e_shnum * h.e_shentsize) > size;
  fclose(f);
  return bad;
}

/* Why a file cannot be right: SURE for an empty file or a truncated ELF (damage whoever wrote
 * it); RECORD for a size other than the manifest's, which may also be an entry another process
 * using the folder through POCL_CACHE_DIR rebuilt (PoCL's builds from source and from a binary
 * can differ): removed all the same, since a rebuild is always safe, but without a warning. */
enum { RIGHT, SURE, RECORD };

/* A recorded file is checked against its record alone (a stat, already made): opening each of
 * a large cache's files took about a second at every start (28,000 files); files the manifest
 * has not seen are opened. */
static int wrong(const char *path, const char *rel, const struct stat *st) {
  if (st->st_size == 0) return SURE;
  recorded key = {(char *)rel, 0, 0, 0};
  recorded *r = manifest ? bsearch(&key, manifest, nmanifest, sizeof *manifest, by_path) : NULL;
  if (r) return r->size != (long long)st->st_size ? RECORD : RIGHT;
  size_t n = strlen(rel);
  return n > 3 && !strcmp(rel + n - 3, ".so") && elf_truncated(path, st->st_size) ? SURE : RIGHT;
}

static int is_skipped(const char *rel) {
  const char *base = strrchr(rel, '/');
  base = base ? base + 1 : rel;
  return !strcmp(base, "last_accessed") || !strncmp(base, "tempfile", 8) || !program_prefix(rel);
}

static int visit_check(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)ftw;
  const char *rel = path + strlen(root);
  int why = type == FTW_F && !is_skipped(rel) ? wrong(path, rel, st) : RIGHT;
  if (why == RIGHT) return 0;
  size_t len = program_prefix(rel);
  for (size_t i = 0; i < ndamaged; i++)
    if (!strncmp(damaged[i] + 1, rel, len) && !damaged[i][len + 1]) {
      if (why == SURE) damaged[i][0] = 'S';
      return 0;
    }
  char **grown = realloc(damaged, (ndamaged + 1) * sizeof *grown);
  if (!grown) return 0;
  damaged = grown;
  damaged[ndamaged] = malloc(len + 2);
  if (!damaged[ndamaged]) return 0;
  damaged[ndamaged][0] = why == SURE ? 'S' : 'R';
  memcpy(damaged[ndamaged] + 1, rel, len);
  damaged[ndamaged++][len + 1] = '\0';
  return 0;
}

static int visit_remove(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st, (void)type, (void)ftw;
  remove(path);
  return 0;
}

static int visit_record(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)ftw;
  const char *rel = path + strlen(root);
  if (type == FTW_F && !is_skipped(rel))
    fprintf(writing, "%lld %lld %lld %s\n", (long long)st->st_size, (long long)st->st_mtim.tv_sec,
            (long long)st->st_mtim.tv_nsec, rel);
  return 0;
}

static int root_changed(void) {
  struct stat st;
  return stat(root, &st) != 0 || st.st_mtim.tv_sec != root_time_at_start.tv_sec ||
         st.st_mtim.tv_nsec != root_time_at_start.tv_nsec;
}

static void record_at_exit(void) {
  if (axon_forked_child() || (!root_changed() && !access(manifest_path, F_OK))) return;
  char tmp[1300];
  snprintf(tmp, sizeof tmp, "%s.%d.tmp", manifest_path, (int)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600); /* private, as every entry is */
  writing = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!writing) {
    if (fd >= 0) close(fd);
    return;
  }
  nftw(root, visit_record, 16, FTW_PHYS);
  int ok = fclose(writing) == 0;
  if (!ok || rename(tmp, manifest_path) != 0) remove(tmp);
}

void axon_driver_cache_check(const char *axon_dir, const char *pocl_dir) {
  snprintf(root, sizeof root, "%s/", pocl_dir);
  snprintf(manifest_path, sizeof manifest_path, "%s/pocl.manifest", axon_dir);
  load_manifest();
  nftw(root, visit_check, 16, FTW_PHYS);
  for (size_t i = 0; i < ndamaged; i++) {
    char dir[2400];
    snprintf(dir, sizeof dir, "%s%s", root, damaged[i] + 1);
    if (damaged[i][0] == 'S')
      fprintf(stderr, "axon: removing a damaged entry of the driver's kernel cache: %s\n", dir);
    nftw(dir, visit_remove, 16, FTW_DEPTH | FTW_PHYS);
    free(damaged[i]);
  }
  free(damaged);
  damaged = NULL;
  ndamaged = 0;
  for (size_t i = 0; i < nmanifest; i++) free(manifest[i].path);
  free(manifest);
  manifest = NULL;
  nmanifest = 0;
  struct stat st;
  if (stat(root, &st) == 0) root_time_at_start = st.st_mtim;
  atexit(record_at_exit);
}
