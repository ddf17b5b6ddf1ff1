//! Scalable Metropolis–Hastings (SMH; Cornish, Vanetti, Bouchard-Côté, Deligiannidis & Doucet,
//! ICML 2019): exact MH whose acceptance is factorised over the data, with each datum's factor
//! decided by a Poisson minibatch drawn against per-datum bounds.
//!
//! **Factorisation.** With the order-k Taylor expansion ℓ̂_i of ℓ_i at a centre θ̂ (k = 1 or 2;
//! [`ControlVariate`](tallmc_estimators::ControlVariate)) and the remainders r_i = ℓ_i − ℓ̂_i,
//! the target factorises as
//!
//! ```text
//! π(θ) ∝ π̂(θ) · Π_i exp(r_i(θ)),      π̂(θ) = p(θ) exp(Σ_i ℓ̂_i(θ)),
//! ```
//!
//! and SMH accepts θ′ ~ q(·|θ) with the product of one MH ratio per factor,
//!
//! ```text
//! α(θ, θ′) = min(1, π̂(θ′) q(θ|θ′) / (π̂(θ) q(θ′|θ))) · Π_i min(1, exp(r_i(θ′) − r_i(θ))).
//! ```
//!
//! Each factor ρ_j satisfies ρ_j(θ′, θ) = 1/ρ_j(θ, θ′), and the ratios multiply to
//! π(θ′)q(θ|θ′)/(π(θ)q(θ′|θ)); so π(θ)q(θ′|θ)α(θ, θ′) is symmetric in (θ, θ′): the chain is
//! π-reversible, exactly (Cornish et al. 2019, Theorem 1). Σ_i ℓ̂_i(θ) costs O(d²) from the data
//! sums at θ̂ (one pass when a chain is built), so the first factor needs no data.
//!
//! **The data factors by thinning.** Π_i min(1, exp(r_i(θ′) − r_i(θ))) = exp(−Σ_i λ_i) with
//! λ_i = max(0, r_i(θ) − r_i(θ′)): the probability that no event occurs in N independent Poisson
//! counts of means λ_i. With ‖·‖₁ distances to θ̂ and a_{k+1,i} the per-datum derivative bounds
//! (`tallmc_core::termwise_bounds`), Taylor's theorem gives |r_i(θ)| ≤ a_{k+1,i}‖θ − θ̂‖₁^{k+1}/(k+1)!, so
//!
//! ```text
//! λ_i ≤ |r_i(θ)| + |r_i(θ′)| ≤ φ(θ, θ′) ψ_i,   φ = (‖θ − θ̂‖₁^{k+1} + ‖θ′ − θ̂‖₁^{k+1}) / (k+1)!,   ψ_i = a_{k+1,i}.
//! ```
//!
//! The kernel draws B ~ Poisson(φΨ), Ψ = Σ_i ψ_i, then B indices i with probability ψ_i/Ψ (an
//! [`AliasTable`] built with the chain), and rejects θ′ if any of them fires with probability
//! λ_i/(φψ_i): the events that fire form a Poisson process of total mean Σ_i λ_i, so none fires
//! with probability exp(−Σ_i λ_i). When φΨ ≥ N, evaluating every λ_i is cheaper than the
//! minibatch, and the kernel accepts with exp(−Σ_i λ_i) computed over all N data — the same
//! probability. (Not when the rows live elsewhere, a cluster's shards: there it thins the
//! minibatch whatever its size, which is as exact and fetches only the rows drawn. A run over
//! shards then differs from the local run from the first such iteration on.)
//!
//! **Cost** (per-datum evaluations, counted as every kernel's): the construction pass at θ̂
//! (reported with the first step), then per drawn index two remainders, r_i at θ and at θ′ (each
//! ℓ_i and the expansion's per-datum pieces: what the [`DifferenceTerms`] engine reports). With
//! a proposal scale ∝ N^{−1/2} around θ̂, E(B) = φΨ is O(1) for k = 1 and O(N^{−1/2}) for k = 2.
//! The per-datum bounds ψ_i are computed once, O(N d), and evaluate no ℓ_i.
//!
//! **Random numbers**: the proposal, the uniforms and B come from the chain's RNG; the indices
//! from the chain's index stream (`index_stream`: a sequence fixed by the seed, whatever the
//! chain accepts).

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Poisson};
use serde::Serialize;
use tallmc_core::termwise_bounds::derivative_constants;
use tallmc_core::{
    AliasTable, Chain, Error, EvalCounts, Kernel, LogPrior, Result, TermConstant,
    TermCurvatureConstants, TermHessians, TermThirdDerivativeConstants, Terms,
};
use tallmc_estimators::{CvOrder, DifferenceTerms};

use super::proposal::Proposal;
use super::taylor_expansions::{ExpansionChain, start_from_expansions};

/// Settings of [`Smh`]: the Taylor order k and the centre θ̂.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SmhConfig {
    /// The order k of the Taylor expansions, 1 or 2.
    pub order: CvOrder,
    /// The centre θ̂ of the expansions (usually the posterior mode): d finite values.
    pub center: Vec<f64>,
}

