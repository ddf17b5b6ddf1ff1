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

use rustfft::FftPlanner;
use rustfft::num_complex::Complex;

use crate::chains::validate;
use crate::error::Result;

/// Autocovariances γ̂(0), …, γ̂(n−1) of one chain, divisor n (see the [module docs](self)).
///
/// Matches ArviZ `autocov` to rounding. Cost: two FFTs of length ≥ 2n (2-3-5-smooth).
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
    Ok(mean_autocov(std::iter::once(x), x.len()))
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

/// Mean autocovariance over chains of equal length n ≥ 1: out[k] = (1/M) Σ_c γ̂_c(k).
///
/// Autocovariance is linear in the power spectrum, so the power spectra of all chains are
/// summed in the frequency domain and inverted once. Two real chains share one complex FFT:
/// with z = (a − ā) + i(b − b̄) zero-padded to length L and Z = FFT(z),
/// |A_k|² + |B_k|² = (|Z_k|² + |Z_{L−k}|²)/2. Cost for M chains: ⌈M/2⌉ + 1 FFTs of length
/// L ≥ 2n.
pub(crate) fn mean_autocov<'a>(mut chains: impl Iterator<Item = &'a [f64]>, n: usize) -> Vec<f64> {
    let len = fast_len((2 * n).max(2));
    let mut planner = FftPlanner::new();
    let forward = planner.plan_fft_forward(len);
    let inverse = planner.plan_fft_inverse(len);
    let scratch_len = forward.get_inplace_scratch_len().max(inverse.get_inplace_scratch_len());
    let mut scratch = vec![Complex::new(0.0, 0.0); scratch_len];
    let mut buffer = vec![Complex::new(0.0, 0.0); len];
    let mut power = vec![0.0; len];
    let mut count = 0usize;

    while let Some(a) = chains.next() {
        let b = chains.next();
        count += 1 + usize::from(b.is_some());
        debug_assert!(a.len() == n && b.is_none_or(|b| b.len() == n));
        let mean_a = a.iter().sum::<f64>() / n as f64;
        let mean_b = b.map_or(0.0, |b| b.iter().sum::<f64>() / n as f64);
        for (t, z) in buffer.iter_mut().enumerate() {
            *z = if t < n {
                Complex::new(a[t] - mean_a, b.map_or(0.0, |b| b[t] - mean_b))
            } else {
                Complex::new(0.0, 0.0)
            };
        }
        forward.process_with_scratch(&mut buffer, &mut scratch);
        for (k, p) in power.iter_mut().enumerate() {
            let mirror = buffer[(len - k) % len];
            *p += 0.5 * (buffer[k].norm_sqr() + mirror.norm_sqr());
        }
    }

    for (z, &p) in buffer.iter_mut().zip(&power) {
        *z = Complex::new(p, 0.0);
    }
    inverse.process_with_scratch(&mut buffer, &mut scratch);
    // rustfft does not normalize: the inverse carries a factor L.
    let scale = 1.0 / (len as f64 * n as f64 * count.max(1) as f64);
    buffer[..n].iter().map(|z| z.re * scale).collect()
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
    fn mean_over_chains_pairs_chains_correctly() {
        let chains: Vec<Vec<f64>> = (0..3)
            .map(|c| (0..17).map(|i| (((i + 5 * c) * 7919) % 31) as f64 * 0.1 + c as f64).collect())
            .collect();
        let mean = mean_autocov(chains.iter().map(Vec::as_slice), 17);
        let direct: Vec<f64> =
            (0..17).map(|k| chains.iter().map(|c| direct(c)[k]).sum::<f64>() / 3.0).collect();
        for (a, b) in mean.iter().zip(&direct) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
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
