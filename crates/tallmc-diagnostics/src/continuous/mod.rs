//! Exact time averages of continuous-time (piecewise-deterministic) samplers, with
//! batch-means Monte Carlo standard errors.
//!
//! # Time averages, not draws
//!
//! BPS, SBPS and Zig-Zag output a continuous piecewise-linear trajectory x(t), t ∈ [0, T],
//! whose time marginal is the posterior π. Posterior expectations are time averages
//!
//! ```text
//! E_π[f] ≈ (1/T) ∫_0^T f(x(t)) dt,
//! ```
//!
//! **not** averages over the event positions: events happen at rate λ(x, v), which is large
//! where the potential rises, so event positions are biased toward high potential. This
//! module integrates along the segments x(s) = x₀ + v s, 0 ≤ s ≤ τ, exactly:
//!
//! ```text
//! ∫_0^τ x_j ds       = τ (x₀ⱼ + vⱼ τ/2)
//! ∫_0^τ x_j² ds      = τ (x₀ⱼ² + x₀ⱼ vⱼ τ + vⱼ² τ²/3)
//! ∫_0^τ x_j x_k ds   = τ [x₀ⱼ x₀ₖ + (x₀ⱼ vₖ + x₀ₖ vⱼ) τ/2 + vⱼ vₖ τ²/3]      (opt-in, O(d²))
//! ```
//!
//! giving the mean m = (1/T)∫x, the variance (1/T)∫x² − m² and the covariance
//! (1/T)∫xxᵀ − m mᵀ ([`TimeAverages`]). A general test function f: ℝ^d → ℝ is integrated by
//! composite Gauss–Legendre quadrature on each segment ([`TestFunctionAverage`],
//! [`QuadratureConfig`], [`crate::quadrature`]), exact when f is a polynomial of degree
//! ≤ 2n − 1 for n nodes.
//!
//! # MCSE by batch means over time
//!
//! The time average of a stationary ergodic process satisfies a CLT
//! √T (m̂_T − m) → N(0, σ²_∞). Cut [0, T] into B batches of lengths t_b (all equal but the
//! last), with batch means m_b = (1/t_b) ∫_{batch b} f dt; then
//!
//! ```text
//! σ̂²_∞ = Σ_b t_b (m_b − m̂)² / (B − 1),     MCSE(m̂) = √(σ̂²_∞ / T).
//! ```
//!
//! With equal lengths t_b = T/B this is the textbook sd(batch means)/√B; weighting by t_b
//! lets the last, partial batch count for what it is worth. Batches are time bins of width w
//! that are merged in pairs (w doubled) whenever the trajectory would outgrow
//! [`BatchConfig::max_batches`] bins, so memory is bounded and a run ends with
//! `max_batches`/2 < B ≤ `max_batches` batches (21–40 by default). The batch length T/B thus
//! grows linearly with T: with a fixed B the estimate σ̂²_∞ is unbiased as soon as T/B is many
//! times the integrated autocorrelation time, and has relative standard deviation about
//! √(2/(B − 1)) (16–23 % for B = 40–21); raise `max_batches` for long runs to tighten it.
//! Segments that straddle a bin edge are split there exactly.
//!
//! # Several chains
//!
//! K independent chains of lengths T_k are pooled as one long run:
//!
//! ```text
//! m̂ = Σ_k ∫_k f dt / Σ_k T_k,
//! σ̂²_∞ = Σ_k Σ_b t_kb (m_kb − m̂)² / (Σ_k B_k − 1),     MCSE(m̂) = √(σ̂²_∞ / Σ_k T_k),
//! ```
//!
//! every batch of every chain measured against the *pooled* mean, so chains that disagree
//! (have not mixed) inflate the MCSE, as the between-chain part of R̂ would
//! ([`summarize_continuous`], [`pooled_covariance`], [`pooled_estimate`]).
//!
//! # Example
//!
//! ```
//! use tallmc_diagnostics::continuous::{TimeAverageConfig, TimeAverages};
//! // A particle bouncing on [0, 1] at unit speed: uniform on [0, 1].
//! let mut avg = TimeAverages::new(1, TimeAverageConfig::default()).unwrap();
//! for k in 0..100 {
//!     let (x0, v) = if k % 2 == 0 { (0.0, 1.0) } else { (1.0, -1.0) };
//!     avg.add(&[x0], &[v], 1.0).unwrap();
//! }
//! assert!((avg.mean()[0] - 0.5).abs() < 1e-12);
//! assert!((avg.variance()[0] - 1.0 / 12.0).abs() < 1e-12);
//! let s = avg.summary(&["x"]).unwrap();
//! assert_eq!(s[0].time, 100.0);
//! assert!(s[0].batches > 20 && s[0].batches <= 40);
//! ```

mod bins;
mod moments;
mod summary;
mod test_function;
mod timeline;

pub use bins::{BatchConfig, INITIAL_BIN_WIDTH};
pub use moments::{TimeAverageConfig, TimeAverages};
pub use summary::{
    ContinuousEstimate, ContinuousSummary, pooled_covariance, pooled_estimate, summarize_continuous,
};
pub use test_function::{QuadratureConfig, TestFunctionAverage};

#[cfg(test)]
mod tests;
