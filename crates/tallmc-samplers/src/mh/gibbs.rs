//! Gibbs sampling of binary variables with a sequential mean test (Korattikara, Chen & Welling
//! 2014, §5): exact Gibbs with [`ExactTest`](tallmc_bounds::ExactTest), approximate Gibbs with
//! Austerity's t-test or a confidence test.
//!
//! # The update as a mean test
//!
//! The model ([`BinaryFactors`]) is a distribution P(x) ∝ Π_n f_n(x) over x ∈ {0, 1}^D. The
//! Gibbs update of variable i draws x_i from
//!
//! ```text
//! P(x_i = 1 | x_−i) = σ(S_i),   S_i = Σ_{n=1}^{N_i} l_n,   l_n = log f_n(x_i = 1, x_−i) − log f_n(x_i = 0, x_−i),
//! ```
//!
//! the sum running over the N_i factors touching i and σ the logistic function. With
//! u ~ U(0, 1), setting x_i = 1 iff u < σ(S_i) is the same as
//!
//! ```text
//! log(u / (1 − u)) < S_i   ⇔   μ₀ := log(u / (1 − u)) / N_i  <  (1/N_i) Σ_n l_n,
//! ```
//!
//! so the update is the question "is the mean of the population {l_1, …, l_{N_i}} above μ₀?",
//! which a [`MeanTest`] answers from values drawn without replacement (REFERENCES §2). The
//! kernel sets x_i = 1 iff the test says *above*. The population's range bound, needed by the
//! concentration-bound tests, is 2 B_i with B_i = [`BinaryFactors::log_ratio_bound`]`(i)`.
//!
//! # Exactness and bias
//!
//! With [`ExactTest`](tallmc_bounds::ExactTest) every l_n is used and the decision is exactly
//! u < σ(S_i): this is the exact Gibbs sampler, invariant for P. With an approximate test the
//! probability of setting x_i = 1 is some P̂(x_i = 1 | x_−i) instead. Theorem 2 of the paper:
//! if every conditional is off by at most Δ_max = max |P̂(x_i = 1 | x_−i) − P(x_i = 1 | x_−i)|
//! and the exact Gibbs sampler contracts in total variation with Dobrushin coefficient η < 1,
//! then the approximate sampler's stationary distribution P_ε is within
//! d_TV(P_ε, P) ≤ Δ_max / (1 − η) of P. [`empirical_conditional`] measures P̂ at a given state
//! (the paper's Fig. 7).
//!
//! # One step
//!
//! One [`Chain::step`] is a sweep of D updates: every variable once in order 0, …, D−1
//! ([`Scan::Systematic`], the default) or D variables drawn uniformly with replacement
//! ([`Scan::Random`]).
//!
//! # Random numbers
//!
//! The u's (and, for a random scan, the variables) come from the chain's RNG; the subsample
//! indices come from a **separate subsampling RNG**, a ChaCha8 seeded when the chain is built
//! ([`Kernel::build_chain`]) with 32 bytes drawn from the chain's RNG ([`SeedableRng::from_rng`]). So the chain's RNG is
//! consumed identically whatever test is used — one u per update — and two tests that make the
//! same decisions (e.g. the exact test and any test that always ends up using every value, in
//! however many looks) produce the same chain, decision for decision; a test that stops early
//! changes only the decisions it gets wrong.
//!
//! # State and output
//!
//! [`ApproximateGibbs`] holds the settings and the test, a prototype cloned into each
//! [`GibbsChain`] it builds. The position is x stored as 0.0 / 1.0. Nothing adapts
//! ([`NoTuning`]). The log density (`lp__`) is **NaN**:
//! the generic model exposes only log-ratios, and tracking log P(x) through flips would need all
//! N_i values of every flipped variable, which is what subsampling avoids.
//!
//! # Cost
//!
//! One factor evaluation per population value drawn, counted as
//! [`EvalCounts::terms`](tallmc_core::EvalCounts): Σ_i N_i per sweep with the exact test
//! (D·(D−1)(D−2)/2 for the three-way MRF, 485,100 at D = 100), fewer with a sequential test.
//!
//! Reference: Korattikara, Chen & Welling (2014), *Austerity in MCMC land: cutting the
//! Metropolis–Hastings budget*, ICML; §5 (the update, eq. 11), Theorem 2 and its proof in
//! Appendix A.4, §6.3 (the MRF experiment).
//!
//! ```
//! use tallmc_bounds::ExactTest;
//! use tallmc_core::{Chain, Kernel, rng::chain_rng};
//! use tallmc_models::ThreeWayMrf;
//! use tallmc_samplers::{ApproximateGibbs, GibbsConfig};
//!
//! let mrf = ThreeWayMrf::random(10, 0.5, 3)?;
//! let kernel = ApproximateGibbs::new(GibbsConfig::default(), ExactTest::new())?;
//! let mut rng = chain_rng(1, 0);
//! let mut chain = kernel.build_chain(&mrf, &[0.0; 10], &mut rng)?;
//! let stats = chain.step(&mrf, &mut rng)?;
//! // Exact Gibbs: every update used all (10 − 1)(10 − 2)/2 = 36 log-ratios.
//! assert_eq!(stats.evals.terms, 10 * 36);
//! assert_eq!(stats.n_updates, 10);
//! assert!(chain.position().iter().all(|&v| v == 0.0 || v == 1.0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;

