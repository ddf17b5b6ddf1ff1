//! An estimator of your own: a *stratified* difference estimator of the log-likelihood, written
//! outside the library against the public `EcsEstimator` / `GibbsSubsample` traits of
//! `tallmc-estimators` (re-exported by `tallmc-samplers`), and run with perturbed HMC-ECS (`HmcEcsWithEstimator`) on a logistic
//! regression from `tallmc-models`, beside full-data HMC and the library's own difference
//! estimator (`HmcEcs`).
//!
//! ```sh
//! cargo run --release -p tallmc --example user_estimator          # seed 1
//! cargo run --release -p tallmc --example user_estimator -- 7     # another seed
//! ```
//!
//! # The estimator
//!
//! The data 0..N are split once into H strata I_1, …, I_H of sizes N_h (a fixed partition; here
//! by the rank of |η*_i| = |x_iᵀθ*| at the first θ*, so that data with similar curvature of
//! their log-likelihood term share a stratum). The subsample u holds m_h indices per stratum,
//! each uniform on I_h, independently, with replacement. With the second-order Taylor control
//! variate q_i around θ* and d_i = ℓ_i − q_i:
//!
//! ```text
//! ℓ̂(θ; u)  = Σ_{i<N} q_i(θ) + Σ_h (N_h/m_h) Σ_{j∈u_h} d_j(θ)
//! σ̂²(θ; u) = Σ_h N_h² s_h²/m_h,   s_h² = (1/(m_h − 1)) Σ_{j∈u_h} (d_j − d̄_h)²
//! ∇ℓ̂       = ∇Σq + Σ_h (N_h/m_h) Σ_{j∈u_h} ∇d_j
//! ∇σ̂²      = Σ_h (2N_h²/(m_h(m_h − 1))) Σ_{j∈u_h} (d_j − d̄_h) ∇d_j
//! ```
//!
//! **Properties.** ℓ̂ is unbiased for ℓ(θ) = Σ_i ℓ_i(θ) (each stratum's term is unbiased for
//! Σ_{i∈I_h} d_i), with variance Σ_h N_h² σ_h²/m_h, σ_h² the population variance of d in
//! stratum h. Sampling is with replacement, so there is no finite-population correction and
//! s_h² (divisor m_h − 1) is unbiased for σ_h²: σ̂² is unbiased for V[ℓ̂]. Perturbed HMC-ECS
//! targets exp(ℓ̂ − σ̂²/2) p(θ) p(u), whose θ-marginal is close to the posterior when σ̂² is
//! O(1) (Dang et al. 2019, §3–4). The allocation is proportional (m_h = m/H, equal strata);
//! stratification never increases the variance over plain sampling with proportional allocation
//! and reduces it by the between-strata part of the variance of d.
//!
//! **The u-step.** Slot k of u belongs to stratum k mod H; the slots are cut into G blocks of
//! consecutive slots, and a u-step redraws one block (each slot from its stratum), so p(u) is
//! left invariant by a symmetric proposal, as [`GibbsSubsample`] asks.
//!
//! **Evaluations.** The logistic model is a `LinearPredictor`: ℓ_i = φ_i(η_i), η_i = x_iᵀθ, and
//! q_i(θ) = φ_i(η*_i) + φ_i′(η*_i)(η_i − η*_i) + ½φ_i″(η*_i)(η_i − η*_i)². The estimator keeps
//! η*_i, φ_i, φ_i′, φ_i″ at θ* for every datum (one pass at construction and after every
//! re-centring of θ*: N terms, N gradients, N Hessians, reported), so one estimate costs
//! m terms and m gradients (φ, φ′ at θ).

#![allow(clippy::print_stdout)]

use std::error::Error;

use rand::{Rng, RngExt};
use rand_distr::Normal;
use tallmc::prelude::*;

mod common;

/// Rows of the simulated data set.
pub const N: usize = 20_000;
/// Dimension of θ (intercept + 4 covariates).
pub const D: usize = 5;
/// The θ the data are simulated from.
pub const TRUE_THETA: [f64; D] = [-0.5, 1.0, -0.7, 0.4, 0.2];
/// Prior sd of every coefficient.
pub const PRIOR_SD: f64 = 10.0;
/// Number of strata H.
pub const STRATA: usize = 4;
/// Indices per stratum m_h.
pub const PER_STRATUM: usize = 50;
/// Number of blocks G of u (one refreshed per u-step).
pub const BLOCKS: usize = 20;

