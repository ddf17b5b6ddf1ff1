//! MH-SS, Metropolis–Hastings with scalable subsampling (Prado, Nemeth & Sherlock, arXiv
//! 2407.19602): TunaMH's Poisson minibatch applied to the remainders of first- or second-order
//! Taylor control variates at a centre θ̂, so that the minibatch shrinks as the chain
//! concentrates around θ̂.
//!
//! **Factorisation.** With ℓ̂_i the order-k expansion of ℓ_i at θ̂ and r_i = ℓ_i − ℓ̂_i, the
//! target is π(θ) ∝ π̂(θ) exp(Σ_i r_i(θ)), π̂(θ) = p(θ) exp(Σ_i ℓ̂_i(θ)) (O(d) from the sums at
//! θ̂). The cheap part of the ratio is R = π̂(θ′) q(θ|θ′) / (π̂(θ) q(θ′|θ)); the data enter
//! through the energies U_i = −r_i and TunaMH's Poisson minibatch (see the
//! `poisson_minibatch` module; χ = 0 by default, as MH-SS), which keeps the kernel exactly
//! π-reversible for any bound of the form |U_i(θ′) − U_i(θ)| ≤ c_i M(θ, θ′), M symmetric.
//!
//! **The bound, order 1.** With h = θ − θ̂, h′ = θ′ − θ̂, Δ = θ′ − θ and L_i the Lipschitz constant of ∇ℓ_i
//! ([`TermCurvatureConstants::term_gradient_lipschitz`]; logistic: ¼‖x̃_i‖₂²):
//!
//! ```text
//! r_i(θ′) − r_i(θ) = ∫₀¹ (∇ℓ_i(θ + tΔ) − ∇ℓ_i(θ̂))ᵀ Δ dt,
//! |r_i(θ′) − r_i(θ)| ≤ L_i ‖Δ‖₂ ∫₀¹ ‖h + tΔ‖₂ dt ≤ L_i ‖Δ‖₂ (‖h‖₂ + ‖h′‖₂) / 2,
//! ```
//!
//! since ‖h + tΔ‖ = ‖(1 − t)h + t h′‖ ≤ (1 − t)‖h‖ + t‖h′‖. So c_i = L_i and
//! M(θ, θ′) = ‖Δ‖₂ (‖h‖₂ + ‖h′‖₂)/2: E(B) = CM, quadratic in the distances to θ̂, is O(1) when
//! the steps and the posterior's spread are O(N^{−1/2}) (C = O(N)). (The paper's M refines the
//! integral with the angle between h and Δ; this one is its simple upper bound.)
//!
//! **The bound, order 2.** With L₂,i the Lipschitz constant of ∇²ℓ_i
//! ([`TermThirdDerivativeConstants::term_hessian_lipschitz`]; logistic: (√3/18)‖x̃_i‖₂³), the
//! remainder's gradient is ∇r_i(θ) = ∫₀¹ (∇²ℓ_i(θ̂ + s h) − ∇²ℓ_i(θ̂)) h ds, of norm at most
//! L₂,i ‖h‖²/2, so
//!
//! ```text
//! |r_i(θ′) − r_i(θ)| ≤ ‖Δ‖₂ ∫₀¹ (L₂,i/2) ‖(1 − t)h + t h′‖₂² dt = (L₂,i/2) ‖Δ‖₂ (‖h‖² + hᵀh′ + ‖h′‖²)/3:
//! ```
//!
//! c_i = L₂,i/2 and M(θ, θ′) = ‖Δ‖₂ (‖h‖₂² + hᵀh′ + ‖h′‖₂²)/3 (symmetric in θ, θ′; the integral
//! of a square, so ≥ 0). E(B) = CM is cubic in the distances: O(N^{−1/2}) rows per iteration.
//! The order is a type parameter ([`FirstOrderCv`], [`SecondOrderCv`]; [`MhSsOrder`] says what
//! each sets), so that order 1 needs only the curvature constants.
//!
//! **Cost**: the expansions at θ̂ (one pass, reported with the first step), then per drawn
//! index the remainders at θ and θ′ (what the [`DifferenceTerms`] engine reports).
//!
//! **Random numbers**: the proposal, B, the keep decisions and the acceptance uniform from the
//! chain's RNG; the indices from the chain's index stream (`index_stream`: a sequence fixed by
//! the seed, whatever the chain accepts).

use std::marker::PhantomData;

use rand::{Rng, RngExt};
use serde::Serialize;
use tallmc_core::{
    Chain, Error, Kernel, LogPrior, Result, TermCurvatureConstants, TermHessians,
    TermThirdDerivativeConstants,
};
use tallmc_estimators::{CvOrder, DifferenceTerms};

