//! Time bins for batch means: integrals over [i w, (i + 1) w), merged in pairs when full.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How the trajectory is cut into batches for the batch-means MCSE.
///
/// Time is cut into bins of equal width w, starting at w = `initial_bin_width`. When a
/// segment would end beyond `max_batches` · w, neighbouring bins are merged in pairs and w is
/// doubled (as often as needed), so memory stays at `max_batches` bins whatever the run length
/// and all bins but the last always have the same length. At the end of a run of length T
/// there are B = ⌈T/w⌉ batches with `max_batches`/2 < B ≤ `max_batches` (once T exceeds
/// `max_batches` · `initial_bin_width`), the last one possibly partial.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BatchConfig {
    /// Largest number of batches kept: an even number ≥ 4. Default 40, so that a run ends with
    /// 21 to 40 batches.
    pub max_batches: usize,
    /// Starting bin width, in trajectory time: a finite number > 0. Default 2⁻³⁰ ≈ 9.3·10⁻¹⁰,
    /// below any sensible batch length (doubling from it costs O(`max_batches`) per doubling,
    /// about 30 doublings per unit of time reached).
    pub initial_bin_width: f64,
}

impl Default for BatchConfig {
    fn default() -> Self {
        Self { max_batches: 40, initial_bin_width: INITIAL_BIN_WIDTH }
    }
}

/// Default starting bin width, 2⁻³⁰ (a power of two, so bin edges are exact multiples).
pub const INITIAL_BIN_WIDTH: f64 = 1.0 / (1u64 << 30) as f64;

impl BatchConfig {
    /// Checks `max_batches` (even, ≥ 4) and `initial_bin_width` (finite, > 0).
    pub fn validate(&self) -> Result<()> {
        if self.max_batches < 4 || !self.max_batches.is_multiple_of(2) {
            return Err(Error::invalid("max_batches", self.max_batches, "an even number >= 4"));
        }
        let w = self.initial_bin_width;
        if !(w.is_finite() && w > 0.0) {
            return Err(Error::invalid("initial_bin_width", w, "a finite number > 0"));
        }
        Ok(())
    }
}

/// `k` integrals per time bin; see [`BatchConfig`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TimeBins {
    k: usize,
    cap: usize,
    width: f64,
    /// `cap × k`, bin-major.
    sums: Vec<f64>,
    /// Index of the last bin that received a piece of positive length (`None` before any).
    last: Option<usize>,
}

impl TimeBins {
    /// Empty bins for `k` integrals (config validated by the caller).
    pub(crate) fn new(k: usize, config: &BatchConfig) -> Self {
        Self {
            k,
            cap: config.max_batches,
            width: config.initial_bin_width,
            sums: vec![0.0; config.max_batches * k],
            last: None,
        }
    }

    /// Current bin width w.
    pub(crate) fn width(&self) -> f64 {
        self.width
    }

    /// Splits the segment [t0, t0 + tau] (global time) at bin edges, merging bins first so that
    /// it fits, and calls `piece(a, h, bin)` for each part of positive length: the part covers
    /// segment-local times [a, a + h] and adds its integrals into `bin` (length k).
    pub(crate) fn add(&mut self, t0: f64, tau: f64, mut piece: impl FnMut(f64, f64, &mut [f64])) {
        let end = t0 + tau;
        while end > self.cap as f64 * self.width {
            self.merge();
        }
        let w = self.width;
        let last_bin = self.cap - 1;
        let i0 = ((t0 / w).floor() as usize).min(last_bin);
        let i1 = ((end / w).floor() as usize).min(last_bin);
        for i in i0..=i1 {
            let a = if i == i0 { 0.0 } else { i as f64 * w - t0 };
            let b = if i == i1 { tau } else { (i + 1) as f64 * w - t0 };
            if b > a {
                piece(a, b - a, &mut self.sums[i * self.k..(i + 1) * self.k]);
                self.last = Some(self.last.map_or(i, |l| l.max(i)));
            }
        }
    }

    /// Merges bins 2i and 2i + 1 into bin i and doubles the width.
    fn merge(&mut self) {
        let k = self.k;
        for i in 0..self.cap / 2 {
            for c in 0..k {
                self.sums[i * k + c] = self.sums[2 * i * k + c] + self.sums[(2 * i + 1) * k + c];
            }
        }
        self.sums[self.cap / 2 * k..].fill(0.0);
        self.width *= 2.0;
        self.last = self.last.map(|l| l / 2);
    }

