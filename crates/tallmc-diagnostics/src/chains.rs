//! Input validation and the transforms the diagnostics share: stacking, splitting, rank
//! normalization, folding and quantile indicators (ArviZ's `_split_chains`, `_z_scale`,
//! `_z_fold`, `_quantile`), and the unchecked mean and variance of a slice that every
//! diagnostic builds on.

use crate::error::{Error, Result};

/// ArviZ's tolerance for "all values equal" (`np.finfo(float).resolution`).
pub(crate) const CONSTANT_RESOLUTION: f64 = 1e-15;

/// Fractional offset of the Blom rank transform (ArviZ `_backtransform_ranks`, c = 3/8).
const BLOM_OFFSET: f64 = 3.0 / 8.0;

/// Checks the chains (at least one, equal lengths, `min_draws` draws, all finite) and returns
/// (number of chains, draws per chain).
pub(crate) fn validate<C: AsRef<[f64]>>(
    chains: &[C], what: &'static str, min_draws: usize,
) -> Result<(usize, usize)> {
    let first = chains.first().ok_or(Error::NoChains)?.as_ref().len();
    for (chain, c) in chains.iter().enumerate() {
        let c = c.as_ref();
        if c.len() != first {
            return Err(Error::UnequalChains { chain, expected: first, found: c.len() });
        }
        if let Some(draw) = c.iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite { chain, draw, value: c[draw] });
        }
    }
    if first < min_draws {
        return Err(Error::TooFewDraws { what, found: first, min: min_draws });
    }
    Ok((chains.len(), first))
}

/// Checks that `prob` lies in the closed interval [0, 1].
pub(crate) fn check_prob(prob: f64) -> Result<()> {
    if (0.0..=1.0).contains(&prob) {
        Ok(())
    } else {
        Err(Error::invalid("prob", prob, "a probability in the closed interval [0, 1]"))
    }
}

/// A chains × draws array, row-major (one row per chain).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Matrix {
    pub(crate) data: Vec<f64>,
    pub(crate) chains: usize,
    pub(crate) draws: usize,
}

impl Matrix {
    /// Copies the chains into one array.
    pub(crate) fn stack<C: AsRef<[f64]>>(chains: &[C]) -> Self {
        let draws = chains.first().map_or(0, |c| c.as_ref().len());
        let mut data = Vec::with_capacity(chains.len() * draws);
        for c in chains {
            data.extend_from_slice(c.as_ref());
        }
        Self { data, chains: chains.len(), draws }
    }

    /// Splits every chain into its first and last ⌊n/2⌋ draws (the middle draw of an odd-length
    /// chain is dropped) and stacks the first halves of all chains, then the second halves, as
    /// ArviZ's `_split_chains` does: 2M chains of ⌊n/2⌋ draws.
    pub(crate) fn split(&self) -> Self {
        let half = self.draws / 2;
        let mut data = Vec::with_capacity(2 * self.chains * half);
        for c in 0..self.chains {
            data.extend_from_slice(&self.row(c)[..half]);
        }
        for c in 0..self.chains {
            data.extend_from_slice(&self.row(c)[self.draws - half..]);
        }
        Self { data, chains: 2 * self.chains, draws: half }
    }

    /// Chain `c`.
    pub(crate) fn row(&self, c: usize) -> &[f64] {
        &self.data[c * self.draws..(c + 1) * self.draws]
    }

    /// Iterator over the chains.
    pub(crate) fn rows(&self) -> impl Iterator<Item = &[f64]> {
        self.data.chunks_exact(self.draws.max(1)).take(self.chains)
    }

    /// The same shape with every value mapped through `f`.
    pub(crate) fn map(&self, f: impl Fn(f64) -> f64) -> Self {
        Self { data: self.data.iter().map(|&v| f(v)).collect(), ..*self }
    }

    /// Rank normalization (ArviZ `_z_scale`, Vehtari et al. 2021 eq. 14): with r the average
    /// rank of each value among all S values (ties share their mean rank),
    /// z = Φ⁻¹((r − 3/8) / (S − 3/4 + 1)).
    pub(crate) fn z_scale(&self) -> Self {
        let ranks = average_ranks(&self.data);
        let size = self.data.len() as f64;
        let denom = size - 2.0 * BLOM_OFFSET + 1.0;
        let data = ranks.into_iter().map(|r| normal_quantile((r - BLOM_OFFSET) / denom)).collect();
        Self { data, ..*self }
    }

    /// |x − median(x)| with the median over all values (the fold of ArviZ's tail R̂).
    pub(crate) fn fold(&self) -> Self {
        let mut sorted = self.data.clone();
        sorted.sort_by(f64::total_cmp);
        let med = median_sorted(&sorted);
        self.map(|v| (v - med).abs())
    }

    /// 1 where the value is ≤ `threshold`, else 0.
    pub(crate) fn indicator_le(&self, threshold: f64) -> Self {
        self.map(|v| if v <= threshold { 1.0 } else { 0.0 })
    }

    /// Mean over all values.
    pub(crate) fn mean(&self) -> f64 {
        mean_unchecked(&self.data)
    }

