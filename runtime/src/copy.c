/* Copies between host memory and device addresses, and between device addresses. */
#include "fused/fused.h"
#include "internal.h"
#include "profiler_internal.h"

/* The buffer behind a device address and the stream to use (the device's default if NULL),
 * whose recorded pointwise work runs before the copy. */
static axon_status_t copy_target(const void *device_ptr, axon_stream_t *stream, cl_mem *mem,
                                 size_t *offset) {
  AXON_FAULT_POINT(AXON_FAULT_COPY, CL_OUT_OF_RESOURCES, "copy");
  AXON_TRY(axon_resolve_mem(device_ptr, mem, offset));
  int device = -1;
  axon_is_device_ptr(device_ptr, &device);
  AXON_TRY(axon_stream_resolve(*stream, device, stream));
  return axon_fused_settle(*stream);
}

axon_status_t axon_copy_h2d(void *dst, const void *src, size_t bytes, axon_stream_t stream,
                            int blocking) {
  if (bytes == 0) return AXON_SUCCESS;
  cl_mem mem;
  size_t off;
  AXON_TRY(copy_target(dst, &stream, &mem, &off));
  cl_event event;
  AXON_CL_CHECK(clEnqueueWriteBuffer(stream->queue, mem, blocking ? CL_TRUE : CL_FALSE, off, bytes,
                                     src, 0, NULL, axon_profile_event(&event)),
                "host-to-device copy");
  axon_profile_commit(event, AXON_PROFILE_COPY, "copy host->device", stream, bytes);
  if (!blocking) clFlush(stream->queue);
  return AXON_SUCCESS;
}

axon_status_t axon_copy_d2h(void *dst, const void *src, size_t bytes, axon_stream_t stream,
                            int blocking) {
  if (bytes == 0) return AXON_SUCCESS;
  cl_mem mem;
  size_t off;
  AXON_TRY(copy_target(src, &stream, &mem, &off));
  cl_event event;
  AXON_CL_CHECK(clEnqueueReadBuffer(stream->queue, mem, blocking ? CL_TRUE : CL_FALSE, off, bytes,
                                    dst, 0, NULL, axon_profile_event(&event)),
                "device-to-host copy");
  axon_profile_commit(event, AXON_PROFILE_COPY, "copy device->host", stream, bytes);
  if (!blocking) clFlush(stream->queue);
  return AXON_SUCCESS;
}

axon_status_t axon_copy_d2d(void *dst, const void *src, size_t bytes, axon_stream_t stream) {
  if (bytes == 0 || dst == src) return AXON_SUCCESS;
  cl_mem dmem, smem;
  size_t doff, soff;
  AXON_TRY(copy_target(dst, &stream, &dmem, &doff));
  AXON_TRY(axon_resolve_mem(src, &smem, &soff));
  int src_device = -1;
  axon_is_device_ptr(src, &src_device);
  if (src_device != axon_stream_device(stream))
    AXON_TRY(axon_fused_settle_all()); /* the source's device recorded its writes elsewhere */
  cl_event event;
  AXON_CL_CHECK(clEnqueueCopyBuffer(stream->queue, smem, dmem, soff, doff, bytes, 0, NULL,
                                    axon_profile_event(&event)),
                "device-to-device copy");
  axon_profile_commit(event, AXON_PROFILE_COPY, "copy device->device", stream, bytes);
  return AXON_SUCCESS;
}

axon_status_t axon_map_host(void *device_ptr, size_t bytes, axon_stream_t stream, void **host) {
  *host = NULL;
  cl_mem mem;
  size_t off;
  AXON_TRY(copy_target(device_ptr, &stream, &mem, &off));
  cl_int err = CL_SUCCESS;
  /* Blocking: the address is needed now, and the mapping waits for the work queued before it. */
  void *mapped = clEnqueueMapBuffer(stream->queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, off,
                                    bytes, 0, NULL, NULL, &err);
  AXON_CL_CHECK(err, "mapping device memory for the host");
  *host = mapped;
  return AXON_SUCCESS;
}

axon_status_t axon_unmap_host(void *device_ptr, void *host, axon_stream_t stream) {
  cl_mem mem;
  size_t off;
  AXON_TRY(copy_target(device_ptr, &stream, &mem, &off));
  AXON_CL_CHECK(clEnqueueUnmapMemObject(stream->queue, mem, host, 0, NULL, NULL),
                "unmapping device memory");
  clFlush(stream->queue);
  return AXON_SUCCESS;
}