/// Stats of one SMH step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SmhStats {
    /// 1 if θ′ was accepted, else 0: an unbiased estimate of the acceptance probability α
    /// (which is not computed: the data factors are decided by thinning).
    pub accept_stat: f64,
    /// Whether θ′ was accepted.
    pub accepted: bool,
    /// Whether the proposal or its first factor was NaN (rejected).
    pub divergent: bool,
    /// The proposal's step size.
    #[serde(rename = "stepsize")]
    pub scale: f64,
    /// Per-datum evaluations.
    #[serde(rename = "n")]
    pub evals: EvalCounts,
    /// The Poisson minibatch's size B (N when every datum was evaluated; 0 when the first
    /// factor rejected).
    pub batch_size: u64,
    /// φΨ, the Poisson minibatch's mean (0 when the first factor rejected).
    pub poisson_mean: f64,
    /// Drawn data whose λ_i exceeded φψ_i: a per-datum bound that does not hold (its model's
    /// `TermCurvatureConstants` or `TermThirdDerivativeConstants` is wrong), so the step was
    /// not exact. Should be 0; the run reports any.
    pub bounds_exceeded: u64,
}

step_stats_from_fields!(SmhStats);

/// Scalable Metropolis–Hastings over the proposal `P` with the difference engine `E` (see the
/// module docs).
#[derive(Debug, Clone)]
pub struct Smh<P, E> {
    proposal: P,
    engine: E,
    config: SmhConfig,
}

impl<P, E> Smh<P, E> {
    /// SMH with `proposal`, the engine that computes the remainders r_i (`RankOne` for models
    /// with a linear predictor, `HessianProducts` for any model with Hessians) and `config`.
    ///
    /// # Errors
    /// An order other than 1 or 2, a centre with a NaN or infinite coordinate (its length is
    /// checked when a chain is built).
    pub fn new(proposal: P, engine: E, config: SmhConfig) -> Result<Self> {
        if config.order == CvOrder::Zero {
            return Err(Error::invalid(
                "SMH order",
                0,
                "1 or 2 (the order of the Taylor expansions the data factors correct)",
            ));
        }
        tallmc_core::error::check_finite_vector(
            "SMH centre θ̂",
            &config.center,
            config.center.len(),
        )?;
        Ok(Self { proposal, engine, config })
    }

    /// The settings.
    pub fn config(&self) -> &SmhConfig {
        &self.config
    }
}

/// A running SMH chain: θ, the proposal's copy, the expansions at θ̂ and the index stream
/// (shared with MH-SS), and the alias table of the per-datum bounds.
#[derive(Debug, Clone)]
pub struct SmhChain<P, E> {
    chain: ExpansionChain<P, E>,
    /// Over ψ_i; `None` when every ψ_i is 0 (the expansions are exact: no data factor).
    alias: Option<AliasTable>,
    /// ψ_i = a_{k+1,i}.
    psi: Vec<f64>,
}

impl<P, E> SmhChain<P, E> {
    /// θ.
    pub fn position(&self) -> &[f64] {
        &self.chain.position
    }

    /// Ψ = Σ_i ψ_i (0 when the expansions are exact).
    pub fn bound_total(&self) -> f64 {
        self.alias.as_ref().map_or(0.0, AliasTable::total)
    }
}

/// What SMH needs of a model: the expansions' pieces (Hessians), the prior and the per-datum
/// derivative bounds of both orders.
pub trait SmhModel:
    TermHessians + LogPrior + TermCurvatureConstants + TermThirdDerivativeConstants
{
}
impl<M: TermHessians + LogPrior + TermCurvatureConstants + TermThirdDerivativeConstants + ?Sized>
    SmhModel for M
{
}

/// ψ_i = a_{k+1,i} for every datum.
fn bounds<M: SmhModel + ?Sized>(model: &M, order: CvOrder) -> Result<Vec<f64>> {
    let constant = match order {
        CvOrder::Two => TermConstant::ThirdDerivativeBound,
        _ => TermConstant::SecondDerivativeBound,
    };
    let psi = derivative_constants(model, constant)
        .ok_or(Error::Internal("a derivative bound is a derivative constant"))?;
    if let Some(i) = psi.iter().position(|p| !(p.is_finite() && *p >= 0.0)) {
        return Err(Error::invalid(
            "per-datum derivative bound",
            format!("{} for datum {i}", psi[i]),
            "a finite number ≥ 0",
        ));
    }
    Ok(psi)
}

impl<M, P, E> Kernel<M> for Smh<P, E>
where
    M: SmhModel + ?Sized,
    P: Proposal<M> + Clone + Send + Sync,
    E: DifferenceTerms<M> + Clone + Send + Sync,
{
    type Chain = SmhChain<P, E>;

    /// Builds the expansions at θ̂ (one pass over the data, reported with the first step) and
    /// the alias table of the ψ_i, checks θ₀, and seeds the index stream (one `u64` of `rng`).
    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<SmhChain<P, E>> {
        let start = start_from_expansions(
            "SMH",
            model,
            &self.proposal,
            &self.config.center,
            position,
            self.config.order,
        )?;
        let psi = bounds(model, self.config.order)?;
        let alias = if psi.iter().all(|&p| p == 0.0) { None } else { Some(AliasTable::new(&psi)?) };
        let chain = ExpansionChain::new(model, start, self.engine.clone(), position, rng);
        Ok(SmhChain { chain, alias, psi })
    }
}

