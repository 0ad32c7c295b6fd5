/* The usage board (usage_board.c): this process's memory figures where axon-smi reads them. */
#ifndef AXON_USAGE_BOARD_H
#define AXON_USAGE_BOARD_H

#include "axon/axon.h"

/* Publishes device `device`'s figures; call with the allocator's lock held. Never fails. */
void axon_usage_publish(int device, const char *name, const axon_memory_stats *stats);

#endif
