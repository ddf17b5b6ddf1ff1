//! Auditing a mean test: how often does it decide differently from the exact test?
//!
//! [`Audited`] wraps a test. After the wrapped test decides, it draws the rest of the population
//! and computes the exact decision on the same values — the same u, the same proposal — and
//! counts disagreements. The [`Decision`] it returns is the wrapped test's, including the number
//! of values *it* used, so a kernel's cost accounting is unchanged; the audit's own evaluations
//! are diagnostics and are reported separately ([`AuditCounts::audit_values`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rand::Rng;
use tallmc_bounds::{Decision, MeanTest, Population, Result};

/// Level of [`max_wrong_decisions`]: the probability that a test keeping its guarantee is
/// judged to break it.
pub const WRONG_DECISIONS_LEVEL: f64 = 1e-6;

/// The largest count of wrong decisions compatible, at level [`WRONG_DECISIONS_LEVEL`], with
/// each of `n` decisions being wrong with probability at most `p` given the past: such a count
/// is dominated by Binomial(n, p), and Bernstein's inequality
/// P(X ≥ np + x) ≤ exp(−x²/(2(np(1 − p) + x/3))) gives x. A count above it shows that the error
/// rate exceeds `p`; a count at or below it is compatible with a rate ≤ `p`.
pub fn max_wrong_decisions(n: u64, p: f64) -> f64 {
    let (mean, var, l) = (n as f64 * p, n as f64 * p * (1.0 - p), -WRONG_DECISIONS_LEVEL.ln());
    // x² = 2l(var + x/3)  ⇒  x = (2l/3 + √((2l/3)² + 8 l var)) / 2.
    let b = 2.0 * l / 3.0;
    mean + (b + (b * b + 8.0 * l * var).sqrt()) / 2.0
}

/// Shared counters of an audit (one per experiment; chains may share them).
#[derive(Debug, Default)]
pub struct AuditCounts {
    decisions: AtomicU64,
    wrong: AtomicU64,
    used: AtomicU64,
    population: AtomicU64,
    audit_values: AtomicU64,
}

impl AuditCounts {
    /// Fresh counters.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Decisions audited.
    pub fn decisions(&self) -> u64 {
        self.decisions.load(Ordering::Relaxed)
    }

    /// Decisions that differed from the exact test's.
    pub fn wrong(&self) -> u64 {
        self.wrong.load(Ordering::Relaxed)
    }

    /// Fraction of decisions that differed from the exact test's.
    pub fn wrong_fraction(&self) -> f64 {
        self.wrong() as f64 / self.decisions().max(1) as f64
    }

    /// Mean fraction of the population the wrapped test used per decision.
    pub fn mean_data_fraction(&self) -> f64 {
        self.used.load(Ordering::Relaxed) as f64
            / self.population.load(Ordering::Relaxed).max(1) as f64
    }

    /// Extra values drawn by the audit itself (not part of the method's cost).
    pub fn audit_values(&self) -> u64 {
        self.audit_values.load(Ordering::Relaxed)
    }
}

/// A mean test whose decisions are checked against the exact one (see the module docs). A clone
/// (one per chain a kernel builds) counts into the same [`AuditCounts`].
#[derive(Debug, Clone)]
pub struct Audited<T> {
    inner: T,
    counts: Arc<AuditCounts>,
    buffer: Vec<f64>,
}

impl<T> Audited<T> {
    /// Wraps `inner`, counting into `counts`.
    pub fn new(inner: T, counts: Arc<AuditCounts>) -> Self {
        Self { inner, counts, buffer: Vec::new() }
    }
}

impl<T: MeanTest> MeanTest for Audited<T> {
    fn decide<P: Population + ?Sized, R: Rng + ?Sized>(
        &mut self, population: &mut P, threshold: f64, rng: &mut R,
    ) -> Result<Decision> {
        let start = population.drawn();
        let d = self.inner.decide(population, threshold, rng)?;
        let n = population.size();
        let mut sum = d.mean * d.used as f64;
        let rest = n - population.drawn();
        if self.buffer.len() < 4096 {
            self.buffer.resize(4096, 0.0);
        }
        while population.drawn() < n {
            let k = (n - population.drawn()).min(4096);
            population.draw(&mut self.buffer[..k], rng);
            sum += self.buffer[..k].iter().sum::<f64>();
        }
        let exact = sum / (n - start) as f64 > threshold;
        let c = &self.counts;
        c.decisions.fetch_add(1, Ordering::Relaxed);
        c.wrong.fetch_add(u64::from(exact != d.above), Ordering::Relaxed);
        c.used.fetch_add(d.used as u64, Ordering::Relaxed);
        c.population.fetch_add((n - start) as u64, Ordering::Relaxed);
        c.audit_values.fetch_add(rest as u64, Ordering::Relaxed);
        Ok(d)
    }

    fn check_population_size(&self, n: usize) -> Result<()> {
        self.inner.check_population_size(n)
    }

    fn needs_range(&self) -> bool {
        self.inner.needs_range()
    }

    fn describe(&self) -> Vec<(String, String)> {
        let mut d = self.inner.describe();
        d.push(("audited".into(), "decisions compared with the exact test (diagnostic)".into()));
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tallmc_bounds::{ExactTest, SlicePopulation};
    use tallmc_core::rng::chain_rng;

    /// Decides from the first value only: often wrong, uses 1 value.
    struct FirstValue;

    impl MeanTest for FirstValue {
        fn decide<P: Population + ?Sized, R: Rng + ?Sized>(
            &mut self, p: &mut P, t: f64, rng: &mut R,
        ) -> Result<Decision> {
            let mut v = [0.0];
            p.draw(&mut v, rng);
            Ok(Decision {
                above: v[0] > t,
                used: 1,
                looks: 1,
                mean: v[0],
                half_width: f64::INFINITY,
            })
        }
        fn check_population_size(&self, _n: usize) -> Result<()> {
            Ok(())
        }
        fn needs_range(&self) -> bool {
            false
        }
        fn describe(&self) -> Vec<(String, String)> {
            vec![]
        }
    }

    #[test]
    fn audit_counts_disagreements_and_keeps_the_inner_cost() {
        // Values ±1 with mean 0.2 and threshold 0: the first value is −1 with probability 0.4.
        let values: Vec<f64> = (0..1000).map(|i| if i % 10 < 6 { 1.0 } else { -1.0 }).collect();
        let mut pop = SlicePopulation::new(&values, None).unwrap();
        let mut rng = chain_rng(1, 0);
        let counts = AuditCounts::new();
        let mut test = Audited::new(FirstValue, counts.clone());
        for _ in 0..10_000 {
            pop.reset();
            let d = test.decide(&mut pop, 0.0, &mut rng).unwrap();
            assert_eq!(d.used, 1);
        }
        // Binomial(10⁴, 0.4): sd 0.0049; allow 5 sd.
        assert!((counts.wrong_fraction() - 0.4).abs() < 0.025, "{}", counts.wrong_fraction());
        assert!((counts.mean_data_fraction() - 0.001).abs() < 1e-12);
        let exact_counts = AuditCounts::new();
        let mut exact = Audited::new(ExactTest::new(), exact_counts.clone());
        pop.reset();
        exact.decide(&mut pop, 0.0, &mut rng).unwrap();
        assert_eq!(exact_counts.wrong(), 0);
    }
}