impl<P, E> SmhChain<P, E> {
    /// φ(θ, θ′) = (‖θ − θ̂‖₁^{k+1} + ‖θ′ − θ̂‖₁^{k+1}) / (k+1)!.
    fn phi(&self) -> f64 {
        let center = self.chain.cv.center();
        let l1 = |x: &[f64]| x.iter().zip(center).map(|(a, c)| (a - c).abs()).sum::<f64>();
        let (a, b) = (l1(&self.chain.position), l1(&self.chain.candidate));
        match self.chain.cv.order() {
            CvOrder::Two => (a * a * a + b * b * b) / 6.0,
            _ => (a * a + b * b) / 2.0,
        }
    }

    /// Whether the data factors Π_i min(1, exp(r_i(θ′) − r_i(θ))) accept (see the module docs):
    /// by thinning a Poisson minibatch, or over all N data when that is cheaper and the rows
    /// are here (a model whose rows live elsewhere always thins: still exact, without fetching
    /// every row).
    fn data_factors<M: Terms + ?Sized, R: Rng + ?Sized>(
        &mut self, model: &M, rng: &mut R, stats: &mut SmhStats,
    ) -> Result<bool>
    where
        E: DifferenceTerms<M>,
    {
        let Some(alias) = &self.alias else {
            return Ok(true);
        };
        let n = self.chain.cv.num_terms();
        let phi = self.phi();
        let mean = phi * alias.total();
        stats.poisson_mean = mean;
        self.chain.indices.clear();
        if (mean >= n as f64 || !mean.is_finite()) && model.row_service().is_none() {
            // Cheaper to evaluate every factor: accept with probability exp(−Σ_i λ_i).
            self.chain.indices.extend(0..n as u32);
            stats.evals += self.chain.remainders(model);
            stats.batch_size = n as u64;
            let (_, at_theta, at_candidate) = self.chain.drawn();
            let sum: f64 = at_theta.iter().zip(at_candidate).map(|(r, r2)| (r - r2).max(0.0)).sum();
            let v: f64 = rng.random();
            return Ok(v < (-sum).exp());
        }
        let b = if mean > 0.0 {
            let poisson = Poisson::new(mean)
                .map_err(|e| Error::invalid("SMH Poisson mean φΨ", mean, e.to_string()))?;
            poisson.sample(rng) as usize
        } else {
            0
        };
        self.chain.stream.extend(model, alias, b, &mut self.chain.indices)?;
        stats.evals += self.chain.remainders(model);
        stats.batch_size = b as u64;
        let (indices, at_theta, at_candidate) = self.chain.drawn();
        let mut none_fired = true;
        for (k, &i) in indices.iter().enumerate() {
            let lambda = (at_theta[k] - at_candidate[k]).max(0.0);
            let bound = phi * self.psi[i as usize];
            let v: f64 = rng.random();
            // λ_i ≤ φψ_i by Taylor's theorem: the event fires with probability λ_i/(φψ_i).
            none_fired &= v * bound >= lambda;
            // Beyond rounding (a relative 10⁻⁹ of the remainders' sizes), the bound is wrong.
            let slack = 1e-9 * (at_theta[k].abs() + at_candidate[k].abs()) + 1e-300;
            stats.bounds_exceeded += u64::from(lambda > bound + slack);
        }
        Ok(none_fired)
    }
}

impl<M, P, E> Chain<M> for SmhChain<P, E>
where
    M: SmhModel + ?Sized,
    P: Proposal<M> + Send,
    E: DifferenceTerms<M> + Send,
{
    type Stats = SmhStats;
    type Tuning = P::Tuning;

    fn position(&self) -> &[f64] {
        &self.chain.position
    }

    /// Not computed (SMH never evaluates the full-data log density): NaN.
    fn log_density(&self) -> f64 {
        f64::NAN
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<SmhStats> {
        let proposed = self.chain.propose(model, rng);
        let mut stats = SmhStats {
            scale: self.chain.proposal.step_size(),
            evals: proposed.evals,
            divergent: proposed.divergent,
            ..SmhStats::default()
        };
        // The first factor, from the expansions' sums: no data.
        let u: f64 = rng.random();
        if stats.divergent || u.ln() >= proposed.log_ratio {
            self.chain.finish(model, false, &proposed);
            return Ok(stats);
        }
        // The data factors.
        let accepted = self.data_factors(model, rng, &mut stats)?;
        stats.accepted = accepted;
        stats.accept_stat = f64::from(u8::from(accepted));
        self.chain.finish(model, accepted, &proposed);
        Ok(stats)
    }

    fn begin_warmup(&mut self, _num_warmup: usize) {
        self.chain.proposal.begin_warmup();
    }

    fn adapt<R: Rng + ?Sized>(&mut self, _model: &M, stats: &SmhStats, _rng: &mut R) -> Result<()> {
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
