//! TunaMH (Zhang, Cooper & De Sa, NeurIPS 2020): exact minibatch Metropolis–Hastings with a
//! Poisson minibatch drawn against per-datum Lipschitz constants, tunable between cost and
//! acceptance by χ.
//!
//! **Setting.** Write the energy of the likelihood as U(θ) = Σ_i U_i(θ), U_i = −ℓ_i, with
//! per-datum bounds |U_i(θ′) − U_i(θ)| ≤ c_i M(θ, θ′), here M = ‖θ′ − θ‖₂ and c_i the model's
//! [`TermLipschitz`] constants, C = Σ_i c_i. The prior and the proposal are cheap and enter
//! the acceptance exactly, through R(θ, θ′) = p(θ′) q(θ|θ′) / (p(θ) q(θ′|θ)).
//!
//! **One step.** Propose θ′ ~ q(·|θ); with λ = χ C² M²:
//!
//! ```text
//! B ~ Poisson(λ + C M)
//! for b = 1…B:  i ~ c_i / C;  keep i with probability (λ c_i M + C φ_i) / (λ c_i M + C c_i M),
//!               φ_i = φ_i(θ, θ′) = ½ (U_i(θ′) − U_i(θ) + c_i M) ∈ [0, c_i M]
//! accept with   min(1, R(θ, θ′) Π_{i kept} (λ c_i M + C φ_i(θ′, θ)) / (λ c_i M + C φ_i(θ, θ′))),
//!               φ_i(θ′, θ) = c_i M − φ_i(θ, θ′).
//! ```
//!
//! The kept multiset is, given (θ, θ′), a Poisson process whose law makes the move reversible
//! with respect to π on the extended space (Zhang et al. 2020, Theorem 1): the chain is exactly
//! π-invariant. E(B) = χ C² M² + C M: χ trades data per step against acceptance (χ → ∞
//! approaches MH's acceptance, χ = 0 reads fewest data). Without control variates C = O(N), so
//! steps must be O(1/N) for O(1) data per step: TunaMH alone mixes slowly on tall data, which
//! MH-SS addresses.
//!
//! **Cost**: two terms per drawn index (U_i at θ and θ′). **Random numbers**: the proposal, B,
//! the keep decisions and the acceptance uniform from the chain's RNG; the indices from the
//! chain's index stream (`index_stream`: a sequence fixed by the seed, whatever is accepted).

use rand::{Rng, RngExt};
use serde::Serialize;
use tallmc_core::termwise_bounds::lipschitz_constants;
use tallmc_core::{Chain, Error, EvalCounts, Kernel, LogPrior, Result, TermLipschitz, Terms};

use super::index_stream::IndexStream;
use super::poisson_minibatch::PoissonMinibatch;
use super::proposal::Proposal;

/// Settings of [`TunaMh`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TunaMhConfig {
    /// χ ≥ 0, the weight of λ = χ C² M² in the Poisson minibatch (default 10⁻⁴).
    pub chi: f64,
}

impl Default for TunaMhConfig {
    fn default() -> Self {
        Self { chi: 1e-4 }
    }
}

/// Stats of one TunaMH step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TunaMhStats {
    /// The step's acceptance probability given the kept minibatch.
    pub accept_stat: f64,
    /// Whether θ′ was accepted.
    pub accepted: bool,
    /// Whether the proposal's or the prior's log density was NaN (rejected).
    pub divergent: bool,
    /// The proposal's step size.
    #[serde(rename = "stepsize")]
    pub scale: f64,
    /// Per-datum evaluations.
    #[serde(rename = "n")]
    pub evals: EvalCounts,
    /// The Poisson minibatch's size B.
    pub batch_size: u64,
    /// Its mean, λ + C M.
    pub poisson_mean: f64,
    /// Drawn data with |U_i(θ′) − U_i(θ)| > c_i M: a Lipschitz constant that does not hold
    /// (the model's `TermLipschitz` is wrong), so the step was not exact. Should be 0.
    pub bounds_exceeded: u64,
}

step_stats_from_fields!(TunaMhStats);

/// TunaMH over the proposal `P` (see the module docs).
#[derive(Debug, Clone)]
pub struct TunaMh<P> {
    proposal: P,
    config: TunaMhConfig,
}

impl<P> TunaMh<P> {
    /// TunaMH with `proposal` and `config`.
    ///
    /// # Errors
    /// χ negative, NaN or infinite.
    pub fn new(proposal: P, config: TunaMhConfig) -> Result<Self> {
        if !(config.chi >= 0.0 && config.chi.is_finite()) {
            return Err(Error::invalid("TunaMH χ", config.chi, "a finite number ≥ 0"));
        }
        Ok(Self { proposal, config })
    }
}

