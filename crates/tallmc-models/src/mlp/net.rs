//! One datum through the network: the forward pass (log-softmax by a stable log-sum-exp) and
//! back-propagation, on caller-owned stack scratch.

use super::{MAX_CLASSES, MAX_HIDDEN, MlpShape};

/// θ split into its four blocks (see [`MlpShape`] for the layout).
#[derive(Clone, Copy)]
pub(super) struct Params<'a> {
    /// W₁, h × p row-major: unit u's input weights are `w1[u·p .. (u+1)·p]`.
    w1: &'a [f64],
    /// b₁, h values.
    b1: &'a [f64],
    /// W₂, K × h row-major: class k's weights are `w2[k·h .. (k+1)·h]`.
    w2: &'a [f64],
    /// b₂, K values.
    b2: &'a [f64],
}

impl<'a> Params<'a> {
    /// Splits θ (length [`MlpShape::dim`]) into its blocks.
    #[inline]
    pub(super) fn new(shape: &MlpShape, theta: &'a [f64]) -> Self {
        let (w1, rest) = theta.split_at(shape.hidden * shape.inputs);
        let (b1, rest) = rest.split_at(shape.hidden);
        let (w2, b2) = rest.split_at(shape.classes * shape.hidden);
        Self { w1, b1, w2, b2: &b2[..shape.classes] }
    }
}

/// Per-datum work space, on the stack of a batch call and reused for every datum of the batch
/// (no allocation; 1.5 KB, zeroed once per call).
pub(super) struct Scratch {
    /// Hidden activations z_u = tanh(a_u).
    z: [f64; MAX_HIDDEN],
    /// Back-propagated ∂ℓ/∂a_u.
    ga: [f64; MAX_HIDDEN],
    /// Logits o_k, then e^{o_k − max o}.
    o: [f64; MAX_CLASSES],
    /// ∂ℓ/∂o_k = 1{k = y} − softmax_k.
    go: [f64; MAX_CLASSES],
}

impl Scratch {
    pub(super) fn new() -> Self {
        Self {
            z: [0.0; MAX_HIDDEN],
            ga: [0.0; MAX_HIDDEN],
            o: [0.0; MAX_CLASSES],
            go: [0.0; MAX_CLASSES],
        }
    }

    /// The logits written by [`logits`] (before [`log_softmax`] overwrites them).
    pub(super) fn logits(&self) -> &[f64] {
        &self.o
    }
}

/// aᵀb with four independent accumulators.
#[inline(always)]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    crate::data::dot4(a, b)
}

/// Writes the logits o = W₂ tanh(W₁x + b₁) + b₂ into `s.o[..K]` (and z into `s.z[..h]`).
#[inline]
pub(super) fn logits(shape: &MlpShape, p: &Params<'_>, x: &[f64], s: &mut Scratch) {
    let (inputs, h, k) = (shape.inputs, shape.hidden, shape.classes);
    for u in 0..h {
        let a = p.b1[u] + dot(&p.w1[u * inputs..(u + 1) * inputs], x);
        s.z[u] = a.tanh();
    }
    for c in 0..k {
        s.o[c] = p.b2[c] + dot(&p.w2[c * h..(c + 1) * h], &s.z[..h]);
    }
}

/// ℓ = log softmax(o)_y, computed as (o_y − m) − log1p(Σ_{k ≠ k*} e^{o_k − m}) with
/// m = o_{k*} = max_k o_k, so it is finite for any finite logits and keeps its relative accuracy
/// when the datum is classified confidently (ℓ ≈ −Σ_{k≠y} e^{o_k − o_y}). Leaves e^{o_k − m} in
/// `s.o` and, when `grad` is set, ∂ℓ/∂o_k = 1{k = y} − softmax_k in `s.go`, with the y entry
/// computed as Σ_{k≠y} e^{o_k − m} / Σ_k e^{o_k − m} (no cancellation).
#[inline]
pub(super) fn log_softmax(k: usize, y: usize, s: &mut Scratch, grad: bool) -> f64 {
    let mut top = 0;
    for c in 1..k {
        if s.o[c] > s.o[top] {
            top = c;
        }
    }
    let m = s.o[top];
    let oy = s.o[y];
    let mut rest = 0.0;
    for c in 0..k {
        let e = (s.o[c] - m).exp();
        s.o[c] = e;
        if c != top {
            rest += e;
        }
    }
    let ll = (oy - m) - rest.ln_1p();
    if grad {
        let total = 1.0 + rest;
        let mut others = 0.0;
        for c in 0..k {
            if c != y {
                others += s.o[c];
                s.go[c] = -s.o[c] / total;
            }
        }
        s.go[y] = others / total;
    }
    ll
}

/// ℓ_i for input `x` and label `y`.
#[inline]
pub(super) fn value(shape: &MlpShape, p: &Params<'_>, x: &[f64], y: usize, s: &mut Scratch) -> f64 {
    logits(shape, p, x, s);
    log_softmax(shape.classes, y, s, false)
}

/// ℓ_i, and **adds** ∇ℓ_i into `grad` (length [`MlpShape::dim`]) by back-propagation:
///
/// ```text
/// ∂ℓ/∂o_k = 1{k = y} − softmax_k,   ∂ℓ/∂b₂_k = ∂ℓ/∂o_k,   ∂ℓ/∂W₂_ku = ∂ℓ/∂o_k · z_u,
/// ∂ℓ/∂a_u = (1 − z_u²) Σ_k ∂ℓ/∂o_k W₂_ku,   ∂ℓ/∂b₁_u = ∂ℓ/∂a_u,   ∂ℓ/∂W₁_uj = ∂ℓ/∂a_u · x_j.
/// ```
#[inline]
pub(super) fn value_grad(
    shape: &MlpShape, p: &Params<'_>, x: &[f64], y: usize, s: &mut Scratch, grad: &mut [f64],
) -> f64 {
    let (inputs, h, k) = (shape.inputs, shape.hidden, shape.classes);
    logits(shape, p, x, s);
    let ll = log_softmax(k, y, s, true);
    for u in 0..h {
        let mut g = 0.0;
        for c in 0..k {
            g += s.go[c] * p.w2[c * h + u];
        }
        s.ga[u] = g * (1.0 - s.z[u] * s.z[u]);
    }
    let (g_w1, rest) = grad.split_at_mut(h * inputs);
    let (g_b1, rest) = rest.split_at_mut(h);
    let (g_w2, g_b2) = rest.split_at_mut(k * h);
    for u in 0..h {
        let ga = s.ga[u];
        g_b1[u] += ga;
        for (g, xj) in g_w1[u * inputs..(u + 1) * inputs].iter_mut().zip(x) {
            *g += ga * xj;
        }
    }
    for c in 0..k {
        let go = s.go[c];
        g_b2[c] += go;
        for (g, z) in g_w2[c * h..(c + 1) * h].iter_mut().zip(&s.z[..h]) {
            *g += go * z;
        }
    }
    ll
}