// ---------------------------------------------------------------------------------------------
// The subsample
// ---------------------------------------------------------------------------------------------

/// u: [`PER_STRATUM`] indices in each stratum, slot k in stratum k mod H, in G blocks of
/// consecutive slots.
#[derive(Debug, Clone)]
pub struct StratifiedSubsample {
    /// Sorted members of each stratum (shared by all chains).
    strata: std::sync::Arc<Vec<Vec<u32>>>,
    /// The indices, slot by slot.
    indices: Vec<u32>,
    /// Start slot of each block, and the end.
    starts: Vec<usize>,
    /// The block being refreshed and its old indices.
    pending: Option<usize>,
    saved: Vec<u32>,
}

impl StratifiedSubsample {
    /// `per_stratum` slots per stratum in `blocks` blocks (contents drawn by `draw`).
    pub fn new(strata: Vec<Vec<u32>>, per_stratum: usize, blocks: usize) -> Result<Self, String> {
        let m = strata.len() * per_stratum;
        if per_stratum < 2 || strata.iter().any(Vec::is_empty) {
            return Err(format!("need ≥ 2 indices per stratum and no empty stratum, m = {m}"));
        }
        if blocks == 0 || blocks > m {
            return Err(format!("number of blocks G = {blocks}: expected an integer in [1, {m}]"));
        }
        let starts = (0..=blocks).map(|b| b * m / blocks).collect();
        let strata = std::sync::Arc::new(strata);
        Ok(Self { strata, indices: vec![0; m], starts, pending: None, saved: Vec::new() })
    }

    /// Number of strata H.
    pub fn num_strata(&self) -> usize {
        self.strata.len()
    }

    /// Size N_h of stratum h.
    pub fn stratum_size(&self, h: usize) -> usize {
        self.strata[h].len()
    }

    /// The current indices, slot k in stratum k mod H.
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    fn redraw<R: Rng + ?Sized>(&mut self, slots: std::ops::Range<usize>, rng: &mut R) {
        let h_count = self.strata.len();
        for k in slots {
            let members = &self.strata[k % h_count];
            self.indices[k] = members[rng.random_range(0..members.len() as u32) as usize];
        }
    }
}

impl GibbsSubsample for StratifiedSubsample {
    fn draw<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.redraw(0..self.indices.len(), rng);
        self.pending = None;
    }
    fn propose<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let b = rng.random_range(0..self.starts.len() as u32 - 1) as usize;
        let range = self.starts[b]..self.starts[b + 1];
        self.saved.clear();
        self.saved.extend_from_slice(&self.indices[range.clone()]);
        self.redraw(range, rng);
        self.pending = Some(b);
    }
    fn accept(&mut self) {
        self.pending = None;
    }
    fn reject(&mut self) {
        if let Some(b) = self.pending.take() {
            self.indices[self.starts[b]..self.starts[b + 1]].copy_from_slice(&self.saved);
        }
    }
    fn batch_size(&self) -> usize {
        self.indices.len()
    }
}

// ---------------------------------------------------------------------------------------------
// The estimator
// ---------------------------------------------------------------------------------------------

/// The stratified difference estimator (see the file's docs) for a `LinearPredictor` model.
#[derive(Debug, Clone)]
pub struct StratifiedDifference {
    cv: ControlVariate,
    /// The control variate's id when the per-datum cache below was built.
    cached_id: u64,
    /// η*_i, φ_i(η*_i), φ_i′(η*_i), φ_i″(η*_i) for every datum.
    eta_star: Vec<f64>,
    phi_star: Vec<f64>,
    d1_star: Vec<f64>,
    d2_star: Vec<f64>,
    /// Scratch of length m: η, φ, φ′, φ″ at θ, d_j, and the weights of ∇d_j = c_j x_j.
    eta: Vec<f64>,
    phi: Vec<f64>,
    d1: Vec<f64>,
    d2: Vec<f64>,
    diff: Vec<f64>,
    weights: Vec<f64>,
}