use super::poisson_minibatch::PoissonMinibatch;
use super::proposal::Proposal;
use super::taylor_expansions::{ExpansionChain, start_from_expansions};
use super::tunamh::TunaMhStats;

/// Settings of [`MhSs`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MhSsConfig {
    /// The centre θ̂ of the expansions (usually the posterior mode).
    pub center: Vec<f64>,
    /// χ ≥ 0 of the Poisson minibatch (default 0, as MH-SS).
    pub chi: f64,
}

impl MhSsConfig {
    /// Expansions at `center`, χ = 0.
    pub fn new(center: Vec<f64>) -> Self {
        Self { center, chi: 0.0 }
    }
}

/// MH-SS with first-order control variates (c_i = L_i): the paper's.
#[derive(Debug, Clone, Copy, Default)]
pub struct FirstOrderCv;

/// MH-SS with second-order control variates (c_i = L₂,i/2).
#[derive(Debug, Clone, Copy, Default)]
pub struct SecondOrderCv;

/// MH-SS over the proposal `P` with the difference engine `E`, control variates of order `O`
/// ([`FirstOrderCv`] by default; see the module docs).
#[derive(Debug, Clone)]
pub struct MhSs<P, E, O = FirstOrderCv> {
    proposal: P,
    engine: E,
    config: MhSsConfig,
    order: PhantomData<O>,
}

impl<P, E> MhSs<P, E, FirstOrderCv> {
    /// MH-SS with first-order control variates, `proposal`, the engine that computes the
    /// remainders (`RankOne` for models with a linear predictor, `HessianProducts` for any
    /// model with Hessians) and `config`.
    ///
    /// # Errors
    /// χ negative or not finite; a centre with a NaN or infinite coordinate.
    pub fn new(proposal: P, engine: E, config: MhSsConfig) -> Result<Self> {
        Self::checked(proposal, engine, config)
    }
}

impl<P, E> MhSs<P, E, SecondOrderCv> {
    /// MH-SS with second-order control variates (the model needs
    /// [`TermThirdDerivativeConstants`]); otherwise as [`MhSs::new`].
    ///
    /// # Errors
    /// As [`MhSs::new`].
    pub fn second_order(proposal: P, engine: E, config: MhSsConfig) -> Result<Self> {
        Self::checked(proposal, engine, config)
    }
}

impl<P, E, O> MhSs<P, E, O> {
    fn checked(proposal: P, engine: E, config: MhSsConfig) -> Result<Self> {
        if !(config.chi >= 0.0 && config.chi.is_finite()) {
            return Err(Error::invalid("MH-SS χ", config.chi, "a finite number ≥ 0"));
        }
        tallmc_core::error::check_finite_vector(
            "MH-SS centre θ̂",
            &config.center,
            config.center.len(),
        )?;
        Ok(Self { proposal, engine, config, order: PhantomData })
    }
}

/// A running MH-SS chain: the state it shares with SMH (θ, the proposal, the expansions, the
/// index stream) and the Poisson minibatch of the c_i.
#[derive(Debug, Clone)]
pub struct MhSsChain<P, E> {
    chain: ExpansionChain<P, E>,
    chi: f64,
    minibatch: Option<PoissonMinibatch>,
}

/// What an order of control variates sets in MH-SS: the expansions' order and the per-datum
/// constant c_i of the bound (module docs), from the model capability that order needs.
pub trait MhSsOrder<M: ?Sized> {
    /// The order of the Taylor expansions.
    const ORDER: CvOrder;
    /// What c_i is, for errors.
    const CONSTANT: &'static str;
    /// c_i of datum `i`.
    fn constant(model: &M, i: usize) -> f64;
}

/// c_i = L_i, the Lipschitz constant of ∇ℓ_i.
impl<M: TermCurvatureConstants + ?Sized> MhSsOrder<M> for FirstOrderCv {
    const ORDER: CvOrder = CvOrder::One;
    const CONSTANT: &'static str = "per-datum gradient Lipschitz constant";
    fn constant(model: &M, i: usize) -> f64 {
        model.term_gradient_lipschitz(i)
    }
}

/// c_i = L₂,i/2, half the Lipschitz constant of ∇²ℓ_i.
impl<M: TermThirdDerivativeConstants + ?Sized> MhSsOrder<M> for SecondOrderCv {
    const ORDER: CvOrder = CvOrder::Two;
    const CONSTANT: &'static str = "per-datum Hessian Lipschitz constant";
    fn constant(model: &M, i: usize) -> f64 {
        0.5 * model.term_hessian_lipschitz(i)
    }
}

