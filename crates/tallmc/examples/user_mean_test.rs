//! A mean test of your own: a sequential concentration-bound test written from scratch against
//! the `MeanTest` and `Population` traits of `tallmc-bounds` (no library test is used), plugged
//! into the minibatch Metropolis–Hastings kernels of the confidence sampler (Bardenet, Doucet &
//! Holmes 2014, 2017) on a logistic regression, and compared with full-data HMC.
//!
//! ```sh
//! cargo run --release -p tallmc --example user_mean_test          # seed 1
//! cargo run --release -p tallmc --example user_mean_test -- 7     # another seed
//! ```
//!
//! # The question a mean test answers
//!
//! Minibatch MH accepts θ′ ~ q(·|θ) iff the mean over the N data of l_i = ℓ_i(θ′) − ℓ_i(θ)
//! exceeds μ₀ = (1/N) log[u p(θ) q(θ′|θ) / (p(θ′) q(θ|θ′))]. The kernel hands a [`MeanTest`] the
//! population {l_i} (revealed in batches drawn uniformly without replacement, with a bound R ≥
//! max l_i − min l_i when the model has term bounds) and the threshold μ₀; the test returns a
//! [`Decision`]: above or not, and how many values it looked at. The proxy kernel
//! (`ProxyMinibatchMh`, BDH 2017) asks the same question about the remainders
//! r_i = l_i − ℘_i after a second-order Taylor proxy ℘_i around the mode, against the shifted
//! threshold μ₀ − (1/N) Σ ℘_i; their range bound is O(‖θ − θ*‖³), so a test decides from few
//! values. Both kernels take any `T: MeanTest`.
//!
//! # The test defined here: the smaller of two bounds, a union bound over looks
//!
//! The test looks at t_1 = b, t_k = min(N, 2 t_{k−1}) values. At look k, with x̄_t the mean and
//! σ̂_t the standard deviation (divisor t) of the t values drawn, it uses the error level
//! δ_k = δ / (k(k + 1)) (so Σ_k δ_k ≤ δ), split in two halves between
//!
//! ```text
//! Hoeffding–Serfling:            h_t = R √(ρ_t log(4/δ_k) / (2t))
//! empirical Bernstein–Serfling:  e_t = σ̂_t √(2 ρ_t log(20/δ_k) / t) + κ R log(20/δ_k) / t,
//! ρ_t = 1 − (t − 1)/N (t ≤ N/2),  (1 − t/N)(1 + 1/t) (t > N/2),   κ = 7/3 + 3/√2,
//! ```
//!
//! (two-sided forms of Bardenet & Maillard 2015, Bernoulli 21(3), Cor. 2.5 and Thm. 4.3, each
//! at level δ_k/2), and stops as soon as |x̄_t − μ₀| > c_t = min(h_t, e_t), deciding
//! "above" iff x̄_t > μ₀. At t = N it compares the exact mean with μ₀.
//!
//! **Guarantee.** Each interval [x̄_t − h_t, x̄_t + h_t], [x̄_t − e_t, x̄_t + e_t] misses the
//! population mean μ with probability at most δ_k/2, so with probability ≥ 1 − Σ_k δ_k ≥ 1 − δ
//! every interval the test ever looks at contains μ; on that event a stop at |x̄_t − μ₀| > c_t
//! puts μ on the same side of μ₀ as x̄_t. **The decision differs from the exact one with
//! probability at most δ**, for any population whose values lie within the range bound R. (So
//! each transition is within δ of exact MH's in total variation; the stationary bias is not
//! bounded by δ alone, and the example's test measures it against HMC.)
//!
//! **Cost.** t values (2t term evaluations in the plain kernel, 3t terms + t gradients + t
//! Hessian-vector products with proxies); t = N at worst. It is small when |μ − μ₀| is large
//! compared with c_t. Without proxies, at equilibrium |μ − μ₀| = O(1/N) while the l_i spread
//! over O(N^{−1/2}), so on n = 10⁴ points the plain kernel needs (nearly) all the data at each
//! step — the example shows it in a short run; with proxies a few hundred values suffice.