    /// Values sorted ascending.
    pub(crate) fn sorted(&self) -> Vec<f64> {
        let mut sorted = self.data.clone();
        sorted.sort_by(f64::total_cmp);
        sorted
    }
}

/// Mean of a non-empty slice (no validation).
pub(crate) fn mean_unchecked(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Variance with divisor n − `ddof` (two-pass, as `numpy.var`), no validation.
pub(crate) fn var_unchecked(x: &[f64], ddof: usize) -> f64 {
    let m = mean_unchecked(x);
    let ss: f64 = x.iter().map(|&v| (v - m) * (v - m)).sum();
    ss / (x.len() - ddof) as f64
}

/// Average ranks (1-based; tied values get the mean of their ranks), as
/// `scipy.stats.rankdata(method="average")`.
pub(crate) fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        // Ranks start+1 ..= end share their mean (start + 1 + end) / 2.
        let rank = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = rank;
        }
        start = end;
    }
    ranks
}

/// The standard normal quantile function Φ⁻¹(p) = −√2 erfc⁻¹(2p).
pub(crate) fn normal_quantile(p: f64) -> f64 {
    -std::f64::consts::SQRT_2 * statrs::function::erf::erfc_inv(2.0 * p)
}

/// Median of sorted values (mean of the two middle ones for an even count), as `np.median`.
pub(crate) fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 }
}

/// The type-7 quantile as ArviZ computes its thresholds (`scipy.stats.mstats.mquantiles` with
/// alphap = betap = 1): with a = n p + 1 − p, k = ⌊clip(a, 1, n − 1)⌋, γ = clip(a − k, 0, 1),
/// Q = (1 − γ) x₍ₖ₎ + γ x₍ₖ₊₁₎ (1-based order statistics). Equal to [`crate::quantile`] up to
/// rounding; kept separate so that ESS indicators use exactly ArviZ's threshold.
pub(crate) fn mquantile_sorted(sorted: &[f64], prob: f64) -> f64 {
    let n = sorted.len();
    if n == 1 {
        return sorted[0];
    }
    let nf = n as f64;
    let aleph = nf * prob + (1.0 - prob);
    let k = aleph.clamp(1.0, nf - 1.0).floor();
    let gamma = (aleph - k).clamp(0.0, 1.0);
    let k = k as usize;
    (1.0 - gamma) * sorted[k - 1] + gamma * sorted[k]
}

/// Python's `max(a, b)`: `a` unless `b > a` (so a NaN in `a` wins, a NaN in `b` loses).
pub(crate) fn py_max(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

/// Python's `min(a, b)`: `a` unless `b < a`.
pub(crate) fn py_min(a: f64, b: f64) -> f64 {
    if b < a { b } else { a }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_errors() {
        let none: [&[f64]; 0] = [];
        assert_eq!(validate(&none, "x", 4), Err(Error::NoChains));
        let a = [1.0, 2.0, 3.0, 4.0];
        let b = [1.0, 2.0, 3.0];
        assert_eq!(
            validate(&[&a[..], &b[..]], "x", 4),
            Err(Error::UnequalChains { chain: 1, expected: 4, found: 3 })
        );
        assert_eq!(
            validate(&[&b[..]], "ess", 4),
            Err(Error::TooFewDraws { what: "ess", found: 3, min: 4 })
        );
        let c = [1.0, f64::INFINITY, 0.0, 0.0];
        assert!(matches!(
            validate(&[&a[..], &c[..]], "x", 4),
            Err(Error::NonFinite { chain: 1, draw: 1, .. })
        ));
        assert_eq!(validate(&[&a[..], &a[..]], "x", 4), Ok((2, 4)));
    }

    #[test]
    fn split_drops_the_middle_draw() {
        let m = Matrix::stack(&[vec![1.0, 2.0, 3.0, 4.0, 5.0], vec![6.0, 7.0, 8.0, 9.0, 10.0]]);
        let s = m.split();
        assert_eq!((s.chains, s.draws), (4, 2));
        assert_eq!(s.data, vec![1.0, 2.0, 6.0, 7.0, 4.0, 5.0, 9.0, 10.0]);
    }

    #[test]
    fn ranks_average_ties() {
        assert_eq!(average_ranks(&[3.0, 1.0, 3.0, 2.0]), vec![3.5, 1.0, 3.5, 2.0]);
    }

    #[test]
    fn normal_quantile_matches_known_values() {
        assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-14);
        assert!((normal_quantile(0.5)).abs() < 1e-15);
        assert!((normal_quantile(1e-10) + 6.361_340_902_404_056).abs() < 1e-12);
    }

    #[test]
    fn mquantile_is_type_seven() {
        let x = [6.0, 7.0, 15.0, 36.0, 39.0, 40.0, 41.0, 42.0, 43.0, 47.0, 49.0];
        // scipy's mquantiles(x, [.25, .5, .75], alphap=1, betap=1)
        assert!((mquantile_sorted(&x, 0.25) - 25.5).abs() < 1e-12);
        assert!((mquantile_sorted(&x, 0.5) - 40.0).abs() < 1e-12);
        assert!((mquantile_sorted(&x, 0.75) - 42.5).abs() < 1e-12);
    }
}