/// A running TunaMH chain.
#[derive(Debug, Clone)]
pub struct TunaMhChain<P> {
    proposal: P,
    chi: f64,
    /// Over c_i; `None` when every c_i is 0 (the likelihood is constant: no data factor).
    minibatch: Option<PoissonMinibatch>,
    /// The minibatches' indices (see `index_stream`).
    stream: IndexStream,
    position: Vec<f64>,
    log_prior: f64,
    candidate: Vec<f64>,
    indices: Vec<u32>,
    at_theta: Vec<f64>,
    at_candidate: Vec<f64>,
}

impl<M, P> Kernel<M> for TunaMh<P>
where
    M: Terms + LogPrior + TermLipschitz + ?Sized,
    P: Proposal<M> + Clone + Send + Sync,
{
    type Chain = TunaMhChain<P>;

    /// Builds the alias table of the c_i (O(N d); no term evaluated), checks θ₀, and seeds the
    /// index stream (one `u64` of `rng`).
    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<TunaMhChain<P>> {
        let d = model.dim();
        tallmc_core::error::check_finite_vector("initial position", position, d)?;
        let mut proposal = self.proposal.clone();
        proposal.init(model)?;
        let lipschitz = lipschitz_constants(model);
        let minibatch = PoissonMinibatch::new(lipschitz, "per-datum Lipschitz constant")?;
        let log_prior = model.log_prior(position);
        if !log_prior.is_finite() {
            return Err(Error::NonFiniteLogDensity {
                what: format!("the log prior at the initial position {position:?}"),
                value: log_prior,
            });
        }
        Ok(TunaMhChain {
            proposal,
            chi: self.config.chi,
            minibatch,
            stream: IndexStream::seeded_from(model, rng),
            position: position.to_vec(),
            log_prior,
            candidate: vec![0.0; d],
            indices: Vec::new(),
            at_theta: Vec::new(),
            at_candidate: Vec::new(),
        })
    }
}

impl<M, P> Chain<M> for TunaMhChain<P>
where
    M: Terms + LogPrior + TermLipschitz + ?Sized,
    P: Proposal<M> + Send,
{
    type Stats = TunaMhStats;
    type Tuning = P::Tuning;

    fn position(&self) -> &[f64] {
        &self.position
    }

    /// Not computed (TunaMH never evaluates the full-data log density): NaN.
    fn log_density(&self) -> f64 {
        f64::NAN
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<TunaMhStats> {
        let (log_correction, proposal_evals) =
            self.proposal.propose(model, &self.position, &mut self.candidate, rng);
        let mut stats = TunaMhStats {
            scale: self.proposal.step_size(),
            evals: proposal_evals,
            ..TunaMhStats::default()
        };
        let candidate_prior = model.log_prior(&self.candidate);
        let mut log_ratio = candidate_prior - self.log_prior + log_correction;
        stats.divergent = log_ratio.is_nan() || candidate_prior == f64::INFINITY;
        if let (false, Some(batch)) = (stats.divergent, &self.minibatch) {
            let m = (self.candidate.iter().zip(&self.position))
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                .sqrt();
            let drawn = batch.draw(model, self.chi, m, &mut self.indices, rng, &mut self.stream)?;
            stats.poisson_mean = drawn.mean;
            let b = self.indices.len();
            self.at_theta.resize(b, 0.0);
            self.at_candidate.resize(b, 0.0);
            model.log_terms(&self.position, &self.indices, &mut self.at_theta);
            model.log_terms(&self.candidate, &self.indices, &mut self.at_candidate);
            stats.evals += EvalCounts::terms(2 * b);
            stats.batch_size = b as u64;
            // ΔU_i = U_i(θ′) − U_i(θ) = ℓ_i(θ) − ℓ_i(θ′): at θ minus at θ′.
            log_ratio += batch.log_factor(
                drawn,
                m,
                &self.indices,
                &self.at_theta,
                &self.at_candidate,
                &mut stats.bounds_exceeded,
                rng,
            );
        }
        stats.accept_stat = if stats.divergent { 0.0 } else { log_ratio.min(0.0).exp() };
        let u: f64 = rng.random();
        stats.accepted = !stats.divergent && u.ln() < log_ratio;
        if stats.accepted {
            self.position.copy_from_slice(&self.candidate);
            self.log_prior = candidate_prior;
        }
        self.proposal.observe(&self.position);
        Ok(stats)
    }

    fn begin_warmup(&mut self, _num_warmup: usize) {
        self.proposal.begin_warmup();
    }

    fn adapt<R: Rng + ?Sized>(
        &mut self, _model: &M, stats: &TunaMhStats, _rng: &mut R,
    ) -> Result<()> {
        self.proposal.adapt(stats.accept_stat, &self.position);
        Ok(())
    }

    fn end_warmup(&mut self) {
        self.proposal.end_warmup();
    }

    fn tuning(&self) -> P::Tuning {
        self.proposal.tuning()
    }
}