#![allow(clippy::print_stdout)]

use std::error::Error;

use tallmc::bounds::{Decision, Error as TestError, MeanTest, Population, RunningStats};
use tallmc::models::synthetic::two_class_2d;
use tallmc::prelude::*;

mod common;

/// Rows of the simulated data set.
pub const N: usize = 10_000;
/// Dimension of θ (intercept + 2 covariates).
pub const D: usize = 3;
/// Prior standard deviation of every coefficient.
pub const PRIOR_SD: f64 = 10.0;
/// The user test's error level δ in the example's run.
pub const DELTA: f64 = 0.01;
/// The user test's first look b.
pub const FIRST_BATCH: usize = 100;
/// Chains of each run.
pub const CHAINS: usize = 4;

// ---------------------------------------------------------------------------------------------
// The mean test
// ---------------------------------------------------------------------------------------------

/// κ = 7/3 + 3/√2 of the empirical Bernstein–Serfling bound.
const KAPPA: f64 = 7.0 / 3.0 + 3.0 / std::f64::consts::SQRT_2;

/// Relative rounding allowance between the spread of the values drawn and the range bound.
const RANGE_SLACK: f64 = 1e-9;

/// The settings of [`TwoBoundTest`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwoBoundConfig {
    /// Error level δ ∈ (0, 1): the probability that a decision differs from the exact one.
    pub delta: f64,
    /// Size b ≥ 1 of the first look; later looks double the number of values.
    pub first_batch: usize,
}

impl TwoBoundConfig {
    /// Checks δ ∈ (0, 1) and b ≥ 1.
    pub fn new(delta: f64, first_batch: usize) -> Result<Self, TestError> {
        if !(delta > 0.0 && delta < 1.0) {
            return Err(TestError::invalid("delta", delta, "a number in (0, 1)"));
        }
        if first_batch == 0 {
            return Err(TestError::invalid("first_batch", 0, "at least 1"));
        }
        Ok(Self { delta, first_batch })
    }
}

/// The sequential test described in the file's docs: stop when the mean is further from μ₀
/// than the smaller of a Hoeffding–Serfling and an empirical Bernstein–Serfling half-width,
/// with a union bound over looks.
#[derive(Debug, Clone)]
pub struct TwoBoundTest {
    config: TwoBoundConfig,
    /// Scratch for one look's values (grows to the largest look, then reused).
    buffer: Vec<f64>,
}

impl TwoBoundTest {
    /// A test with validated settings.
    pub fn new(config: TwoBoundConfig) -> Self {
        Self { config, buffer: Vec::new() }
    }

    /// c_t = min(h_t, e_t) at look k after t of N values, with sd σ̂_t and range R.
    pub fn half_width(&self, k: usize, t: usize, n: usize, sd: f64, range: f64) -> f64 {
        let (tf, nf, kf) = (t as f64, n as f64, k as f64);
        let delta_k = self.config.delta / (kf * (kf + 1.0));
        let rho =
            if 2 * t <= n { 1.0 - (tf - 1.0) / nf } else { (1.0 - tf / nf) * (1.0 + 1.0 / tf) };
        let rho = rho.max(0.0);
        let hoeffding = range * (rho * (4.0 / delta_k).ln() / (2.0 * tf)).sqrt();
        let log_b = (20.0 / delta_k).ln();
        let bernstein = sd * (2.0 * rho * log_b / tf).sqrt() + KAPPA * range * log_b / tf;
        hoeffding.min(bernstein)
    }
}

