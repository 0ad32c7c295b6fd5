/*
 * The fused cells of the recurrent layers: the gate nonlinearities and the state update of one
 * time step, after the two matrix products (nn.LSTM, nn.GRU, nn.LSTMCell and nn.GRUCell call
 * them on every device but the CPU). Operands are contiguous: gates [batch, G * hidden] (G = 4
 * for LSTM in the order input, forget, cell, output; 3 for GRU: reset, update, new), states
 * [batch, hidden], biases [G * hidden] or none. A work-item per state element; math in CT
 * (float for the half types), as CUDA computes in its accumulate type.
 */

/* The pointwise ops' own sigmoid and tanh (pointwise_math.cl, built before this file). */
#define sigmoid_of(x) PW_FLOAT_sigmoid(CT, x, , , , )
#define tanh_of(x) PW_FLOAT_tanh(CT, x, , , , )

/* Gate k of element j of the row at `row`: input and hidden parts, plus both biases. */
#define INPUT_GATE(k) LOAD(PTR(ig), row + (k)*hidden + j)
#define HIDDEN_GATE(k) LOAD(PTR(hg), row + (k)*hidden + j)
#define BIAS(buf, k) (has_bias ? LOAD(PTR(buf), (k)*hidden + j) : (CT)0)
#define GATE(k) (INPUT_GATE(k) + HIDDEN_GATE(k) + BIAS(ib, k) + BIAS(hb, k))

/* cy = f * cx + i * g; hy = o * tanh(cy); the activated gates i, f, g, o kept for backward. */
KERNEL(rnn_lstm_cell)(BUF(ig), BUF(hg), BUF(ib), BUF(hb), BUF(cx), BUF(hy), BUF(cy),
                      BUF(ws), long batch, long hidden, int has_bias) {
  long e = get_global_id(0);
  if (e >= batch * hidden) return;
  long b = e / hidden, j = e - b * hidden, row = b * 4 * hidden;
  CT in = sigmoid_of(GATE(0)), forget = sigmoid_of(GATE(1));
  CT cell = tanh_of(GATE(2)), out = sigmoid_of(GATE(3));
  CT c = forget * LOAD(PTR(cx), e) + in * cell;
  STORE(PTR(cy), e, c);
  STORE(PTR(hy), e, out * tanh_of(c));
  STORE(PTR(ws), row + j, in);
  STORE(PTR(ws), row + hidden + j, forget);
  STORE(PTR(ws), row + 2 * hidden + j, cell);
  STORE(PTR(ws), row + 3 * hidden + j, out);
}

/* Gradients of the four pre-activations and of cx from those of hy and cy (each may be absent:
 * zero). */
KERNEL(rnn_lstm_cell_backward)(BUF(ghy), BUF(gcy), BUF(cx), BUF(cy), BUF(ws), BUF(gg),
                               BUF(gcx), long batch, long hidden, int has_ghy, int has_gcy) {
  long e = get_global_id(0);
  if (e >= batch * hidden) return;
  long b = e / hidden, j = e - b * hidden, row = b * 4 * hidden;
  CT in = LOAD(PTR(ws), row + j), forget = LOAD(PTR(ws), row + hidden + j);
  CT cell = LOAD(PTR(ws), row + 2 * hidden + j), out = LOAD(PTR(ws), row + 3 * hidden + j);
  CT go = has_ghy ? LOAD(PTR(ghy), e) : (CT)0, gc = has_gcy ? LOAD(PTR(gcy), e) : (CT)0;
  CT tanh_c = tanh_of(LOAD(PTR(cy), e));
  CT grad_c = go * out * ((CT)1 - tanh_c * tanh_c) + gc; /* of cy, both paths */
  STORE(PTR(gg), row + j, grad_c * cell * ((CT)1 - in) * in);
  STORE(PTR(gg), row + hidden + j, grad_c * LOAD(PTR(cx), e) * ((CT)1 - forget) * forget);
  STORE(PTR(gg), row + 2 * hidden + j, grad_c * in * ((CT)1 - cell * cell));
  STORE(PTR(gg), row + 3 * hidden + j, go * tanh_c * ((CT)1 - out) * out);
  STORE(PTR(gcx), e, grad_c * forget);
}

/* r = s(ir + hr), z = s(iz + hz), n = tanh(in + r * hn), hy = n + z * (hx - n) (biases added
 * to each part); kept for backward: r, z, n, hx and hn with its bias. */
KERNEL(rnn_gru_cell)(BUF(ig), BUF(hg), BUF(ib), BUF(hb), BUF(hx), BUF(hy), BUF(ws),
                     long batch, long hidden, int has_bias) {
  long e = get_global_id(0);
  if (e >= batch * hidden) return;
  long b = e / hidden, j = e - b * hidden, row = b * 3 * hidden, kept = b * 5 * hidden + j;
  CT reset = sigmoid_of(GATE(0)), update = sigmoid_of(GATE(1));
  CT hidden_new = HIDDEN_GATE(2) + BIAS(hb, 2);
  CT n = tanh_of(INPUT_GATE(2) + BIAS(ib, 2) + reset * hidden_new);
  CT h = LOAD(PTR(hx), e);
  STORE(PTR(hy), e, n + update * (h - n));
  STORE(PTR(ws), kept, reset);
  STORE(PTR(ws), kept + hidden, update);
  STORE(PTR(ws), kept + 2 * hidden, n);
  STORE(PTR(ws), kept + 3 * hidden, h);
  STORE(PTR(ws), kept + 4 * hidden, hidden_new);
}

/* Gradients of the input and hidden pre-activations and of hx from that of hy. */
KERNEL(rnn_gru_cell_backward)(BUF(ghy), BUF(ws), BUF(gi), BUF(gh), BUF(ghx), long batch,
                              long hidden) {
  long e = get_global_id(0);
  if (e >= batch * hidden) return;
  long b = e / hidden, j = e - b * hidden, row = b * 3 * hidden + j, kept = b * 5 * hidden + j;
  CT reset = LOAD(PTR(ws), kept), update = LOAD(PTR(ws), kept + hidden);
  CT n = LOAD(PTR(ws), kept + 2 * hidden), h = LOAD(PTR(ws), kept + 3 * hidden);
  CT hidden_new = LOAD(PTR(ws), kept + 4 * hidden);
  CT go = LOAD(PTR(ghy), e);
  CT grad_update = go * (h - n) * ((CT)1 - update) * update;
  CT grad_n = go * ((CT)1 - update) * ((CT)1 - n * n); /* of n's pre-activation */
  CT grad_reset = grad_n * hidden_new * ((CT)1 - reset) * reset;
  STORE(PTR(gi), row, grad_reset);
  STORE(PTR(gi), row + hidden, grad_update);
  STORE(PTR(gi), row + 2 * hidden, grad_n);
  STORE(PTR(gh), row, grad_reset);
  STORE(PTR(gh), row + hidden, grad_update);
  STORE(PTR(gh), row + 2 * hidden, grad_n * reset);
  STORE(PTR(ghx), e, go * update);
}
