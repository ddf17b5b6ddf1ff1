//! The rows of a linear-predictor model in whitened coordinates, precomputed once so that a
//! per-datum gradient in z costs O(d) instead of O(d²) (issue 29).
//!
//! For terms of the rank-one form ℓ_i(θ) = φ_i(x_iᵀθ) ([`LinearPredictor`]) and θ = θ* + Lz
//! ([`WhiteningFrame`]):
//!
//! ```text
//! η_i = x_iᵀθ = x_iᵀθ* + (Lᵀx_i)ᵀz = η*_i + w_iᵀz,      w_i = Lᵀx_i,
//! ℓ̃_i(z) = φ_i(η_i),     ∇_z ℓ̃_i(z) = φ_i′(η_i) w_i.
//! ```
//!
//! So with the whitened rows w_i and the predictors at the centre η*_i stored, a datum's term
//! and gradient in z need one dot product, one call of φ_i, φ_i′ and one scaled row: O(d),
//! like the model's own gradient in θ. Without them, [`InFrame`](super::InFrame) maps each
//! per-datum gradient with Lᵀ (O(d²) per datum) and each point z to θ (O(d²) per call), which
//! on a 1,000 × 20 logistic regression made whitened SBPS 2.4× and whitened lipSBPS 2.8×
//! slower per effective sample than in θ although they needed fewer evaluations.
//!
//! **Cost.** Set-up: one pass over the rows, O(N d²) arithmetic (each row mapped by Lᵀ) and
//! N linear predictors at θ*; no likelihood or gradient is evaluated, so it counts none.
//! Memory: N(d + 1) numbers, shared by every chain; [`Whitened::precompute_rows`] builds
//! them only within [`FRAME_ROWS_BYTES`].
//!
//! [`Whitened::precompute_rows`]: super::Whitened::precompute_rows

use tallmc_core::{Error, LinearPredictor, Result, WhiteningFrame};

use super::common::dot;

/// The largest memory [`Whitened::precompute_rows`](super::Whitened::precompute_rows) gives
/// the whitened rows (8(d + 1) bytes per row): 1 GiB, e.g. 10⁶ rows × 133 coordinates.
pub const FRAME_ROWS_BYTES: usize = 1 << 30;

/// Rows per block of the set-up pass and of a gradient call.
const BLOCK: usize = 64;

/// `out` = w_i = Lᵀx_i, the row of data point `datum` in the coordinates of `frame`, with `x`
/// (length d) as scratch for x_i. O(d²).
pub(super) fn whitened_row<M: LinearPredictor + ?Sized>(
    model: &M, frame: &WhiteningFrame, datum: u32, x: &mut [f64], out: &mut [f64],
) {
    x.fill(0.0);
    model.add_weighted_rows(&[datum], &[1.0], x);
    frame.gradient_to_coordinates(x, out);
}

/// The whitened rows w_i = Lᵀx_i and the predictors η*_i = x_iᵀθ* of a linear-predictor
/// model (module docs).
#[derive(Debug, Clone)]
pub struct FrameRows {
    dim: usize,
    rows: Vec<f64>,
    centre_predictors: Vec<f64>,
}

impl FrameRows {
    /// The rows of `model` in the coordinates of `frame`: one pass over the rows, O(N d²).
    ///
    /// # Errors
    /// A frame whose dimension is not the model's, a model without data, a model whose rows are
    /// not all in this process (its rows are served from elsewhere), or a row or predictor that
    /// is not finite.
    pub fn new(model: &dyn LinearPredictor, frame: &WhiteningFrame) -> Result<Self> {
        let (n, d) = (model.num_terms(), model.dim());
        if frame.dim() != d {
            return Err(Error::dimension(
                "whitening frame (the model's dimension)",
                d,
                frame.dim(),
            ));
        }
        if n == 0 {
            return Err(Error::invalid(
                "whitened rows",
                "a model with no data",
                "at least one data point",
            ));
        }
        if model.row_service().is_some() || model.shard_passes().is_some() {
            return Err(Error::invalid(
                "whitened rows",
                "a model whose rows are not all in this process",
                "a model whose rows are all here",
            ));
        }
        let num_terms = u32::try_from(n).map_err(|_| {
            Error::invalid("whitened rows", format!("{n} data points"), "at most 2³² − 1")
        })?;
        let mut rows = vec![0.0; n * d];
        let mut centre_predictors = vec![0.0; n];
        let mut x = vec![0.0; d];
        let mut idx = [0u32; BLOCK];
        for start in (0..num_terms).step_by(BLOCK) {
            let end = (start + BLOCK as u32).min(num_terms);
            let block = &mut idx[..(end - start) as usize];
            for (k, i) in block.iter_mut().zip(start..end) {
                *k = i;
            }
            let lo = start as usize;
            model.linear_predictors(
                frame.center(),
                block,
                &mut centre_predictors[lo..lo + block.len()],
            );
            for &i in block.iter() {
                let i_row = i as usize * d..(i as usize + 1) * d;
                whitened_row(model, frame, i, &mut x, &mut rows[i_row]);
            }
        }
        if let Some(i) = rows.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(
                "whitened rows",
                format!("a non-finite entry in the row of data point {}", i / d),
                "finite rows",
            ));
        }
        if let Some(i) = centre_predictors.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(
                "whitened rows",
                format!("a non-finite predictor x_iᵀθ* at data point {i}"),
                "finite predictors at the frame's centre",
            ));
        }
        Ok(Self { dim: d, rows, centre_predictors })
    }

    /// Number N of rows.
    pub fn num_terms(&self) -> usize {
        self.centre_predictors.len()
    }

    /// Dimension d.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Bytes held: 8 N (d + 1).
    pub fn bytes(&self) -> usize {
        8 * (self.rows.len() + self.centre_predictors.len())
    }

    /// w_i = Lᵀx_i.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.rows[i * self.dim..(i + 1) * self.dim]
    }

    /// **Overwrites** `out[k]` with ℓ_i(θ* + Lz) and row k of `grads` with its gradient in z,
    /// φ_i′(η_i) w_i, at i = `indices[k]` (module docs). `model` must be the model the rows were
    /// built from. O(d) per index, one term and one gradient evaluation each (counted by the
    /// caller, as for [`TermGradients::log_terms_grads`](tallmc_core::TermGradients)).
    pub fn log_terms_grads(
        &self, model: &dyn LinearPredictor, z: &[f64], indices: &[u32], out: &mut [f64],
        grads: &mut [f64],
    ) {
        let d = self.dim;
        let (mut eta, mut d1, mut d2) = ([0.0; BLOCK], [0.0; BLOCK], [0.0; BLOCK]);
        for (c, idx) in indices.chunks(BLOCK).enumerate() {
            let (lo, k) = (c * BLOCK, idx.len());
            for (e, &i) in eta[..k].iter_mut().zip(idx) {
                let i = i as usize;
                *e = self.centre_predictors[i] + dot(self.row(i), z);
            }
            model.predictor_derivatives(
                idx,
                &eta[..k],
                &mut out[lo..lo + k],
                &mut d1[..k],
                &mut d2[..k],
            );
            let block = grads[lo * d..(lo + k) * d].chunks_exact_mut(d);
            for ((g, &i), &s) in block.zip(idx).zip(&d1[..k]) {
                for (gj, wj) in g.iter_mut().zip(self.row(i as usize)) {
                    *gj = s * wj;
                }
            }
        }
    }
}
