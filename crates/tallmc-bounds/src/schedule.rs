//! The confidence sampler's stopping schedule: when to look at the data and with what error.

use serde::Serialize;

use crate::{Error, Result};

/// Geometric look sizes and a summable error budget over looks (Bardenet, Doucet & Holmes 2014,
/// §2.2 and Fig. 3).
///
/// * **Sizes.** Look k = 1, 2, … is taken after t_k values: t₁ = min(N, `first_batch`) and
///   t_k = min(N, max(t_{k−1} + 1, ⌈γ t_{k−1}⌉)) — the sizes grow by the factor γ > 1 and always
///   by at least one value, so a decision takes at most ⌈log_γ(N / t₁)⌉ + 1 looks (and at most N).
/// * **Error budget.** Look k is tested at level δ_k = (p − 1) δ / (p k^p), p > 1. Since
///   Σ_{k≥1} k^{−p} ≤ 1 + ∫₁^∞ x^{−p} dx = p/(p − 1), Σ_k δ_k ≤ δ: by a union bound, the
///   probability that *any* look's concentration bound fails is at most δ, which is the
///   confidence sampler's guarantee (BDH 2014, eq. (11) and Lemma 3.1).
///
/// The paper uses p = 2 and γ = 2 (§4); the authors' public code uses γ = 1.5.
///
/// ```
/// use tallmc_bounds::Schedule;
/// let s = Schedule::new(100, 2.0, 2.0, 0.01)?;
/// let sizes: Vec<usize> = s.sizes(1_000).collect();
/// assert_eq!(sizes, vec![100, 200, 400, 800, 1_000]);
/// assert!((s.delta_at(1) - 0.005).abs() < 1e-15); // (p − 1) δ / (p · 1^p)
/// # Ok::<(), tallmc_bounds::Error>(())
/// ```
/// Serializable for output files; not deserializable, so that every schedule is validated.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Schedule {
    first_batch: usize,
    gamma: f64,
    p: f64,
    delta: f64,
}

impl Schedule {
    /// A validated schedule: `first_batch` ≥ 1, `gamma` > 1 finite, `p` > 1 finite,
    /// `delta` ∈ (0, 1).
    pub fn new(first_batch: usize, gamma: f64, p: f64, delta: f64) -> Result<Self> {
        if first_batch == 0 {
            return Err(Error::invalid("first_batch", first_batch, "an integer ≥ 1"));
        }
        if !(gamma.is_finite() && gamma > 1.0) {
            return Err(Error::invalid(
                "gamma",
                gamma,
                "a finite number > 1 (batch growth factor)",
            ));
        }
        if !(p.is_finite() && p > 1.0) {
            return Err(Error::invalid("p", p, "a finite number > 1 (error schedule exponent)"));
        }
        if !(delta > 0.0 && delta < 1.0) {
            return Err(Error::invalid("delta", delta, "a number in (0, 1)"));
        }
        Ok(Self { first_batch, gamma, p, delta })
    }

    /// Values drawn before the first look, t₁ (before capping at N).
    pub fn first_batch(&self) -> usize {
        self.first_batch
    }

    /// The growth factor γ.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// The exponent p of the error schedule.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// The total error budget δ.
    pub fn delta(&self) -> f64 {
        self.delta
    }

    /// t₁ = min(N, `first_batch`) for a population of `n` values.
    pub fn first_size(&self, n: usize) -> usize {
        self.first_batch.min(n)
    }

    /// t_k = min(N, max(t_{k−1} + 1, ⌈γ t_{k−1}⌉)) from t_{k−1} = `prev`, for a population of
    /// `n` values. Strictly larger than `prev` while `prev` < N.
    pub fn next_size(&self, prev: usize, n: usize) -> usize {
        // f64 → usize casts saturate, so a huge γ t just becomes N.
        let grown = (self.gamma * prev as f64).ceil() as usize;
        grown.max(prev.saturating_add(1)).min(n)
    }