impl<M, P, E, O> Kernel<M> for MhSs<P, E, O>
where
    M: TermHessians + LogPrior + ?Sized,
    P: Proposal<M> + Clone + Send + Sync,
    E: DifferenceTerms<M> + Clone + Send + Sync,
    O: MhSsOrder<M> + Send + Sync,
{
    type Chain = MhSsChain<P, E>;

    /// Builds the expansions of order `O` at θ̂ (one pass, reported with the first step) and
    /// the alias table of the c_i, checks θ₀, and seeds the index stream (one `u64` of `rng`).
    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<MhSsChain<P, E>> {
        let start = start_from_expansions(
            "MH-SS",
            model,
            &self.proposal,
            &self.config.center,
            position,
            O::ORDER,
        )?;
        let constants: Vec<f64> = (0..model.num_terms()).map(|i| O::constant(model, i)).collect();
        let minibatch = PoissonMinibatch::new(constants, O::CONSTANT)?;
        let chain = ExpansionChain::new(model, start, self.engine.clone(), position, rng);
        Ok(MhSsChain { chain, chi: self.config.chi, minibatch })
    }
}

/// ‖a − b‖₂.
fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>().sqrt()
}

/// M(θ, θ′) of the module docs for control variates of `order`: ‖Δ‖(‖h‖ + ‖h′‖)/2 (order 1)
/// or ‖Δ‖(‖h‖² + hᵀh′ + ‖h′‖²)/3 (order 2).
fn bound_scale(order: CvOrder, theta: &[f64], candidate: &[f64], center: &[f64]) -> f64 {
    let step = distance(candidate, theta);
    if order == CvOrder::One {
        return step * 0.5 * (distance(theta, center) + distance(candidate, center));
    }
    let (mut hh, mut hh2, mut h2h2) = (0.0, 0.0, 0.0);
    for ((t, c), x) in theta.iter().zip(candidate).zip(center) {
        let (h, h2) = (t - x, c - x);
        hh += h * h;
        hh2 += h * h2;
        h2h2 += h2 * h2;
    }
    // The integral of a square: ≥ 0 up to rounding.
    step * ((hh + hh2 + h2h2) / 3.0).max(0.0)
}

impl<M, P, E> Chain<M> for MhSsChain<P, E>
where
    M: TermHessians + LogPrior + ?Sized,
    P: Proposal<M> + Send,
    E: DifferenceTerms<M> + Send,
{
    type Stats = TunaMhStats;
    type Tuning = P::Tuning;

    fn position(&self) -> &[f64] {
        &self.chain.position
    }

    /// Not computed (MH-SS never evaluates the full-data log density): NaN.
    fn log_density(&self) -> f64 {
        f64::NAN
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<TunaMhStats> {
        let proposed = self.chain.propose(model, rng);
        let mut log_ratio = proposed.log_ratio;
        let mut stats = TunaMhStats {
            scale: self.chain.proposal.step_size(),
            evals: proposed.evals,
            divergent: proposed.divergent,
            ..TunaMhStats::default()
        };
        if let (false, Some(batch)) = (stats.divergent, &self.minibatch) {
            let c = &self.chain;
            let m = bound_scale(c.cv.order(), &c.position, &c.candidate, c.cv.center());
            let (indices, stream) = (&mut self.chain.indices, &mut self.chain.stream);
            let drawn = batch.draw(model, self.chi, m, indices, rng, stream)?;
            stats.poisson_mean = drawn.mean;
            stats.evals += self.chain.remainders(model);
            let (indices, at_theta, at_candidate) = self.chain.drawn();
            stats.batch_size = indices.len() as u64;
            // U_i = −r_i: ΔU_i = r_i(θ) − r_i(θ′): at θ minus at θ′.
            log_ratio += batch.log_factor(
                drawn,
                m,
                indices,
                at_theta,
                at_candidate,
                &mut stats.bounds_exceeded,
                rng,
            );
        }
        stats.accept_stat = if stats.divergent { 0.0 } else { log_ratio.min(0.0).exp() };
        let u: f64 = rng.random();
        stats.accepted = !stats.divergent && u.ln() < log_ratio;
        self.chain.finish(model, stats.accepted, &proposed);
        Ok(stats)
    }

    fn begin_warmup(&mut self, _num_warmup: usize) {
        self.chain.proposal.begin_warmup();
    }

    fn adapt<R: Rng + ?Sized>(
        &mut self, _model: &M, stats: &TunaMhStats, _rng: &mut R,
    ) -> Result<()> {
        self.chain.proposal.adapt(stats.accept_stat, &self.chain.position);
        Ok(())
    }

    fn end_warmup(&mut self) {
        self.chain.proposal.end_warmup();
    }

    fn tuning(&self) -> P::Tuning {
        self.chain.proposal.tuning()
    }
}