impl MeanTest for TwoBoundTest {
    fn decide<P: Population + ?Sized, R: rand::Rng + ?Sized>(
        &mut self, population: &mut P, threshold: f64, rng: &mut R,
    ) -> Result<Decision, TestError> {
        if threshold.is_nan() {
            return Err(TestError::NanThreshold);
        }
        if population.drawn() != 0 {
            return Err(TestError::PopulationNotReset { drawn: population.drawn() });
        }
        let n = population.size();
        self.check_population_size(n)?;
        if threshold.is_infinite() {
            // μ > −∞ always, μ > +∞ never: no value needed.
            let above = threshold < 0.0;
            return Ok(Decision { above, used: 0, looks: 0, mean: f64::NAN, half_width: 0.0 });
        }
        let range = population.range().ok_or(TestError::MissingRange { test: "two-bound test" })?;
        if !(range.is_finite() && range >= 0.0) {
            return Err(TestError::InvalidRange(range));
        }
        // The library's running moments: a compensated (Neumaier) sum for the mean, Welford's
        // recurrence for the variance, and the range of the values seen.
        let mut moments = RunningStats::default();
        let (mut t, mut k) = (0, 0);
        loop {
            k += 1;
            let target = if k == 1 { self.config.first_batch.min(n) } else { (2 * t).min(n) };
            let batch = target - t;
            if self.buffer.len() < batch {
                self.buffer.resize(batch, 0.0);
            }
            let values = &mut self.buffer[..batch];
            population.draw(values, rng);
            // A NaN or infinite value is an error naming it and its position.
            moments.push_all(values)?;
            t = target;
            if moments.spread() > range * (1.0 + RANGE_SLACK) {
                return Err(TestError::RangeExceeded { observed: moments.spread(), bound: range });
            }
            let mean = moments.mean();
            if t == n {
                return Ok(Decision {
                    above: mean > threshold,
                    used: n,
                    looks: k,
                    mean,
                    half_width: 0.0,
                });
            }
            let c = self.half_width(k, t, n, moments.sd_biased(), range);
            if (mean - threshold).abs() > c {
                return Ok(Decision {
                    above: mean > threshold,
                    used: t,
                    looks: k,
                    mean,
                    half_width: c,
                });
            }
        }
    }

    fn needs_range(&self) -> bool {
        true
    }

    fn check_population_size(&self, n: usize) -> Result<(), TestError> {
        // Looks are capped at N, so every N ≥ 1 works.
        if n == 0 { Err(TestError::EmptyPopulation) } else { Ok(()) }
    }

    fn describe(&self) -> Vec<(String, String)> {
        vec![
            (
                "test".into(),
                "two-bound (min of Hoeffding–Serfling, emp. Bernstein–Serfling)".into(),
            ),
            ("delta".into(), self.config.delta.to_string()),
            ("first_batch".into(), self.config.first_batch.to_string()),
            ("looks".into(), "doubling; delta_k = delta / (k (k + 1))".into()),
        ]
    }
}

// ---------------------------------------------------------------------------------------------
// Runs
// ---------------------------------------------------------------------------------------------

/// Both runs on one data set.
#[derive(Debug, Clone)]
pub struct Report {
    /// Parameter names.
    pub names: Vec<String>,
    /// Full-data HMC (the reference).
    pub hmc: RunSummary,
    /// Minibatch MH with Taylor proxies (the confidence sampler of BDH 2017) deciding with
    /// [`TwoBoundTest`].
    pub user: RunSummary,
    /// A short run of the plain minibatch MH kernel (no proxies) with the same test: its data
    /// fraction only (too short for the summaries to mean much).
    pub plain: RunSummary,
}

impl Report {
    /// The proxy run's mean fraction of the data used per iteration while drawing.
    pub fn data_fraction(&self) -> f64 {
        self.user.batch / N as f64
    }

    /// The plain kernel's mean fraction of the data used per iteration while drawing.
    pub fn plain_data_fraction(&self) -> f64 {
        self.plain.batch / N as f64
    }
}