impl StratifiedDifference {
    /// The estimator around the control variate `cv` (order 2) for subsamples of `m` indices,
    /// with the evaluations of its per-datum pass at θ*.
    pub fn new<M: LinearPredictor + ?Sized>(
        model: &M, cv: ControlVariate, m: usize,
    ) -> Result<(Self, EvalCounts), String> {
        if cv.order() != CvOrder::Two || cv.dim() != model.dim() {
            return Err("a second-order control variate of the model's dimension".into());
        }
        let n = model.num_terms();
        let mut est = Self {
            cv,
            cached_id: 0,
            eta_star: vec![0.0; n],
            phi_star: vec![0.0; n],
            d1_star: vec![0.0; n],
            d2_star: vec![0.0; n],
            eta: vec![0.0; m],
            phi: vec![0.0; m],
            d1: vec![0.0; m],
            d2: vec![0.0; m],
            diff: vec![0.0; m],
            weights: vec![0.0; m],
        };
        let counts = est.refresh_cache(model);
        Ok((est, counts))
    }

    /// Recomputes η*, φ*, φ′*, φ″* when θ* has moved (one pass: N of each evaluation).
    fn refresh_cache<M: LinearPredictor + ?Sized>(&mut self, model: &M) -> EvalCounts {
        if self.cached_id == self.cv.id() {
            return EvalCounts::ZERO;
        }
        let n = model.num_terms();
        let all: Vec<u32> = (0..n as u32).collect();
        model.linear_predictors(self.cv.center(), &all, &mut self.eta_star);
        model.predictor_derivatives(
            &all,
            &self.eta_star,
            &mut self.phi_star,
            &mut self.d1_star,
            &mut self.d2_star,
        );
        self.cached_id = self.cv.id();
        let n = n as u64;
        EvalCounts { terms: n, gradients: n, hessians: n }
    }

    /// The strata: data ranked by |η*_i| at the current θ*, cut into `h` groups of (nearly)
    /// equal size.
    pub fn strata_by_curvature(&self, h: usize) -> Vec<Vec<u32>> {
        let n = self.eta_star.len();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by(|&a, &b| {
            self.eta_star[a as usize].abs().total_cmp(&self.eta_star[b as usize].abs())
        });
        (0..h)
            .map(|k| {
                let mut s = order[k * n / h..(k + 1) * n / h].to_vec();
                s.sort_unstable();
                s
            })
            .collect()
    }
}

impl<M: LinearPredictor + TermHessians + ?Sized> EcsEstimator<M> for StratifiedDifference {
    type Subsample = StratifiedSubsample;
    type Estimate = DifferenceEstimate;

    fn estimate_log_target(
        &mut self, model: &M, theta: &[f64], u: &StratifiedSubsample, grad: &mut [f64],
    ) -> Result<DifferenceEstimate, tallmc::estimators::Error> {
        let mut counts = self.refresh_cache(model);
        let idx = u.indices();
        let m = idx.len();
        model.linear_predictors(theta, idx, &mut self.eta[..m]);
        model.predictor_derivatives(
            idx,
            &self.eta[..m],
            &mut self.phi[..m],
            &mut self.d1[..m],
            &mut self.d2[..m],
        );
        counts += EvalCounts { terms: m as u64, gradients: m as u64, hessians: 0 };
        // d_j and the factor c_j of ∇d_j = c_j x_j.
        for (k, &i) in idx.iter().enumerate() {
            let i = i as usize;
            let dh = self.eta[k] - self.eta_star[i];
            let q = self.phi_star[i] + self.d1_star[i] * dh + 0.5 * self.d2_star[i] * dh * dh;
            self.diff[k] = self.phi[k] - q;
            self.d1[k] -= self.d1_star[i] + self.d2_star[i] * dh; // now c_j
        }
        let cv_sum = self.cv.sum_grad(theta, grad);
        let (strata, mut sum, mut variance) = (u.num_strata(), 0.0, 0.0);
        for h in 0..strata {
            let slots = (h..m).step_by(strata);
            let mh = slots.len() as f64;
            let nh = u.stratum_size(h) as f64;
            let mean = slots.clone().map(|k| self.diff[k]).sum::<f64>() / mh;
            let ss = slots.clone().map(|k| (self.diff[k] - mean).powi(2)).sum::<f64>();
            sum += nh * mean;
            variance += nh * nh / mh * ss / (mh - 1.0);
            // Weight of ∇d_j in ∇(ℓ̂ − σ̂²/2).
            let w_var = nh * nh / (mh * (mh - 1.0));
            for k in slots {
                self.weights[k] = (nh / mh - w_var * (self.diff[k] - mean)) * self.d1[k];
            }
        }
        model.add_weighted_rows(idx, &self.weights[..m], grad);
        let log_likelihood = cv_sum + sum;
        for (what, value) in [("stratified ℓ̂", log_likelihood), ("stratified σ̂²", variance)]
        {
            if !value.is_finite() {
                return Err(tallmc::estimators::Error::NonFiniteEstimate { what, value });
            }
        }
        if let Some(&value) = grad.iter().find(|g| !g.is_finite()) {
            return Err(tallmc::estimators::Error::NonFiniteEstimate {
                what: "∇(ℓ̂ − σ̂²/2)",
                value,
            });
        }
        Ok(DifferenceEstimate { log_likelihood, variance, control_variate_sum: cv_sum, counts })
    }

