/*
 * The usage board: each process that uses Axon's allocator publishes its memory figures per
 * device in a small shared-memory file, so that `axon-smi` can list processes and their memory
 * as nvidia-smi does. OpenCL has no query for another process's allocations; this is Axon's
 * own account, kept where every Axon process of the user can read it.
 *
 * Where: /dev/shm/axon-usage-<uid>/<pid> (a folder only the user can enter). Layout: the
 * axon_usage_board struct below, native byte order, read by torch_axon/smi/usage.py (keep the
 * two in step; the version field says which layout a file has). Writes are plain stores into a
 * mapped page, made under the allocator's lock: no system call on the allocation path. A reader
 * may see a figure mid-update; the next read is right again. Files of processes that ended
 * without removing theirs (a crash) are skipped and removed by the reader.
 *
 * Where /dev/shm is missing or not writable, or AXON_USAGE_BOARD=0, nothing is published and
 * nothing fails: the board is for reporting only.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "usage_board.h"

#define BOARD_MAGIC 0x42555841u /* "AXUB" */
#define BOARD_VERSION 1u
#define BOARD_DEVICES 16
#define BOARD_NAME 64
#define BOARD_COMMAND 128

typedef struct axon_usage_slot {
  char name[BOARD_NAME]; /* the device's name; empty for a slot never used */
  uint64_t allocated_bytes, reserved_bytes, reserved_peak, limit_bytes;
} axon_usage_slot;

typedef struct axon_usage_board {
  uint32_t magic, version;
  int32_t pid;
  uint32_t slots;
  char command[BOARD_COMMAND]; /* the process's command line, spaces for NULs */
  axon_usage_slot slot[BOARD_DEVICES];
} axon_usage_board;

static axon_usage_board *board; /* NULL: not opened yet, or unavailable */
static int board_state;         /* 0 not tried, 1 open, -1 unavailable */
static char board_path[256];

static void read_command(char *dst, size_t n) {
  FILE *f = fopen("/proc/self/cmdline", "rb");
  if (!f) return;
  size_t got = fread(dst, 1, n - 1, f);
  fclose(f);
  for (size_t i = 0; i < got; i++)
    if (dst[i] == '\0') dst[i] = ' ';
  dst[got] = '\0';
}

static void remove_board(void) {
  if (board_state == 1) unlink(board_path);
}

/* A forked child has its parent's mapping: it must not write the parent's figures. */
static void forget_board_in_child(void) {
  board = NULL;
  board_state = 0;
}

static void open_board(void) {
  board_state = -1;
  const char *off = getenv("AXON_USAGE_BOARD");
  if (off && (!strcmp(off, "0") || !strcmp(off, "off"))) return;
  char dir[128];
  snprintf(dir, sizeof dir, "/dev/shm/axon-usage-%u", (unsigned)getuid());
  mkdir(dir, 0700); /* an existing folder is fine */
  snprintf(board_path, sizeof board_path, "%s/%d", dir, (int)getpid());
  int fd = open(board_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  if (ftruncate(fd, sizeof(axon_usage_board)) != 0) {
    close(fd);
    unlink(board_path);
    return;
  }
  void *map = mmap(NULL, sizeof(axon_usage_board), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    unlink(board_path);
    return;
  }
  board = map;
  board->version = BOARD_VERSION;
  board->pid = (int32_t)getpid();
  board->slots = BOARD_DEVICES;
  read_command(board->command, sizeof board->command);
  board->magic = BOARD_MAGIC; /* last: a reader trusts the file from here on */
  board_state = 1;
  static int registered;
  if (!registered) {
    registered = 1;
    atexit(remove_board);
    pthread_atfork(NULL, NULL, forget_board_in_child);
  }
}

void axon_usage_publish(int device, const char *name, const axon_memory_stats *stats) {
  if (device < 0 || device >= BOARD_DEVICES) return;
  if (board_state == 0) open_board();
  if (!board) return;
  axon_usage_slot *s = &board->slot[device];
  if (!s->name[0]) snprintf(s->name, sizeof s->name, "%s", name);
  s->allocated_bytes = stats->allocated_bytes;
  s->reserved_bytes = stats->reserved_bytes;
  s->reserved_peak = stats->reserved_peak;
  s->limit_bytes = stats->limit_bytes;
}