use rand::distr::Open01;
use rand::{Rng, RngExt, SeedableRng};
use serde::Serialize;
use tallmc_bounds::{MeanTest, Population};
use tallmc_core::rng::ChainRng;
use tallmc_core::subsample::WithoutReplacement;
use tallmc_core::{BinaryFactors, Chain, Error, EvalCounts, Kernel, NoTuning, Result};

/// Order in which a sweep visits the variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum Scan {
    /// Variables 0, 1, …, D−1, each once per step.
    #[default]
    Systematic,
    /// D variables drawn uniformly with replacement (from the chain's RNG) per step.
    Random,
}

/// Settings of [`ApproximateGibbs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct GibbsConfig {
    /// Order of the updates within a step.
    pub scan: Scan,
}

/// Stats of one Gibbs sweep.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct GibbsStats {
    /// Fraction of the sweep's updates that changed their variable (the Gibbs analogue of an
    /// MH acceptance rate: how often the chain moved).
    pub accept_stat: f64,
    /// Number of variable updates (D).
    pub n_updates: u64,
    /// Number of updates that changed their variable.
    pub n_flips: u64,
    /// Number of updates that set their variable to 1.
    pub n_ones: u64,
    /// Mean over the updates of (values used)/N_i: 1 with the exact test (an update of a
    /// variable with no factors counts as 1).
    #[serde(rename = "frac_used")]
    pub mean_fraction_used: f64,
    /// Total looks (batches) the test took over the sweep.
    pub n_looks: u64,
    /// Always false: a Gibbs update cannot diverge (test errors are `Err`s).
    pub divergent: bool,
    /// Factor log-ratio evaluations, as `terms` (one per population value drawn).
    #[serde(rename = "n")]
    pub evals: EvalCounts,
    /// Population values used over the sweep (= `evals.terms`).
    pub batch_size: u64,
}

step_stats_from_fields!(GibbsStats);

/// The factor log-ratios of variable i at x, as a population for a [`MeanTest`]: drawing k
/// values draws k factor numbers without replacement and evaluates their log-ratios.
struct FactorPopulation<'a, M: ?Sized> {
    model: &'a M,
    i: usize,
    x: &'a [f64],
    sampler: &'a mut WithoutReplacement,
    range: Option<f64>,
}

impl<M: BinaryFactors + ?Sized> Population for FactorPopulation<'_, M> {
    fn size(&self) -> usize {
        self.sampler.population()
    }
    fn drawn(&self) -> usize {
        self.sampler.drawn().len()
    }
    fn draw<R: Rng + ?Sized>(&mut self, out: &mut [f64], rng: &mut R) {
        let factors = self.sampler.draw(out.len(), rng);
        self.model.factor_log_ratios(self.i, self.x, factors, out);
    }
    fn range(&self) -> Option<f64> {
        self.range
    }
}

/// What one update decided and what it cost.
#[derive(Debug, Clone, Copy)]
struct Update {
    one: bool,
    used: usize,
    looks: usize,
    population: usize,
}

/// The update decision for variable i at x given u: x_i = 1 iff the mean of the factor
/// log-ratios is above μ₀ = logit(u)/N_i (x_i = 1 iff u < 1/2 when N_i = 0).
#[allow(clippy::too_many_arguments)]
fn decide_update<M, T, R>(
    model: &M, test: &mut T, sampler: Option<&mut WithoutReplacement>, range: Option<f64>,
    i: usize, x: &[f64], u: f64, subsample_rng: &mut R,
) -> Result<Update>
where
    M: BinaryFactors + ?Sized,
    T: MeanTest,
    R: Rng + ?Sized,
{
    // logit(u) = log u − log(1 − u), accurate near both ends; u ∈ (0, 1) so it is finite.
    let logit = u.ln() - (-u).ln_1p();
    let Some(sampler) = sampler else {
        return Ok(Update { one: logit < 0.0, used: 0, looks: 0, population: 0 });
    };
    let n = sampler.population();
    sampler.reset();
    let mut population = FactorPopulation { model, i, x, sampler, range };
    let decision = test
        .decide(&mut population, logit / n as f64, subsample_rng)
        .map_err(|e| e.context(format!("Gibbs update of variable {i}")))?;
    Ok(Update {
        one: decision.above,
        used: population.drawn(),
        looks: decision.looks,
        population: n,
    })
}