    fn center(&self) -> &[f64] {
        self.cv.center()
    }

    /// Moves the control variate (one pass); the per-datum cache follows at the next estimate
    /// (it watches the control variate's id).
    fn recenter(
        &mut self, model: &M, center: &[f64],
    ) -> Result<Option<EvalCounts>, tallmc::estimators::Error> {
        self.cv.recenter(model, center).map(Some)
    }

    /// The order-2 control variate's Σ∇²ℓ_i(θ*): the kernel's mass matrix needs no extra pass.
    fn hessian_sum(&self) -> Option<&[f64]> {
        Some(self.cv.hessian_sum())
    }

    fn taylor_order(&self) -> Option<CvOrder> {
        Some(self.cv.order())
    }
}

// ---------------------------------------------------------------------------------------------
// Data, runs and the summary
// ---------------------------------------------------------------------------------------------

/// x_i = (1, z_i), z_i ~ N(0, I₄), y_i ~ Bernoulli(σ(x_iᵀ[`TRUE_THETA`])), drawn row by row from
/// tallmc's set-up stream of `seed`.
pub fn simulate(n: usize, seed: u64) -> Result<Dataset, Box<dyn Error>> {
    let normal = Normal::new(0.0, 1.0)?;
    let (x, y) = common::simulate_regression(n, &TRUE_THETA, seed, normal, |eta, rng| {
        Ok(f64::from(u8::from(rng.random::<f64>() < 1.0 / (1.0 + (-eta).exp()))))
    })?;
    let names =
        std::iter::once("intercept".to_string()).chain((1..D).map(|j| format!("x{j}"))).collect();
    Ok(Dataset::new(x, y, names)?)
}

/// The three runs on one data set.
#[derive(Debug, Clone)]
pub struct Report {
    /// Parameter names.
    pub names: Vec<String>,
    /// Full-data HMC.
    pub hmc: RunSummary,
    /// Perturbed HMC-ECS with the library's difference estimator.
    pub ecs: RunSummary,
    /// Perturbed HMC-ECS with the stratified estimator of this file.
    pub stratified: RunSummary,
    /// σ̂² of the stratified estimator at θ* (the posterior mode) for one subsample: 0 up to
    /// rounding, since every d_i vanishes at the expansion point.
    pub variance_at_mode: f64,
    /// σ̂² of the stratified estimator at θ* + 1 Laplace sd per coordinate, same subsample.
    pub variance_off_mode: f64,
}

