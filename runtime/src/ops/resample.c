/* Launches resampling and reflection / replication padding (kernels/resample.cl), and the 2-d
 * filtered resampling (bicubic, antialiased bilinear; axon/resample.h). */
#include "axon/resample.h"

#include <stdio.h>

#include "args_launch.h"
#include "spatial.h"

static axon_status_t resample_launch(axon_stream_t stream, axon_dtype dtype,
                                     axon_resample_kind kind, const axon_spatial_desc *d,
                                     int backward) {
  int exact = kind == AXON_RESAMPLE_NEAREST_EXACT;
  if (exact) kind = AXON_RESAMPLE_NEAREST;
  const char *base = kind == AXON_RESAMPLE_NEAREST                            ? "upsample_nearest"
                     : kind == AXON_RESAMPLE_LINEAR                           ? "upsample_linear"
                     : kind == AXON_PAD_REFLECT || kind == AXON_PAD_REPLICATE ? "pad"
                                                                              : NULL;
  if (!base) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "resample: unknown kind %d", (int)kind);
  if (!stream) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL stream", base);
  if ((backward || kind == AXON_RESAMPLE_LINEAR) && !is_float_dtype(dtype))
    return axon_fail(AXON_ERROR_UNSUPPORTED_DTYPE,
                     "%s%s: %s is not supported (floating types only)", base,
                     backward ? " backward" : "", axon_dtype_name(dtype));
  sp_geom g;
  AXON_TRY(sp_geom_make(d, base, &g));
  if (kind == AXON_PAD_REFLECT || kind == AXON_PAD_REPLICATE) {
    for (int i = 0; i < 3; i++) {
      if (g.out[i] != g.in[i] + g.p[i] + g.pa[i])
        return axon_fail(AXON_ERROR_INVALID_ARGUMENT,
                         "pad: output size does not match the padding");
      if (kind == AXON_PAD_REFLECT && (g.p[i] >= g.in[i] || g.pa[i] >= g.in[i]) &&
          (g.p[i] || g.pa[i]))
        return axon_fail(AXON_ERROR_INVALID_ARGUMENT,
                         "reflection pad: padding must be below the input size");
      if (g.in[i] == 0 && g.out[i] != 0)
        return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "pad: empty input dim");
    }
  }
  int64_t total = backward ? sp_in_numel(&g) : sp_out_numel(&g);
  if (total == 0) return AXON_SUCCESS;
  if (!d->input || !d->output) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL data", base);
  axon_program_t program;
  AXON_TRY(family_program(stream, "resample", dtype, &program));
  char name[64];
  snprintf(name, sizeof name, backward ? "%s_backward" : "%s", base);
  float fs[3];
  compute_scalar cs[3];
  int lead = 3 - d->nd;
  for (int i = 0; i < 3; i++) {
    double inv = i < lead ? 0.0 : d->inv_scale[i - lead];
    fs[i] = (float)inv;
    cs[i] = make_scalar(dtype, inv, 0, 0);
  }
  int mode = kind == AXON_PAD_REFLECT ? 0 : 1;
  axon_arg args[9];
  int n = 0;
  args[n++] = buffer_arg(backward ? d->output : d->input);
  args[n++] = buffer_arg(backward ? d->input : d->output);
  args[n++] = bytes_arg(&g, sizeof g);
  if (kind == AXON_RESAMPLE_NEAREST) {
    for (int i = 0; i < 3; i++) args[n++] = bytes_arg(&fs[i], sizeof(float));
    args[n++] = bytes_arg(&exact, sizeof exact);
  } else if (kind == AXON_RESAMPLE_LINEAR)
    for (int i = 0; i < 3; i++) args[n++] = bytes_arg(&cs[i].v, cs[i].size);
  else
    args[n++] = bytes_arg(&mode, sizeof mode);
  args[n++] = bytes_arg(&total, 8);
  return sp_launch(stream, program, name, total, args, n);
}

axon_status_t axon_resample(axon_stream_t stream, axon_dtype dtype, axon_resample_kind kind,
                            const axon_spatial_desc *d) {
  return resample_launch(stream, dtype, kind, d, 0);
}

axon_status_t axon_resample_backward(axon_stream_t stream, axon_dtype dtype,
                                     axon_resample_kind kind, const axon_spatial_desc *d) {
  return resample_launch(stream, dtype, kind, d, 1);
}

/* ---- 2-d filtered resampling (axon/resample.h) ---------------------------------------------- */

static const args_kernel resample2d_kernels[] = {
    [AXON_RESAMPLE2D_BICUBIC] = {"bicubic2d", 0},
    [AXON_RESAMPLE2D_BICUBIC_BACKWARD] = {"bicubic2d_backward", 0},
    [AXON_RESAMPLE2D_AA_BILINEAR] = {"aa_bilinear2d", 0},
    [AXON_RESAMPLE2D_AA_BILINEAR_BACKWARD] = {"aa_bilinear2d_backward", 0},
};

axon_status_t axon_resample2d(axon_stream_t stream, axon_dtype dtype, axon_resample2d_kernel kernel,
                              const axon_resample2d_desc *d) {
  const args_kernel *k = ARGS_KERNEL(resample2d_kernels, kernel);
  if (!k)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "resample2d: unknown kernel %d", (int)kernel);
  if (!d) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL descriptor", k->name);
  const axon_resample2d_args *a = &d->args;
  if (a->planes < 0 || a->channels < 1 || a->out_h < 0 || a->out_w < 0 || a->in_h < 1 ||
      a->in_w < 1)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: bad sizes", k->name);
  const void *buffers[] = {d->input, d->output};
  return args_launch(stream, dtype, "resample", k, a->planes * a->out_h * a->out_w, buffers, 2, a,
                     sizeof *a);
}
