//! Autocovariance and autocorrelation at every lag, by FFT.
//!
//! For draws x₀, …, x_{n−1} with mean x̄, the autocovariance at lag k is
//!
//! ```text
//! γ̂(k) = (1/n) Σ_{t=0}^{n−1−k} (x_t − x̄)(x_{t+k} − x̄),   k = 0, …, n − 1
//! ```
//!
//! with divisor n at every lag (the biased, positive semi-definite estimator), and the
//! autocorrelation is ρ̂(k) = γ̂(k)/γ̂(0). These are ArviZ's `autocov` and `autocorr`
//! (`arviz.stats.stats_utils`). The sum is a circular autocorrelation of the centred draws
//! zero-padded to length ≥ 2n, computed in O(n log n) by FFT (Wiener–Khinchin): the inverse
//! transform of |FFT(x − x̄)|².

use std::sync::Arc;

use rustfft::num_complex::Complex;
use rustfft::{Fft, FftPlanner};

use crate::chains::validate;
use crate::error::Result;

/// Autocovariances γ̂(0), …, γ̂(n−1) of one chain, divisor n (see the [module docs](self)).
///
/// Matches ArviZ `autocov` to rounding. Cost: two FFTs of length ≥ 2n.
///
/// # Errors
/// An empty chain ([`Error::TooFewDraws`](crate::Error::TooFewDraws)) or a non-finite draw.
///
/// # Example
/// ```
/// let g = tallmc_diagnostics::autocov(&[1.0, 2.0, 3.0, 4.0]).unwrap();
/// assert!((g[0] - 1.25).abs() < 1e-12); // the variance with divisor n
/// assert!((g[3] - (-1.5 * 1.5) / 4.0).abs() < 1e-12);
/// ```
pub fn autocov(x: &[f64]) -> Result<Vec<f64>> {
    validate(&[x], "autocov", 1)?;
    let mut out = vec![0.0; x.len()];
    AutocovPlan::new(x.len()).accumulate(x, 1.0, &mut out);
    Ok(out)
}

/// Autocorrelations ρ̂(k) = γ̂(k)/γ̂(0), k = 0, …, n−1, of one chain (ArviZ `autocorr`).
///
/// A constant chain has γ̂(0) = 0 (up to the rounding of its mean); where γ̂(0) is exactly 0,
/// every ρ̂(k) is NaN, as in ArviZ.
///
/// # Errors
/// As [`autocov`].
///
/// # Example
/// ```
/// let r = tallmc_diagnostics::autocorr(&[1.0, -1.0, 1.0, -1.0]).unwrap();
/// assert_eq!(r[0], 1.0);
/// assert!((r[1] + 0.75).abs() < 1e-12);
/// ```
pub fn autocorr(x: &[f64]) -> Result<Vec<f64>> {
    let mut g = autocov(x)?;
    let g0 = g[0];
    for v in &mut g {
        *v /= g0;
    }
    Ok(g)
}

/// FFT plans and scratch for autocovariances of chains of one length, reused across chains.
pub(crate) struct AutocovPlan {
    n: usize,
    forward: Arc<dyn Fft<f64>>,
    inverse: Arc<dyn Fft<f64>>,
    buffer: Vec<Complex<f64>>,
    scratch: Vec<Complex<f64>>,
}

impl AutocovPlan {
    /// Plans for chains of `n` draws (FFT length: the smallest 2-3-5-smooth number ≥ 2n,
    /// like scipy's `next_fast_len`).
    pub(crate) fn new(n: usize) -> Self {
        let len = fast_len((2 * n).max(2));
        let mut planner = FftPlanner::new();
        let forward = planner.plan_fft_forward(len);
        let inverse = planner.plan_fft_inverse(len);
        let scratch_len = forward.get_inplace_scratch_len().max(inverse.get_inplace_scratch_len());
        Self {
            n,
            forward,
            inverse,
            buffer: vec![Complex::new(0.0, 0.0); len],
            scratch: vec![Complex::new(0.0, 0.0); scratch_len],
        }
    }

    /// Adds `weight` × γ̂(k) of `x` (length n) to `out[k]` for k < n.
    pub(crate) fn accumulate(&mut self, x: &[f64], weight: f64, out: &mut [f64]) {
        debug_assert_eq!(x.len(), self.n);
        debug_assert_eq!(out.len(), self.n);
        let n = self.n;
        let mean = x.iter().sum::<f64>() / n as f64;
        for (b, &v) in self.buffer.iter_mut().zip(x) {
            *b = Complex::new(v - mean, 0.0);
        }
        for b in &mut self.buffer[n..] {
            *b = Complex::new(0.0, 0.0);
        }
        self.forward.process_with_scratch(&mut self.buffer, &mut self.scratch);
        for b in &mut self.buffer {
            *b = Complex::new(b.norm_sqr(), 0.0);
        }
        self.inverse.process_with_scratch(&mut self.buffer, &mut self.scratch);
        // rustfft does not normalize: the inverse carries a factor len.
        let scale = weight / (self.buffer.len() as f64 * n as f64);
        for (o, b) in out.iter_mut().zip(&self.buffer) {
            *o += b.re * scale;
        }
    }
}

/// The smallest m ≥ `min` whose only prime factors are 2, 3 and 5 (fast for rustfft).
fn fast_len(min: usize) -> usize {
    (min..)
        .find(|&n| {
            let mut m = n;
            for p in [2, 3, 5] {
                while m % p == 0 {
                    m /= p;
                }
            }
            m == 1
        })
        .unwrap_or(min)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn direct(x: &[f64]) -> Vec<f64> {
        let n = x.len();
        let m = x.iter().sum::<f64>() / n as f64;
        (0..n)
            .map(|k| (0..n - k).map(|t| (x[t] - m) * (x[t + k] - m)).sum::<f64>() / n as f64)
            .collect()
    }

    #[test]
    fn fft_matches_direct_sum() {
        for n in [1usize, 2, 3, 7, 64, 100, 257] {
            let x: Vec<f64> = (0..n).map(|i| ((i * 7919) % 97) as f64 / 13.0 - 3.0).collect();
            let a = autocov(&x).unwrap();
            let b = direct(&x);
            for (u, v) in a.iter().zip(&b) {
                assert!((u - v).abs() < 1e-12 * b[0].abs().max(1.0), "n={n}: {u} vs {v}");
            }
        }
    }

    #[test]
    fn fast_lengths_are_smooth() {
        assert_eq!(fast_len(2), 2);
        assert_eq!(fast_len(7), 8);
        assert_eq!(fast_len(14), 15);
        assert_eq!(fast_len(100_000), 100_000);
        assert_eq!(fast_len(200_002), 202_500);
    }

    #[test]
    fn constant_chain_has_nan_autocorrelation() {
        let r = autocorr(&[2.0; 5]).unwrap();
        assert!(r.iter().all(|v| v.is_nan()));
    }

    #[test]
    fn bad_input() {
        assert!(autocov(&[]).is_err());
        assert!(autocov(&[1.0, f64::NAN]).is_err());
    }
}