/// Simulates the data from `seed` and samples the posterior with full-data HMC, HMC-ECS with
/// the library's difference estimator and HMC-ECS with the stratified one (4 chains each,
/// started over-dispersed around the Laplace mode).
pub fn run(seed: u64) -> Result<Report, Box<dyn Error>> {
    let model = LogisticRegression::new(simulate(N, seed)?, DesignOptions::default(), PRIOR_SD)?;
    let names = model.parameter_names();
    let laplace = laplace_approximation(&model, &[0.0; D], NewtonOptions::default())?;
    let inits = laplace.dispersed_positions(4, 2.0, seed)?;
    let run_config = |offset: u64, num_warmup: usize, num_draws: usize| RunConfig {
        num_warmup,
        num_draws,
        num_chains: 4,
        seed: seed.wrapping_add(offset),
        save_warmup: false,
    };

    let hmc_config = HmcConfig::with_fixed_metric(laplace.dense_metric()?);
    let hmc = sample_in_memory(&model, run_config(1, 300, 2000), &inits, &Hmc::new(hmc_config)?)?;

    let m = STRATA * PER_STRATUM;
    let ecs_config = HmcEcsConfig {
        center: Some(laplace.mode.clone()),
        subsample_size: Some(m),
        blocks: BLOCKS,
        ..HmcEcsConfig::default()
    };
    let ecs =
        sample_in_memory(&model, run_config(2, 1000, 3000), &inits, &HmcEcs::new(ecs_config)?)?;

    // The user estimator: control variate at the mode, strata by |η*| there.
    let (cv, mut setup) = ControlVariate::new(&model, &laplace.mode, CvOrder::Two)?;
    let (estimator, c) = StratifiedDifference::new(&model, cv, m)?;
    setup += c;
    let subsample =
        StratifiedSubsample::new(estimator.strata_by_curvature(STRATA), PER_STRATUM, BLOCKS)?;
    let (variance_at_mode, variance_off_mode) = {
        let (mut est, mut u, mut rng) = (estimator.clone(), subsample.clone(), setup_rng(seed));
        u.draw(&mut rng);
        let mut grad = [0.0; D];
        let mut off = laplace.mode.clone();
        for (j, o) in off.iter_mut().enumerate() {
            *o += laplace.covariance[j * D + j].sqrt();
        }
        let at = est.estimate_log_target(&model, &laplace.mode, &u, &mut grad)?;
        let away = est.estimate_log_target(&model, &off, &u, &mut grad)?;
        (at.variance, away.variance)
    };
    let dynamics = EcsDynamics::default();
    let stratified = sample_in_memory(
        &model,
        run_config(3, 1000, 3000),
        &inits,
        &HmcEcsWithEstimator::new(dynamics, estimator, subsample)?,
    )?;

    let stratified_summary = RunSummary::of(&names, &stratified)?;
    Ok(Report {
        hmc: RunSummary::of(&names, &hmc)?,
        ecs: RunSummary::of(&names, &ecs)?,
        stratified: RunSummary { evals: stratified_summary.evals + setup, ..stratified_summary },
        names,
        variance_at_mode,
        variance_off_mode,
    })
}

/// Prints the summary table and the evaluation counts.
pub fn print(report: &Report) {
    println!("Logistic regression, n = {N}, d = {D}: HMC-ECS with a stratified estimator\n");
    print!("{:<10} {:>6} |", "", "true");
    for label in ["HMC", "ECS (library)", "ECS (stratified)"] {
        print!(" {label:<31} |");
    }
    println!();
    print!("{:<10} {:>6} |", "", "");
    for _ in 0..3 {
        print!(" {:>8} {:>7} {:>6} {:>6} |", "mean", "sd", "ESS", "R-hat");
    }
    println!();
    for (j, name) in report.names.iter().enumerate() {
        print!("{name:<10} {:>6.2} |", TRUE_THETA[j]);
        for r in [&report.hmc, &report.ecs, &report.stratified] {
            let s = &r.summaries[j];
            print!(" {:>8.4} {:>7.4} {:>6.0} {:>6.3} |", s.mean, s.sd, s.ess_bulk, s.rhat);
        }
        println!();
    }
    println!(
        "\nstratified σ̂² at θ*: {:.3e}; at θ* + 1 sd: {:.3e}",
        report.variance_at_mode, report.variance_off_mode
    );
    println!("\nper-datum evaluations (all chains, set-up and warmup included):");
    for (label, r) in [
        ("full-data HMC", &report.hmc),
        ("ECS (library)", &report.ecs),
        ("ECS (stratified)", &report.stratified),
    ] {
        println!(
            "  {label:<17} {:11} ({} draws, {:.0} data points per iteration, {} divergences after warmup)",
            r.evals, r.draws, r.batch, r.divergences
        );
    }
}

/// `user_estimator [SEED]` (default seed 1).
fn main() -> Result<(), Box<dyn Error>> {
    print(&run(common::seed_arg()?)?);
    Ok(())
}
