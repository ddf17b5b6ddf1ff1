//! SBPS's noisy observation of the bounce rate: one fresh minibatch, its gradient estimate, and
//! the directional derivative with its standard deviation along any velocity.

use rand::Rng;
use tallmc_core::{EvalCounts, LogPrior, Result, TermGradients};

use super::common::dot;
use super::regression::floor_sigma;
use crate::sg::{BatchSampler, Subsampling};

/// A fresh minibatch S of n indices (without replacement) at a point x, with the per-datum
/// gradients kept so that the directional derivative and its spread can be taken along any
/// velocity (the old one, the reflected one, a refreshed one) without new evaluations:
///
/// ```text
/// ∇Û(x) = −∇log p(x) − (N/n) Σ_{i∈S} ∇ℓ_i(x),
/// c_i = −⟨∇ℓ_i(x), u⟩,   G = ⟨∇Û(x), u⟩ = −⟨∇log p(x), u⟩ + N c̄,
/// σ = N √((1 − n/N) s²/n),   s² = Σ_{i∈S} (c_i − c̄)²/(n − 1).
/// ```
///
/// The divisor n − 1 makes s² unbiased for the population variance with divisor N − 1, which
/// is the one in the exact variance of a mean under sampling without replacement,
/// Var(c̄) = (1 − n/N) S²/n (Cochran 1977, Thm 2.2 and 2.4); the prior is not random and adds
/// nothing. With n = 1 there is no estimate and s² is taken as 0. σ is floored
/// ([`floor_sigma`]) at 10⁻⁹ × (|G| + N·mean|c_i|).
#[derive(Debug, Clone)]
pub(crate) struct Minibatch {
    sampler: BatchSampler,
    batch: usize,
    population: usize,
    terms: Vec<f64>,
    rows: Vec<f64>,
    gradient: Vec<f64>,
}

impl Minibatch {
    /// Scratch for batches of `batch` indices out of `population` in dimension `dim`.
    pub(crate) fn new(population: usize, batch: usize, dim: usize) -> Result<Self> {
        Ok(Self {
            sampler: BatchSampler::new(Subsampling::WithoutReplacement, population, batch)?,
            batch,
            population,
            terms: vec![0.0; batch],
            rows: vec![0.0; batch * dim],
            gradient: vec![0.0; dim],
        })
    }

    /// Draws a fresh minibatch and evaluates it at `x`: the per-datum gradients and ∇Û(x).
    /// Cost: n terms and n gradients.
    pub(crate) fn evaluate<M, R>(&mut self, model: &M, x: &[f64], rng: &mut R) -> EvalCounts
    where
        M: TermGradients + LogPrior + ?Sized,
        R: Rng + ?Sized,
    {
        let idx = self.sampler.draw(self.batch, rng);
        model.log_terms_grads(x, idx, &mut self.terms, &mut self.rows);
        self.gradient.fill(0.0);
        model.log_prior_grad(x, &mut self.gradient);
        let d = self.gradient.len();
        let scale = self.population as f64 / self.batch as f64;
        for row in self.rows.chunks_exact(d) {
            for (g, r) in self.gradient.iter_mut().zip(row) {
                *g += scale * r;
            }
        }
        self.gradient.iter_mut().for_each(|g| *g = -*g);
        EvalCounts::terms_and_gradients(self.batch)
    }

    /// N.
    pub(crate) fn population(&self) -> usize {
        self.population
    }

    /// ∇Û at the last evaluated point.
    pub(crate) fn gradient(&self) -> &[f64] {
        &self.gradient
    }

    /// Whether ∇Û and every per-datum gradient are finite.
    pub(crate) fn is_finite(&self) -> bool {
        self.gradient.iter().chain(&self.rows).all(|v| v.is_finite())
    }

    /// (G, σ) along the velocity `u` (struct docs). O(nd).
    pub(crate) fn observe(&self, u: &[f64]) -> (f64, f64) {
        let d = u.len();
        let g = dot(&self.gradient, u);
        let (mut mean, mut m2, mut abs) = (0.0, 0.0, 0.0);
        for (k, row) in self.rows.chunks_exact(d).enumerate() {
            let c = -dot(row, u);
            let delta = c - mean;
            mean += delta / (k + 1) as f64;
            m2 += delta * (c - mean);
            abs += c.abs();
        }
        let (n, big_n) = (self.batch as f64, self.population as f64);
        let s2 = if self.batch > 1 { m2 / (n - 1.0) } else { 0.0 };
        let fpc = (1.0 - n / big_n).max(0.0);
        let sigma = big_n * (fpc * s2 / n).sqrt();
        (g, floor_sigma(sigma, g.abs() + big_n * abs / n))
    }
}