/// Simulates a two-class logistic data set (n = [`N`], intercept + 2 covariates) from `seed`
/// and samples it with full-data HMC and with minibatch MH with Taylor proxies around the
/// Laplace mode deciding with [`TwoBoundTest`] at δ = [`DELTA`] (random walk
/// N(θ, (2.38²/d) Σ_L), Σ_L the Laplace covariance), [`CHAINS`] chains each, started
/// over-dispersed around the mode; then a short run of the plain kernel (range R = 2C(θ, θ′)
/// from the model's term bounds) with the same test and proposals.
pub fn run(seed: u64) -> Result<Report, Box<dyn Error>> {
    let data = two_class_2d(N, seed)?.data;
    let model =
        LogisticRegression::new(data, DesignOptions::default().with_intercept(true), PRIOR_SD)?;
    let names = model.parameter_names();

    let laplace = laplace_approximation(&model, &[0.0; D], NewtonOptions::default())?;
    let inits = laplace.dispersed_positions(CHAINS, 2.0, seed)?;

    let hmc_config = HmcConfig::with_fixed_metric(laplace.dense_metric()?);
    let hmc_run = RunConfig::new(300, 1000, CHAINS, seed.wrapping_add(1));
    let hmc = sample_in_memory(&model, hmc_run, &inits, &Hmc::new(hmc_config)?)?;

    let config = TwoBoundConfig::new(DELTA, FIRST_BATCH)?;
    let walk = RandomWalkProposalConfig {
        covariance: Some(laplace.covariance.clone()),
        initial_scale: Some(2.38 / (D as f64).sqrt()),
        adapt_scale: false,
        ..RandomWalkProposalConfig::default()
    };
    let user_run = RunConfig::new(500, 4000, CHAINS, seed.wrapping_add(2));
    let user = sample_in_memory(
        &model,
        user_run,
        &inits,
        &ProxyMinibatchMh::new(
            TwoBoundTest::new(config),
            RandomWalkProposal::new(walk.clone())?,
            ProxyConfig::new(laplace.mode.clone()),
        )?,
    )?;

    let plain_run = RunConfig { num_warmup: 100, num_draws: 300, ..user_run };
    let plain = sample_in_memory(
        &model,
        plain_run,
        &inits,
        &MinibatchMh::new(TwoBoundTest::new(config), RandomWalkProposal::new(walk)?)
            .with_term_bounds(),
    )?;

    Ok(Report {
        hmc: RunSummary::of(&names, &hmc)?,
        user: RunSummary::of(&names, &user)?,
        plain: RunSummary::of(&names, &plain)?,
        names,
    })
}

/// Prints the summary table, the data fraction and the evaluation counts.
pub fn print(report: &Report) {
    println!(
        "logistic regression, n = {N}, d = {D}: minibatch MH with proxies and a user-defined \
         mean test (δ = {DELTA}) vs full-data HMC\n"
    );
    println!(
        "{:<10} | {:>8} {:>7} {:>6} {:>6} | {:>8} {:>7} {:>6} {:>6}",
        "", "HMC mean", "sd", "ESS", "R-hat", "proxy MH", "sd", "ESS", "R-hat"
    );
    for (j, name) in report.names.iter().enumerate() {
        let (h, u) = (&report.hmc.summaries[j], &report.user.summaries[j]);
        println!(
            "{name:<10} | {:>8.4} {:>7.4} {:>6.0} {:>6.3} | {:>9.4} {:>7.4} {:>6.0} {:>6.3}",
            h.mean, h.sd, h.ess_bulk, h.rhat, u.mean, u.sd, u.ess_bulk, u.rhat
        );
    }
    println!("\ndata points per iteration while drawing (mean over chains), acceptance:");
    for (label, r) in [("proxy MH", &report.user), ("plain MH", &report.plain)] {
        println!(
            "  {label:<9} {:>7.0} of {N} (fraction {:.4}), acceptance {:.2}",
            r.batch,
            r.batch / N as f64,
            r.accept
        );
    }
    println!("per-datum evaluations (all chains, warmup included):");
    for (label, r) in [
        ("full-data HMC", &report.hmc),
        ("user-test proxy MH", &report.user),
        ("user-test plain MH", &report.plain),
    ] {
        println!("  {label:<18} {:11} ({} draws)", r.evals, r.draws);
    }
}

/// `user_mean_test [SEED]` (default seed 1).
fn main() -> Result<(), Box<dyn Error>> {
    print(&run(common::seed_arg()?)?);
    Ok(())
}
