/*
 * Shared by softmax.cl and loss.cl, which include it: the reduction of one value per
 * work-item of a 256-item work-group through local memory.
 */
#ifndef AXON_GROUP_REDUCE_CL
#define AXON_GROUP_REDUCE_CL

#ifdef IS_FLOAT
/* Tree reduction of one value per work-item in local memory; every item gets the result. */
inline CT group_reduce(__local CT *scratch, CT v, int is_max) {
  int lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = 128; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] = is_max ? fmax(scratch[lid], scratch[lid + s]) : scratch[lid] + scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  CT r = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}
#endif

#endif