/// Per-variable set-up shared by the kernel and [`empirical_conditional`]: checks N_i against
/// the test and returns the population's range bound 2 B_i (None if B_i is not a finite
/// number ≥ 0, an error then if the test needs a range).
fn variable_range<M: BinaryFactors + ?Sized, T: MeanTest>(
    model: &M, test: &T, i: usize,
) -> Result<Option<f64>> {
    let n = model.num_factors(i);
    if n == 0 {
        return Ok(None);
    }
    if u32::try_from(n).is_err() {
        return Err(Error::invalid("number of factors", n, "at most 2^32 − 1 per variable"));
    }
    test.check_population_size(n)
        .map_err(|e| e.context(format!("variable {i} has {n} factors")))?;
    let bound = model.log_ratio_bound(i);
    let range = (bound.is_finite() && bound >= 0.0).then_some(2.0 * bound);
    if range.is_none() && test.needs_range() {
        return Err(Error::InvalidRange(bound).context(format!(
            "the mean test needs a bound on the factor log-ratios, and variable {i} has log-ratio \
             bound {bound}"
        )));
    }
    Ok(range)
}

/// Checks that x has D entries, each 0.0 or 1.0.
fn check_binary_state(what: &str, x: &[f64], d: usize) -> Result<()> {
    if x.len() != d {
        return Err(Error::dimension(what, d, x.len()));
    }
    match x.iter().position(|&v| v != 0.0 && v != 1.0) {
        Some(index) => Err(Error::NotBinary { what: what.to_string(), index, value: x[index] }),
        None => Ok(()),
    }
}

/// Gibbs sampling of binary variables with the update decided by a [`MeanTest`] (see the
/// module docs): the settings and the prototype test, cloned into each [`GibbsChain`].
#[derive(Debug, Clone)]
pub struct ApproximateGibbs<T> {
    config: GibbsConfig,
    test: T,
}

impl<T: MeanTest> ApproximateGibbs<T> {
    /// A kernel deciding each update with `test`.
    pub fn new(config: GibbsConfig, test: T) -> Result<Self> {
        Ok(Self { config, test })
    }

    /// The settings.
    pub fn config(&self) -> &GibbsConfig {
        &self.config
    }

    /// The mean test.
    pub fn test(&self) -> &T {
        &self.test
    }
}

/// A running Gibbs chain: x, the chain's copy of the test, the subsampling RNG and one index
/// sampler per distinct population size.
#[derive(Debug, Clone)]
pub struct GibbsChain<T> {
    scan: Scan,
    test: T,
    /// x ∈ {0, 1}^D as 0.0 / 1.0.
    position: Vec<f64>,
    subsample_rng: ChainRng,
    /// One index sampler per distinct population size.
    samplers: Vec<WithoutReplacement>,
    /// Per variable: its sampler, `None` if it has no factors.
    sampler_of: Vec<Option<usize>>,
    /// Per variable: the range bound 2 B_i.
    ranges: Vec<Option<f64>>,
}

impl<T> GibbsChain<T> {
    /// x ∈ {0, 1}^D as 0.0 / 1.0.
    pub fn position(&self) -> &[f64] {
        &self.position
    }
}

impl<M: BinaryFactors + ?Sized, T: MeanTest + Clone + Send + Sync> Kernel<M>
    for ApproximateGibbs<T>
{
    type Chain = GibbsChain<T>;

    /// Validates x₀ (D entries, each 0.0 or 1.0) and every variable's population against the
    /// test, builds one index sampler per distinct N_i, and seeds the subsampling RNG from 32
    /// bytes of `rng`.
    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<GibbsChain<T>> {
        let d = model.num_variables();
        if d == 0 || u32::try_from(d).is_err() {
            return Err(Error::invalid("number of variables D", d, "1 ≤ D ≤ 2^32 − 1"));
        }
        check_binary_state("initial position", position, d)?;
        let mut by_size: HashMap<usize, usize> = HashMap::new();
        let mut samplers = Vec::new();
        let mut sampler_of = Vec::with_capacity(d);
        let mut ranges = Vec::with_capacity(d);
        for i in 0..d {
            ranges.push(variable_range(model, &self.test, i)?);
            let n = model.num_factors(i);
            if n == 0 {
                sampler_of.push(None);
                continue;
            }
            let slot = match by_size.get(&n) {
                Some(&s) => s,
                None => {
                    samplers.push(WithoutReplacement::new(n)?);
                    by_size.insert(n, samplers.len() - 1);
                    samplers.len() - 1
                }
            };
            sampler_of.push(Some(slot));
        }
        let subsample_rng = ChainRng::from_rng(rng);
        Ok(GibbsChain {
            scan: self.config.scan,
            test: self.test.clone(),
            position: position.to_vec(),
            subsample_rng,
            samplers,
            sampler_of,
            ranges,
        })
    }
}