    /// The batches of a run of total length `time`: (duration, integrals) for every bin up to
    /// the last one reached; the last duration is `time` − (B − 1) w (clamped at 0).
    pub(crate) fn batches(&self, time: f64) -> impl Iterator<Item = (f64, &[f64])> + '_ {
        let n = self.last.map_or(0, |l| l + 1);
        let w = self.width;
        self.sums.chunks_exact(self.k).take(n).enumerate().map(move |(i, s)| {
            let d = if i + 1 == n { (time - i as f64 * w).max(0.0) } else { w };
            (d, s)
        })
    }

    /// Number of batches B (bins reached).
    pub(crate) fn len(&self) -> usize {
        self.last.map_or(0, |l| l + 1)
    }
}

/// Sums of a batch-means variance: Σ_b t_b (m_b − μ)² over the batches of one chain (m_b the
/// batch mean of column `c`, t_b its duration) and the number of batches with t_b > 0.
pub(crate) fn weighted_squares(bins: &TimeBins, time: f64, c: usize, mu: f64) -> (f64, usize) {
    let mut ss = 0.0;
    let mut n = 0;
    for (d, s) in bins.batches(time) {
        if d > 0.0 {
            let m = s[c] / d;
            ss += d * (m - mu) * (m - mu);
            n += 1;
        }
    }
    (ss, n)
}

/// MCSE of a time average from pooled batch sums: √(σ̂²/T) with σ̂² = Σ t_b (m_b − μ)² / (B − 1);
/// NaN when B < 2.
pub(crate) fn mcse_from(ss: f64, batches: usize, time: f64) -> f64 {
    if batches < 2 || time <= 0.0 {
        return f64::NAN;
    }
    (ss / (batches - 1) as f64 / time).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(cap: usize, w: f64) -> BatchConfig {
        BatchConfig { max_batches: cap, initial_bin_width: w }
    }

    #[test]
    fn pieces_cover_the_segment_exactly_and_bins_merge() {
        let mut bins = TimeBins::new(1, &config(4, 1.0));
        // [0, 2.5]: bins 0, 1, 2 (half).
        let mut pieces = Vec::new();
        bins.add(0.0, 2.5, |a, h, s| {
            pieces.push((a, h));
            s[0] += h;
        });
        assert_eq!(pieces, vec![(0.0, 1.0), (1.0, 1.0), (2.0, 0.5)]);
        assert_eq!(bins.len(), 3);
        // [2.5, 6.5] needs 7 bins of width 1: merge to width 2, bins [0,2) [2,4) [4,6) [6,8).
        bins.add(2.5, 4.0, |_, h, s| s[0] += h);
        assert_eq!(bins.width(), 2.0);
        let b: Vec<(f64, f64)> = bins.batches(6.5).map(|(d, s)| (d, s[0])).collect();
        assert_eq!(b, vec![(2.0, 2.0), (2.0, 2.0), (2.0, 2.0), (0.5, 0.5)]);
        // Ending exactly on an edge does not open an empty bin.
        let mut bins = TimeBins::new(1, &config(4, 1.0));
        bins.add(0.0, 2.0, |_, h, s| s[0] += h);
        assert_eq!(bins.len(), 2);
        assert!(config(5, 1.0).validate().is_err());
        assert!(config(2, 1.0).validate().is_err());
        assert!(config(4, 0.0).validate().is_err());
        assert!(config(4, f64::NAN).validate().is_err());
    }

    #[test]
    fn weighted_batch_means_reduce_to_the_textbook_formula() {
        // Four batches of length 1 with means 1, 2, 3, 4: s² = 5/3, MCSE = √(s²/4).
        let mut bins = TimeBins::new(1, &config(4, 1.0));
        for (i, m) in [1.0, 2.0, 3.0, 4.0].into_iter().enumerate() {
            bins.add(i as f64, 1.0, |_, h, s| s[0] += m * h);
        }
        let (ss, n) = weighted_squares(&bins, 4.0, 0, 2.5);
        assert_eq!(n, 4);
        let se = mcse_from(ss, n, 4.0);
        assert!((se - (5.0f64 / 3.0 / 4.0).sqrt()).abs() < 1e-15);
        assert!(mcse_from(ss, 1, 4.0).is_nan());
    }
}