    /// The sizes t₁ < t₂ < … < t_K = N of every look for a population of `n` values.
    pub fn sizes(&self, n: usize) -> impl Iterator<Item = usize> + '_ {
        let mut next = Some(self.first_size(n)).filter(|_| n > 0);
        std::iter::from_fn(move || {
            let t = next?;
            next = (t < n).then(|| self.next_size(t, n));
            Some(t)
        })
    }

    /// δ_k = (p − 1) δ / (p k^p) for look `k` ≥ 1 (look 0 is treated as look 1). May underflow to
    /// 0 for tiny δ and large k; use [`Schedule::ln_inv_delta_at`] for the bounds.
    pub fn delta_at(&self, k: usize) -> f64 {
        (-self.ln_inv_delta_at(k)).exp()
    }

    /// log(1/δ_k) = log(p / (p − 1)) + log(1/δ) + p log k, computed in log space so that δ as
    /// small as 1e-300 and any number of looks stay finite.
    pub fn ln_inv_delta_at(&self, k: usize) -> f64 {
        let k = k.max(1) as f64;
        (self.p / (self.p - 1.0)).ln() - self.delta.ln() + self.p * k.ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_grow_strictly_and_end_at_n() {
        for &(first, gamma, n) in &[
            (1, 1.0 + 1e-12, 50),
            (1, 2.0, 1),
            (2, 1.5, 1000),
            (100, 2.0, 100),
            (100, 2.0, 50),
            (7, 3.3, 100_000),
            (1, 1e300, 10),
        ] {
            let s = Schedule::new(first, gamma, 2.0, 0.1).unwrap();
            let sizes: Vec<usize> = s.sizes(n).collect();
            assert_eq!(*sizes.first().unwrap(), first.min(n));
            assert_eq!(*sizes.last().unwrap(), n);
            assert!(sizes.windows(2).all(|w| w[1] > w[0]), "{sizes:?}");
            for w in sizes.windows(2) {
                let want = ((gamma * w[0] as f64).ceil() as usize).max(w[0] + 1).min(n);
                assert_eq!(w[1], want);
            }
        }
        let s = Schedule::new(1, 2.0, 2.0, 0.1).unwrap();
        assert_eq!(s.sizes(0).count(), 0);
    }

    #[test]
    fn error_budget_sums_to_at_most_delta() {
        for &p in &[1.1, 1.5, 2.0, 3.0] {
            let s = Schedule::new(1, 2.0, p, 0.05).unwrap();
            let total: f64 = (1..200_000).map(|k| s.delta_at(k)).sum();
            assert!(total <= 0.05, "p = {p}: Σ δ_k = {total}");
            assert!((s.delta_at(1) - (p - 1.0) * 0.05 / p).abs() < 1e-15);
            assert!((s.delta_at(3) - (p - 1.0) * 0.05 / (p * 3f64.powf(p))).abs() < 1e-15);
        }
        let tiny = Schedule::new(1, 2.0, 2.0, 1e-300).unwrap();
        assert!(tiny.ln_inv_delta_at(1_000_000).is_finite());
        assert!(tiny.ln_inv_delta_at(1) > 690.0);
    }

    #[test]
    fn invalid_settings_are_named() {
        let e = Schedule::new(0, 2.0, 2.0, 0.1).unwrap_err().to_string();
        assert!(e.contains("first_batch"), "{e}");
        for (gamma, p, delta, name) in [
            (1.0, 2.0, 0.1, "gamma"),
            (f64::NAN, 2.0, 0.1, "gamma"),
            (f64::INFINITY, 2.0, 0.1, "gamma"),
            (2.0, 1.0, 0.1, "p"),
            (2.0, 0.5, 0.1, "p"),
            (2.0, 2.0, 0.0, "delta"),
            (2.0, 2.0, 1.0, "delta"),
            (2.0, 2.0, f64::NAN, "delta"),
        ] {
            let e = Schedule::new(1, gamma, p, delta).unwrap_err().to_string();
            assert!(e.contains(name), "{e}");
        }
    }
}
