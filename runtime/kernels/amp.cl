/*
 * Mixed-precision helpers behind torch.amp.GradScaler, in the program of the gradients' type.
 * found_inf and scale are float32, the growth tracker int32, as PyTorch defines them.
 */
#ifdef IS_FLOAT
/* x *= inv_scale; found_inf = 1 if any x is inf or NaN. Every writer stores the same value,
 * through an atomic exchange, so the result does not depend on order. */
KERNEL(amp_unscale)(BUF(x), BUF(found_inf), BUF(inv_scale), long n) {
  long i = get_global_id(0);
  if (i >= n) return;
  CT v = LOAD(PTR(x), i);
  if (!isfinite(v)) atomic_xchg((volatile __global int *)PTR(found_inf), as_int(1.0f));
  STORE(PTR(x), i, v * (CT)LD_F32(PTR(inv_scale), 0));
}
#endif

/* One work-item: PyTorch's scale update rule (_amp_update_scale_). */
KERNEL(amp_update_scale)(BUF(scale), BUF(tracker), BUF(found_inf), float growth, float backoff,
                               int interval) {
  __global float *s = (__global float *)PTR(scale);
  __global int *t = (__global int *)PTR(tracker);
  if (LD_F32(PTR(found_inf), 0) != 0.0f) {
    s[0] *= backoff;
    t[0] = 0;
  } else if (t[0] + 1 == interval) {
    float grown = s[0] * growth;
    if (isfinite(grown)) s[0] = grown; /* never grow to inf */
    t[0] = 0;
  } else {
    t[0] += 1;
  }
}
