/*
 * Portable tiled matrix product for any element type: the path for dtypes the device's BLAS
 * lacks (float16, bfloat16, integers) and for devices with neither CLBlast nor native
 * kernels. C[b] = alpha * op(A[b]) op(B[b]) + beta * C[b], row-major, accumulating in CT
 * (float for the 16-bit floats). One 16x16 tile of C per work-group; dimension 2 is the batch.
 */
#define TILE 16

typedef struct gemm_geom {
  long m, n, k, lda, ldb, ldc, stride_a, stride_b, stride_c, trans_a, trans_b;
} gemm_geom;

KERNEL_WG(TILE, TILE, 1, gemm_tiled)(
    BUF(a), BUF(b), BUF(c), gemm_geom g, CT alpha, CT beta) {
  LOCAL_ARRAY2(gemm_tiled, CT, ta, TILE, TILE + 1);
  LOCAL_ARRAY2(gemm_tiled, CT, tb, TILE, TILE + 1);
  long col = get_global_id(0), row = get_global_id(1), batch = get_global_id(2);
  int lx = get_local_id(0), ly = get_local_id(1);
  __global uchar *A = PTR(a), *B = PTR(b), *C = PTR(c);
  long a0 = batch * g.stride_a, b0 = batch * g.stride_b, c0 = batch * g.stride_c;
  CT acc = 0;
  for (long t = 0; t < g.k; t += TILE) {
    long ak = t + lx, bk = t + ly;
    ta[ly][lx] = (row < g.m && ak < g.k)
                     ? LOAD(A, a0 + (g.trans_a ? ak * g.lda + row : row * g.lda + ak))
                     : (CT)0;
    tb[ly][lx] = (col < g.n && bk < g.k)
                     ? LOAD(B, b0 + (g.trans_b ? col * g.ldb + bk : bk * g.ldb + col))
                     : (CT)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int l = 0; l < TILE; l++) acc += ta[ly][l] * tb[l][lx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < g.m && col < g.n) {
    long at = c0 + row * g.ldc + col;
    CT prev = beta != 0 ? LOAD(C, at) : (CT)0;
    STORE(C, at, alpha * acc + beta * prev);
  }
}
