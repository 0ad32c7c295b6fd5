/* Counting of the OpenCL objects Axon holds (axon/live_objects.h): each creation site calls
 * axon_live_add(kind, 1) once the object exists, each release site axon_live_add(kind, -1). */
#ifndef AXON_SRC_LIVE_OBJECTS_H
#define AXON_SRC_LIVE_OBJECTS_H

#include "axon/live_objects.h"

void axon_live_add(axon_live_kind kind, int delta);

#endif