impl<M: BinaryFactors + ?Sized, T: MeanTest + Send> Chain<M> for GibbsChain<T> {
    type Stats = GibbsStats;
    type Tuning = NoTuning;

    fn position(&self) -> &[f64] {
        &self.position
    }

    /// NaN: not tracked (see the module docs).
    fn log_density(&self) -> f64 {
        f64::NAN
    }

    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<GibbsStats> {
        let d = self.position.len();
        let (mut flips, mut ones, mut used, mut looks) = (0u64, 0u64, 0u64, 0u64);
        let mut fraction_sum = 0.0;
        for s in 0..d {
            let i = match self.scan {
                Scan::Systematic => s,
                // d ≤ u32::MAX (checked when built): variables are drawn as u32.
                Scan::Random => rng.random_range(0..d as u32) as usize,
            };
            let u: f64 = rng.sample(Open01);
            let sampler = self.sampler_of[i].map(|k| &mut self.samplers[k]);
            let update = decide_update(
                model,
                &mut self.test,
                sampler,
                self.ranges[i],
                i,
                &self.position,
                u,
                &mut self.subsample_rng,
            )?;
            let new = if update.one { 1.0 } else { 0.0 };
            flips += u64::from(self.position[i] != new);
            ones += u64::from(update.one);
            self.position[i] = new;
            used += update.used as u64;
            looks += update.looks as u64;
            fraction_sum += if update.population == 0 {
                1.0
            } else {
                update.used as f64 / update.population as f64
            };
        }
        Ok(GibbsStats {
            accept_stat: flips as f64 / d as f64,
            n_updates: d as u64,
            n_flips: flips,
            n_ones: ones,
            mean_fraction_used: fraction_sum / d as f64,
            n_looks: looks,
            divergent: false,
            evals: EvalCounts { terms: used, ..EvalCounts::ZERO },
            batch_size: used,
        })
    }

    fn tuning(&self) -> NoTuning {
        NoTuning
    }
}

/// The result of [`empirical_conditional`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EmpiricalConditional {
    /// Number of repeated decisions R.
    pub reps: usize,
    /// How many of them set x_i = 1.
    pub ones: usize,
    /// ones / R: the estimate of P̂(x_i = 1 | x_−i). Its binomial sd is √(P̂(1 − P̂)/R).
    pub probability: f64,
    /// Mean over the decisions of (values used)/N_i.
    pub mean_fraction_used: f64,
    /// Mean number of looks per decision.
    pub mean_looks: f64,
}

/// The empirical conditional of an update (Austerity Fig. 7): repeats the update decision of
/// variable `i` at the fixed state `x` `reps` times, each with a fresh u and a fresh subsample,
/// and reports the fraction of decisions setting x_i = 1 — an estimate of the probability
/// P̂(x_i = 1 | x_−i) the kernel with this test uses, to compare with the exact conditional
/// σ(S_i).
///
/// Both the u's and the subsample indices are drawn from `rng` (u first, then the test's
/// draws). Cost: the values used, at most `reps`·N_i factor evaluations. Allocates one index
/// sampler of N_i entries.
///
/// Errors: i ≥ D, x not a binary state of length D, `reps` = 0, a population the test
/// rejects, a test error.
pub fn empirical_conditional<M, T, R>(
    model: &M, test: &mut T, i: usize, x: &[f64], reps: usize, rng: &mut R,
) -> Result<EmpiricalConditional>
where
    M: BinaryFactors + ?Sized,
    T: MeanTest,
    R: Rng + ?Sized,
{
    let d = model.num_variables();
    if i >= d {
        return Err(Error::invalid("variable", i, format!("an index < D = {d}")));
    }
    check_binary_state("state", x, d)?;
    if reps == 0 {
        return Err(Error::invalid("reps", 0, "at least 1"));
    }
    let range = variable_range(model, test, i)?;
    let n = model.num_factors(i);
    let mut sampler = if n == 0 { None } else { Some(WithoutReplacement::new(n)?) };
    let (mut ones, mut looks) = (0usize, 0usize);
    let mut fraction_sum = 0.0;
    for _ in 0..reps {
        let u: f64 = rng.sample(Open01);
        let update = decide_update(model, test, sampler.as_mut(), range, i, x, u, rng)?;
        ones += usize::from(update.one);
        looks += update.looks;
        fraction_sum += if n == 0 { 1.0 } else { update.used as f64 / update.population as f64 };
    }
    Ok(EmpiricalConditional {
        reps,
        ones,
        probability: ones as f64 / reps as f64,
        mean_fraction_used: fraction_sum / reps as f64,
        mean_looks: looks as f64 / reps as f64,
    })
}
