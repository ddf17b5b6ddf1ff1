//! Suite `austerity`: the experiments of Korattikara, Chen & Welling (2014), *Austerity in MCMC
//! land: cutting the Metropolis–Hastings budget*, ICML, §6 — on synthetic stand-ins for the
//! paper's data sets (which tallmc cannot download).
//!
//! * **(a) Fig. 2** ([`fig2`]) — random-walk minibatch MH on the MNIST-like logistic regression
//!   (N = 12,214, d = 50, prior N(0, 10² I), data seed 1): for ε ∈ {0, 0.001, 0.01, 0.05, 0.1,
//!   0.2} the mean fraction of the data each accept test used, and the fraction of decisions that
//!   differ from the exact test's on the same u and proposal ([`crate::audit::Audited`]).
//! * **(b) Fig. 3** ([`fig3`]) — the risk (bias² + variance over chains) of the posterior
//!   predictive mean of the 2,037 held-out points against per-datum evaluations, every chain
//!   given the same budget, ε ∈ {0, 0.01, 0.05, 0.1, 0.2}.
//! * **(c) Figs. 5–6** ([`fig56`]) — uncorrected SGLD, SGLD corrected by the exact MH test and
//!   by Austerity's test (ε ∈ {0.01, 0.05, 0.1}) on the 41-parameter KDD99-like logistic
//!   regression at a large and a small step size: L1 error of the 41 marginal variances against
//!   evaluations.
//! * **(d) Figs. 7–8** ([`fig78`]) — approximate Gibbs on the three-way binary MRF: empirical
//!   against exact conditionals, and the average L1 error of 5-variable marginals against
//!   factor evaluations, ε ∈ {0.01, 0.05, 0.1, 0.15, 0.2, 0.25} and exact Gibbs.
//!
//! **Starting points and tuning.** The logistic chains start at independent draws from the
//! Laplace approximation N(θ*, Σ_L) (on these tall-data posteriors an almost exact draw from
//! the posterior, so no burn-in is needed and every measured step is a stationary one). The
//! random walk is θ′ = θ + s L z with L Lᵀ = Σ_L and the scale s tuned (dual averaging to an
//! acceptance rate of 0.234) by a warmup of the exact chain started at the mode; every
//! Austerity chain of (a) and (b) then uses that fixed s.
//!
//! **Ground truths** of the logistic posteriors are importance sampling from the Laplace
//! approximation ([`common::ImportanceSample`]): i.i.d. draws, exact in the limit, with their
//! effective sample size and Monte Carlo errors reported, at one full-data pass per draw —
//! cheaper than a long HMC run for the same accuracy, which matters in the quick suite. The
//! MRF's truth is a long exact Gibbs run.
//!
//! **Cost** is counted from the kernels' stats, exactly: for minibatch MH 2 term evaluations
//! per datum the test used (ℓ_i at θ and θ′) plus the proposal's (SGLD: 2n terms and 2n
//! gradients); for SGLD n terms and n gradients per step; for Gibbs one factor evaluation per
//! log-ratio drawn.

pub mod common;
pub mod fig2;
pub mod fig3;
pub mod fig56;
pub mod fig78;

use std::time::Instant;

use serde::Serialize;
use serde_json::{Value, json};
use tallmc_models::data::Dataset;
use tallmc_models::mrf::PAPER_LOG_POTENTIAL_SD;
use tallmc_models::{DesignOptions, LogisticRegression, synthetic};
use tallmc_samplers::{Laplace, NewtonOptions, laplace_approximation};

use self::common::{ImportanceSample, smallest_eigenvalue};
use self::fig2::Fig2;
use self::fig3::Fig3;
use self::fig56::{Fig56, Method};
use self::fig78::{Fig78, GibbsSizes};
use crate::report::{Report, fmt_sig};
use crate::{Context, Mode, Result};

/// Seed of the MNIST-like data (fixed: the data set is part of the problem).
pub const MNIST_DATA_SEED: u64 = 1;
/// Seed of the KDD99-like data.
pub const KDD_DATA_SEED: u64 = 1;
/// Seed of the MRF's potentials.
pub const MRF_SEED: u64 = 1;
/// Prior sd of both logistic regressions: θ ~ N(0, 10² I).
pub const PRIOR_SD: f64 = 10.0;

/// Streams of the importance-sampling truths (block b: `base + b`).
const MNIST_IS_STREAM: usize = 100_000;
const KDD_IS_STREAM: usize = 200_000;

/// Problem sizes of one mode.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sizes {
    /// (a, b) warmup iterations of the scale-tuning exact chain.
    pub tune_warmup: usize,
    /// (a) chains per ε.
    pub fig2_chains: usize,
    /// (a) audited decisions per chain.
    pub fig2_steps: usize,
    /// (b) importance draws of the predictive truth.
    pub mnist_truth_draws: usize,
    /// (b) chains per ε.
    pub fig3_chains: usize,
    /// (b) evaluation budget per chain.
    pub fig3_budget: u64,
    /// (c) rows N of the KDD99-like data.
    pub kdd_n: usize,
    /// (c) SGLD minibatch n = Austerity mini-batch m (N/20).
    pub sgld_batch: usize,
    /// (c) importance draws of the variance truth.
    pub kdd_truth_draws: usize,
    /// (c) chains per method and step size.
    pub sgld_chains: usize,
    /// (c) evaluation budget per chain.
    pub sgld_budget: u64,
    /// (d) the MRF experiment.
    pub gibbs: GibbsSizes,
}

impl Sizes {
    /// The sizes of `mode`.
    pub fn of(mode: Mode) -> Self {
        let gibbs = match mode {
            Mode::Quick => GibbsSizes {
                d: 30,
                log_potential_sd: PAPER_LOG_POTENTIAL_SD,
                mrf_seed: MRF_SEED,
                batch: 100,
                reference_chains: 2,
                reference_burn_in: 500,
                reference_sweeps: 20_000,
                kept_states: 200,
                subsets: 100,
                pair_bins: 20,
                pairs_per_bin: 1,
                reps: 20_000,
                reps_smallest_epsilon: 40_000,
                chains: 2,
                budget: 80_000_000,
            },
            Mode::Full => GibbsSizes {
                d: 100,
                log_potential_sd: PAPER_LOG_POTENTIAL_SD,
                mrf_seed: MRF_SEED,
                batch: 500,
                reference_chains: 4,
                reference_burn_in: 2_000,
                reference_sweeps: 100_000,
                kept_states: 500,
                subsets: 1600,
                pair_bins: 20,
                pairs_per_bin: 3,
                reps: 50_000,
                reps_smallest_epsilon: 100_000,
                chains: 4,
                budget: 10_000_000_000,
            },
        };
        let kdd_n = mode.pick(5_000, 20_000);
        Sizes {
            tune_warmup: mode.pick(1_000, 4_000),
            fig2_chains: mode.pick(2, 8),
            fig2_steps: mode.pick(1_000, 10_000),
            mnist_truth_draws: mode.pick(4_000, 100_000),
            fig3_chains: 8,
            fig3_budget: mode.pick(40_000_000, 1_000_000_000),
            kdd_n,
            sgld_batch: kdd_n / 20,
            kdd_truth_draws: mode.pick(10_000, 50_000),
            sgld_chains: mode.pick(2, 8),
            sgld_budget: mode.pick(30_000_000, 3_000_000_000),
            gibbs,
        }
    }
}

/// The MNIST-like problem shared by parts (a) and (b).
#[derive(Debug)]
pub struct MnistSetup {
    /// The training model (N = 12,214, d = 50).
    pub model: LogisticRegression,
    /// The 2,037 held-out rows.
    pub test: Dataset,
    /// Mode and Laplace covariance.
    pub laplace: Laplace,
    /// The tuned random-walk scale s.
    pub scale: f64,
    /// Acceptance rate over the second half of the tuning warmup.
    pub tune_accept: f64,
}

/// Everything the suite measured (the JSON summary is [`Austerity::summary`]).
#[derive(Debug)]
pub struct Austerity {
    /// Mode.
    pub mode: Mode,
    /// Master seed of the chains.
    pub seed: u64,
    /// Sizes used.
    pub sizes: Sizes,
    /// Tuned random-walk scale of (a) and (b).
    pub scale: f64,
    /// Acceptance rate of the exact chain during the second half of tuning.
    pub tune_accept: f64,
    /// (a) Fig. 2.
    pub fig2: Fig2,
    /// (b) Fig. 3.
    pub fig3: Fig3,
    /// (c) Figs. 5–6.
    pub fig56: Fig56,
    /// (d) Figs. 7–8.
    pub fig78: Fig78,
    /// Wall seconds per part (a + b together, c, d).
    pub seconds: [f64; 3],
}

/// Runs the suite: computes, writes `summary.json`, `report.md` and the figures when the
/// context asks for files, and returns the summary.
pub fn run(ctx: &Context<'_>) -> Result<Value> {
    let a = compute(ctx)?;
    let summary = a.summary();
    if ctx.write_files {
        let figures = vec![
            ("fig2_data_and_errors.svg", a.fig2.figure()),
            ("fig3_risk.svg", a.fig3.figure()),
            ("fig5_6_sgld_variance_error.svg", a.fig56.figure()),
            ("fig7_conditionals.svg", a.fig78.figure_conditionals()),
            ("fig8_joint_error.svg", a.fig78.figure_joint()),
        ];
        crate::part::write_outputs(ctx, &summary, figures, &report(&a))?;
    }
    Ok(summary)
}

/// Runs the four parts.
pub fn compute(ctx: &Context<'_>) -> Result<Austerity> {
    let sizes = Sizes::of(ctx.mode);
    let newton = NewtonOptions::default();

    // (a) and (b): the MNIST-like logistic regression.
    let t0 = Instant::now();
    ctx.reporter.note("austerity: MNIST-like data, mode and Laplace approximation");
    let (train, test) = synthetic::mnist_like(
        synthetic::MNIST_LIKE_TRAIN,
        synthetic::MNIST_LIKE_TEST,
        MNIST_DATA_SEED,
    )?;
    let model = LogisticRegression::new(train.data, DesignOptions::default(), PRIOR_SD)?;
    let d = synthetic::MNIST_LIKE_DIM;
    let laplace = laplace_approximation(&model, &vec![0.0; d], newton)?;
    let mut setup = MnistSetup { model, test, laplace, scale: 0.0, tune_accept: 0.0 };
    let (scale, tune_accept) = fig2::tune_scale(&setup, sizes.tune_warmup, ctx)?;
    setup.scale = scale;
    setup.tune_accept = tune_accept;
    let starts = setup.laplace.dispersed_positions(
        sizes.fig2_chains.max(sizes.fig3_chains),
        1.0,
        ctx.seed,
    )?;
    let fig2 = fig2::compute(&setup, &starts, sizes.fig2_chains, sizes.fig2_steps, ctx)?;
    let n = setup.model.design().len() as u64;
    let task = ctx
        .reporter
        .task("austerity (b): importance-sampling truth", sizes.mnist_truth_draws as u64 * n);
    let is = ImportanceSample::draw(
        &setup.model,
        &setup.laplace,
        sizes.mnist_truth_draws,
        ctx.seed,
        MNIST_IS_STREAM,
        &*task,
    )?;
    drop(task);
    let (p_true, p_mcse) = is.predictive(setup.test.x());
    let fig3 = fig3::compute(
        &setup,
        &starts,
        (&p_true, &p_mcse),
        is.len(),
        is.ess,
        sizes.fig3_chains,
        sizes.fig3_budget,
        ctx,
    )?;
    drop((setup, is));
    let t_ab = t0.elapsed().as_secs_f64();

    // (c): the KDD99-like logistic regression.
    let t0 = Instant::now();
    ctx.reporter.note("austerity: KDD99-like data, mode and Laplace approximation");
    let sim = synthetic::kdd_like(sizes.kdd_n, KDD_DATA_SEED)?;
    let model = LogisticRegression::new(sim.data, DesignOptions::default(), PRIOR_SD)?;
    let d = synthetic::KDD_LIKE_DIM;
    let laplace = laplace_approximation(&model, &vec![0.0; d], newton)?;
    let lambda_min = smallest_eigenvalue(&laplace.covariance, d)?;
    let task = ctx.reporter.task(
        "austerity (c): importance-sampling truth",
        (sizes.kdd_truth_draws * sizes.kdd_n) as u64,
    );
    let is = ImportanceSample::draw(
        &model,
        &laplace,
        sizes.kdd_truth_draws,
        ctx.seed,
        KDD_IS_STREAM,
        &*task,
    )?;
    drop(task);
    let truth = is.moments(&laplace);
    let starts = laplace.dispersed_positions(sizes.sgld_chains, 1.0, ctx.seed ^ 0x5eed)?;
    let fig56 = fig56::compute(
        &model,
        &starts,
        lambda_min,
        &truth,
        is.len(),
        is.ess,
        sizes.sgld_batch,
        sizes.sgld_chains,
        sizes.sgld_budget,
        ctx,
    )?;
    drop((model, is));
    let t_c = t0.elapsed().as_secs_f64();

    // (d): the MRF.
    let t0 = Instant::now();
    let fig78 = fig78::compute(sizes.gibbs, ctx)?;
    let t_d = t0.elapsed().as_secs_f64();
    Ok(Austerity {
        mode: ctx.mode,
        seed: ctx.seed,
        sizes,
        scale,
        tune_accept,
        fig2,
        fig3,
        fig56,
        fig78,
        seconds: [t_ab, t_c, t_d],
    })
}

/// The paper's data fractions implied by its Fig. 3 legend: T(ε = 0)/T(ε) samples in the same
/// 400 s (an upper bound on the fraction, since each step also has costs that do not scale
/// with the data), for ε = 0.01, 0.05, 0.1, 0.2.
pub const PAPER_FIG3_IMPLIED_FRACTION: [(f64, f64); 4] = [
    (0.01, 75_484.0 / 133_069.0),
    (0.05, 75_484.0 / 200_672.0),
    (0.1, 75_484.0 / 257_897.0),
    (0.2, 75_484.0 / 422_978.0),
];

impl Austerity {
    /// The JSON summary (the quick one is an insta snapshot after rounding).
    pub fn summary(&self) -> Value {
        json!({
            "suite": "austerity",
            "mode": self.mode,
            "seed": self.seed,
            "sizes": to(&self.sizes),
            "data": {
                "mnist_like": {"n_train": synthetic::MNIST_LIKE_TRAIN, "n_test": synthetic::MNIST_LIKE_TEST,
                    "d": synthetic::MNIST_LIKE_DIM, "data_seed": MNIST_DATA_SEED, "prior": "N(0, 10^2 I)"},
                "kdd_like": {"n": self.sizes.kdd_n, "d": synthetic::KDD_LIKE_DIM, "data_seed": KDD_DATA_SEED,
                    "prior": "N(0, 10^2 I)"},
                "mrf": {"d": self.sizes.gibbs.d, "log_potential_sd": self.sizes.gibbs.log_potential_sd,
                    "seed": MRF_SEED},
            },
            "random_walk": {"scale": self.scale, "tune_accept": self.tune_accept},
            "fig2": to(&self.fig2),
            "fig3": to(&self.fig3),
            "fig5_6": to(&self.fig56),
            "fig7_8": to(&self.fig78),
            "wall_seconds": {"a_b": self.seconds[0], "c": self.seconds[1], "d": self.seconds[2]},
        })
    }
}

/// A value as JSON (`null` if it cannot be represented).
fn to<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn pct(x: f64) -> String {
    format!("{}%", fmt_sig(100.0 * x, 3))
}

fn report(a: &Austerity) -> Report {
    let s = &a.sizes;
    let mut r = Report::new("Austerity in MCMC land (Korattikara, Chen & Welling 2014)");
    r.paragraph(&format!(
        "Mode `{}`, seed {}. Synthetic stand-ins for the paper's data (see `docs/reproduction.md`): \
         MNIST-like logistic regression (N = 12,214, d = 50, 2,037 held-out rows), KDD99-like \
         logistic regression (N = {}, d = 41), three-way binary MRF (D = {}, log-potential sd {:.4}, \
         i.e. variance 0.02). Costs are per-datum (or per-factor) evaluations counted from the \
         kernels' stats. Wall time: (a)+(b) {:.0} s, (c) {:.0} s, (d) {:.0} s.",
        a.mode, a.seed, s.kdd_n, s.gibbs.d, s.gibbs.log_potential_sd, a.seconds[0], a.seconds[1],
        a.seconds[2]
    ));
    r.section("Claims and measurements");
    r.table(&["paper (§6)", "measured", "verdict"], &claims(a));
    fig2_section(a, &mut r);
    fig3_section(a, &mut r);
    fig56_section(a, &mut r);
    fig78_section(a, &mut r);
    r.section("Sizes");
    r.paragraph(&format!(
        "```json\n{}\n```",
        serde_json::to_string_pretty(&a.sizes).unwrap_or_default()
    ));
    r
}

fn claims(a: &Austerity) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let f2 = &a.fig2;
    let row = |e: f64| f2.row(e);
    if let (Some(r0), Some(r1), Some(r5), Some(r20)) = (row(0.0), row(0.01), row(0.05), row(0.2)) {
        rows.push(vec![
            "Fig. 2: \"The amount of data required drops off very fast as ε is increased even though the error does not increase much.\"".into(),
            format!(
                "data used: {} (ε = 0), {} (0.01), {} (0.05), {} (0.2); wrong decisions: {} (0.01), {} (0.05), {} (0.2)",
                pct(r0.data_fraction), pct(r1.data_fraction), pct(r5.data_fraction), pct(r20.data_fraction),
                pct(r1.wrong_rate), pct(r5.wrong_rate), pct(r20.wrong_rate)
            ),
            if r20.data_fraction < 0.5 * r0.data_fraction && r1.wrong_rate < 0.05 {
                format!(
                    "reproduced in shape; the first drop is slower than the paper's ({} at ε = 0.01 against ≤ {} implied by its Fig. 3)",
                    pct(r1.data_fraction),
                    pct(PAPER_FIG3_IMPLIED_FRACTION[0].1)
                )
            } else {
                "not reproduced".into()
            },
        ]);
        rows.push(vec![
            "Fig. 2 (black line y = ε): the wrong-decision rate is about ε — about 1% at ε = 0.01"
                .into(),
            format!(
                "{} ± {} (binomial sd; {} of {} decisions) = {}·ε",
                pct(r1.wrong_rate),
                pct(r1.wrong_binomial_sd),
                r1.wrong,
                r1.decisions,
                fmt_sig(r1.wrong_rate / 0.01, 2)
            ),
            {
                let z = (r1.wrong_rate - 0.01) / r1.wrong_binomial_sd.max(f64::MIN_POSITIVE);
                if z.abs() <= 2.0 {
                    "reproduced".into()
                } else if r1.wrong_rate <= 0.04 {
                    format!(
                        "same order, but {}× ε ({} binomial sds above 1%): ε bounds the error of each look of the sequential t-test (under a CLT approximation), not of the whole sequence of looks",
                        fmt_sig(r1.wrong_rate / 0.01, 2),
                        fmt_sig(z, 2)
                    )
                } else {
                    format!("not reproduced: {}× ε", fmt_sig(r1.wrong_rate / 0.01, 2))
                }
            },
        ]);
        rows.push(vec![
            "\"ε = 0 corresponds to the exact MH algorithm\"".into(),
            format!(
                "ε = 0: {} of the data per test, {} wrong decisions of {}",
                pct(r0.data_fraction),
                r0.wrong,
                r0.decisions
            ),
            if r0.wrong == 0 && r0.data_fraction == 1.0 {
                "reproduced (and bit for bit: `tests/minibatch_exactness.rs`)".into()
            } else {
                "NOT reproduced: a defect".into()
            },
        ]);
    }
    let implied: Vec<String> = PAPER_FIG3_IMPLIED_FRACTION
        .iter()
        .map(|(e, f)| {
            let m = row(*e).map_or("—".into(), |r| pct(r.data_fraction));
            format!("ε = {e}: paper ≤ {}, measured {m}", pct(*f))
        })
        .collect();
    let above: Vec<String> = PAPER_FIG3_IMPLIED_FRACTION
        .iter()
        .filter(|(e, f)| row(*e).is_some_and(|r| r.data_fraction > *f))
        .map(|(e, _)| e.to_string())
        .collect();
    rows.push(vec![
        "Fig. 3 legend (samples T in 400 s): data fraction ≤ T(0)/T(ε)".into(),
        implied.join("; "),
        if above.is_empty() {
            "reproduced".into()
        } else {
            format!("partly: more data than the paper's bound at ε = {}", above.join(", "))
        },
    ]);
    let f3 = &a.fig3;
    if let Some(c0) = f3.curve(0.0) {
        rows.push(vec![
            "Fig. 3: log risk falls on a straight line of negative slope while variance dominates (risk ∝ 1/evaluations: slope −1)".into(),
            f3.curves
                .iter()
                .map(|c| format!("ε = {}: {} ± {}", c.epsilon, fmt_sig(c.slope_last_decade, 2), fmt_sig(c.slope_jackknife_se, 1)))
                .collect::<Vec<_>>()
                .join("; ")
                + &format!(" (slope over the last decade; ε = 0 runs {} steps per chain)", fmt_sig(c0.steps, 3)),
            {
                let all_negative = f3.curves.iter().all(|c| c.slope_last_decade + 2.0 * c.slope_jackknife_se < 0.0);
                let near_minus_one = f3.curves.iter().all(|c| (c.slope_last_decade + 1.0).abs() <= 2.0 * c.slope_jackknife_se);
                if all_negative && near_minus_one {
                    "reproduced (slopes within 2 se of −1)".into()
                } else if all_negative {
                    "straight and falling, but shallower than −1 at this budget (the runs are not yet many autocorrelation times long, where the variance of a time average approaches τ/T)".into()
                } else {
                    "not reproduced at this budget".into()
                }
            },
        ]);
    }
    let share: Vec<String> = f3
        .curves
        .iter()
        .map(|c| {
            let (b, r) = (
                c.bias2.last().copied().unwrap_or(f64::NAN),
                c.risk.last().copied().unwrap_or(f64::NAN),
            );
            format!("ε = {}: {}", c.epsilon, pct(b.max(0.0) / r))
        })
        .collect();
    rows.push(vec![
        "Fig. 3: \"even after collecting a lot of samples, the risk is still dominated by the variance\"".into(),
        format!("bias² / risk at the budget: {}", share.join("; ")),
        if f3.curves.iter().all(|c| {
            c.bias2.last().copied().unwrap_or(f64::NAN) < 0.5 * c.risk.last().copied().unwrap_or(f64::NAN)
        }) {
            "reproduced".into()
        } else {
            "not reproduced".into()
        },
    ]);
    if let Some(best) = f3.curves.iter().min_by(|x, y| {
        x.risk.last().unwrap_or(&f64::NAN).total_cmp(y.risk.last().unwrap_or(&f64::NAN))
    }) {
        rows.push(vec![
            "Fig. 3: \"The minimum risk after a finite amount of computational time is obtained with ε > 0\"".into(),
            format!(
                "lowest risk at the budget ({} evaluations per chain): ε = {} ({}); ε = 0: {}",
                fmt_sig(f3.budget as f64, 3),
                best.epsilon,
                fmt_sig(best.risk.last().copied().unwrap_or(f64::NAN), 3),
                fmt_sig(f3.curve(0.0).and_then(|c| c.risk.last().copied()).unwrap_or(f64::NAN), 3)
            ),
            if best.epsilon > 0.0 {
                format!("reproduced at this seed; with {} chains per ε the ordering is not significant", f3.chains)
            } else {
                "not reproduced at this budget".into()
            },
        ]);
    }
    let f = &a.fig56;
    let fin =
        |s: usize, m: Method| f.curve(s, m).and_then(|c| c.l1.last().copied()).unwrap_or(f64::NAN);
    if let Some(sg) = f.curve(0, Method::Sgld) {
        rows.push(vec![
            "Fig. 5: \"when the step size is large SGLD has a huge bias\"".into(),
            format!(
                "large step: SGLD's pooled variances are {}× the truth on average (E(θ−μ)²/var = {} ± {} MCSE; pooled L1 error {}, {} of Σ var; truth's own error {})",
                fmt_sig(sg.mean_variance_ratio, 3), fmt_sig(sg.second_moment_ratio, 3),
                fmt_sig(sg.second_moment_ratio_mcse, 2), fmt_sig(sg.pooled_l1, 3), pct(sg.pooled_l1 / f.sum_variance),
                fmt_sig(f.truth_l1_floor, 2)
            ),
            if sg.second_moment_ratio - 1.0 > 4.0 * sg.second_moment_ratio_mcse && sg.second_moment_ratio > 1.5 {
                "reproduced".into()
            } else if sg.second_moment_ratio - 1.0 > 4.0 * sg.second_moment_ratio_mcse {
                format!(
                    "a significant but modest bias ({} too wide), not a huge one, at h = {} λ_min",
                    pct(sg.second_moment_ratio - 1.0),
                    fig56::STEP_FACTORS[0]
                )
            } else {
                "not reproduced at this step size".into()
            },
        ]);
    }
    if let Some(mh) = f.curve(0, Method::Mh) {
        rows.push(vec![
            "Fig. 5: \"While the MH test can correct this, the MH test introduces a huge variance\"".into(),
            format!(
                "large step: exact MH accepts {} of the SGLD proposals, {} steps per chain; L1 error at the budget {} (SGLD {})",
                pct(mh.accept), fmt_sig(mh.steps, 3), fmt_sig(fin(0, Method::Mh), 3), fmt_sig(fin(0, Method::Sgld), 3)
            ),
            if fin(0, Method::Mh) > 2.0 * fin(0, Method::Sgld) {
                "reproduced".into()
            } else {
                "not reproduced".into()
            },
        ]);
    }
    rows.push(vec![
        "Fig. 5: \"Our method on the other hand can reduce the bias while at the same time maintaining a low variance\"".into(),
        fig56::EPSILONS
            .iter()
            .map(|&e| {
                let c = f.curve(0, Method::Austerity(e));
                format!(
                    "ε = {e}: error {} (accept {}, data {} per test)",
                    fmt_sig(fin(0, Method::Austerity(e)), 3),
                    c.map_or("—".into(), |c| pct(c.accept)),
                    c.map_or("—".into(), |c| pct(c.test_data_fraction))
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
            + &format!("; SGLD {}", fmt_sig(fin(0, Method::Sgld), 3)),
        {
            let aust: Vec<f64> = fig56::EPSILONS.iter().map(|&e| fin(0, Method::Austerity(e))).collect();
            let below_mh = aust.iter().all(|&x| x < fin(0, Method::Mh));
            let below_sgld = aust.iter().all(|&x| x < fin(0, Method::Sgld));
            match (below_mh, below_sgld) {
                (true, true) => "reproduced".into(),
                (true, false) => "partly: less error than exact-MH-corrected SGLD (the variance claim), but more than uncorrected SGLD, whose bias at this step size is small next to the corrected chains' variance".into(),
                _ => "not reproduced".into(),
            }
        },
    ]);
    if let Some(small) = f.steps.get(1) {
        let best = small.curves.iter().min_by(|x, y| {
            x.l1.last().unwrap_or(&f64::NAN).total_cmp(y.l1.last().unwrap_or(&f64::NAN))
        });
        rows.push(vec![
            "Fig. 6: \"when the step size is small, the bias in SGLD is small. Since SGLD is very fast, it can reduce the error quicker than other methods\"".into(),
            format!(
                "small step: SGLD's pooled variances {}× the truth (E(θ−μ)²/var = {} ± {}); lowest error at the budget: {} ({}); SGLD {}",
                fmt_sig(f.curve(1, Method::Sgld).map_or(f64::NAN, |c| c.mean_variance_ratio), 3),
                fmt_sig(f.curve(1, Method::Sgld).map_or(f64::NAN, |c| c.second_moment_ratio), 3),
                fmt_sig(f.curve(1, Method::Sgld).map_or(f64::NAN, |c| c.second_moment_ratio_mcse), 2),
                best.map_or("—".into(), |b| b.method.label()),
                fmt_sig(best.and_then(|b| b.l1.last().copied()).unwrap_or(f64::NAN), 3),
                fmt_sig(fin(1, Method::Sgld), 3)
            ),
            if best.is_some_and(|b| b.method == Method::Sgld) {
                "reproduced".into()
            } else {
                "not reproduced".into()
            },
        ]);
    }
    let g = &a.fig78;
    let signs: Vec<String> = g
        .conditional_errors
        .iter()
        .map(|c| {
            format!(
                "ε = {}: {} (P > ½), {} (P < ½)",
                c.epsilon,
                fmt_sig(c.mean_error_above_half, 2),
                fmt_sig(c.mean_error_below_half, 2)
            )
        })
        .collect();
    rows.push(vec![
        "Fig. 7: \"It tends to under estimate at large probabilities and over estimate on the other end\"".into(),
        format!("mean empirical − exact: {}", signs.join("; ")),
        if g.conditional_errors.iter().all(|c| c.mean_error_above_half < 0.0 && c.mean_error_below_half > 0.0) {
            "reproduced at every ε".into()
        } else {
            "not at every ε".into()
        },
    ]);
    if let Some(c) = g.conditional_error(0.01) {
        rows.push(vec![
            "Fig. 7: \"When ε = 0.01, the observed maximum error is within 0.01\"".into(),
            format!(
                "max |empirical − exact| = {} over {} pairs (binomial sd ≤ {}, {} repetitions each; D = {})",
                fmt_sig(c.max_abs_error, 2),
                g.points.len(),
                fmt_sig(c.max_binomial_sd, 2),
                c.reps,
                g.sizes.d
            ),
            if c.max_abs_error <= 0.01 {
                "reproduced (asserted ≤ 0.02 in `tests/tests/austerity.rs`)".into()
            } else {
                "not reproduced".into()
            },
        ]);
    }
    if let Some(ex) = g.curve(None) {
        let early = |c: &fig78::JointCurve| c.l1.get(c.l1.len() / 3).copied().unwrap_or(f64::NAN);
        let at_end = |c: &fig78::JointCurve| c.l1.last().copied().unwrap_or(f64::NAN);
        let line = |f: &dyn Fn(&fig78::JointCurve) -> f64| {
            g.curves
                .iter()
                .map(|c| format!("{}: {}", c.label(), fmt_sig(f(c), 3)))
                .collect::<Vec<_>>()
                .join("; ")
        };
        rows.push(vec![
            "Fig. 8: \"For small ε … more samples in the same amount of time … so the error decays faster in the beginning\"".into(),
            format!(
                "L1 at {} evaluations: {}",
                fmt_sig(ex.evals.get(ex.evals.len() / 3).copied().unwrap_or(f64::NAN), 2),
                line(&early)
            ),
            if g.curves.iter().filter(|c| c.epsilon.is_some_and(|e| e <= 0.05)).all(|c| early(c) < early(ex)) {
                "reproduced".into()
            } else {
                format!(
                    "not reproduced at D = {}: the test needs most of the {} factors of a variable (see the table), so small ε buys few extra sweeps",
                    g.sizes.d,
                    fmt_sig(g.factors_per_variable as f64, 3)
                )
            },
        ]);
        rows.push(vec![
            "Fig. 8: \"these plots converge towards their bias floor while the exact Gibbs sampler out-performs all the approximate methods\" (at long run times)".into(),
            format!(
                "L1 at the budget ({} evaluations): {} (truth's own error ≈ {})",
                fmt_sig(g.sizes.budget as f64, 2),
                line(&at_end),
                fmt_sig(g.truth_l1_floor, 2)
            ),
            {
                let beaten: Vec<String> = g
                    .curves
                    .iter()
                    .filter(|c| c.epsilon.is_some() && at_end(c) <= at_end(ex) + 2.0 * g.truth_l1_floor)
                    .map(|c| c.label())
                    .collect();
                if beaten.is_empty() {
                    "reproduced".into()
                } else {
                    format!(
                        "reproduced except {}: indistinguishable from exact Gibbs at this budget (within twice the truth's own error)",
                        beaten.join(", ")
                    )
                }
            },
        ]);
    }
    rows
}

fn fig2_section(a: &Austerity, r: &mut Report) {
    let f = &a.fig2;
    r.section("(a) Fig. 2 — data used and wrong decisions against ε");
    r.paragraph(&format!(
        "Random walk θ′ = θ + s L z with L Lᵀ the Laplace covariance and s = {} (tuned by a {}-step \
         warmup of the exact chain from the mode; acceptance {} over its second half). {} chains × \
         {} decisions per ε, started at draws from the Laplace approximation; Austerity mini-batch \
         m = {} (first batch m). A decision is wrong when it differs from the exact test's on the \
         same u and proposal.",
        fmt_sig(f.scale, 4),
        a.sizes.tune_warmup,
        pct(a.tune_accept),
        f.chains,
        f.steps,
        f.test_batch
    ));
    let rows: Vec<Vec<String>> = f
        .rows
        .iter()
        .map(|x| {
            vec![
                x.epsilon.to_string(),
                format!("{} ± {}", pct(x.data_fraction), pct(x.data_fraction_mcse)),
                format!("{} ± {}", pct(x.wrong_rate), pct(x.wrong_binomial_sd)),
                format!("{} / {}", x.wrong, x.decisions),
                pct(x.wrong_mcse),
                pct(x.accept),
            ]
        })
        .collect();
    r.table(
        &[
            "ε",
            "data used ± MCSE",
            "wrong ± binomial sd",
            "wrong / decisions",
            "wrong MCSE (ESS)",
            "accept",
        ],
        &rows,
    );
    r.image("Fig. 2", "fig2_data_and_errors.svg");
}

fn fig3_section(a: &Austerity, r: &mut Report) {
    let f = &a.fig3;
    r.section("(b) Fig. 3 — risk of the predictive mean against evaluations");
    r.paragraph(&format!(
        "{} chains per ε, each given {} per-datum evaluations, started at Laplace draws; the \
         predictive mean uses one draw per ≥ {} evaluations. Truth: {} importance draws from the \
         Laplace approximation (ESS {}); largest MCSE of a true probability {}, so the truth adds \
         about {} to every risk. Risk = bias² + variance with variance = s² over the chains and \
         bias² = (p̄ − p)² − s²/C, the unbiased estimate of one chain's squared bias (so it can be \
         slightly negative when the bias is below the noise).",
        f.chains,
        fmt_sig(f.budget as f64, 3),
        f.thin_evals,
        f.truth_draws,
        fmt_sig(f.truth_ess, 4),
        fmt_sig(f.truth_max_mcse, 2),
        fmt_sig(f.truth_risk_floor, 2)
    ));
    let rows: Vec<Vec<String>> = f
        .curves
        .iter()
        .map(|c| {
            let last = |v: &Vec<f64>| fmt_sig(v.last().copied().unwrap_or(f64::NAN), 3);
            vec![
                c.epsilon.to_string(),
                fmt_sig(c.steps, 4),
                pct(c.data_fraction),
                pct(c.accept),
                last(&c.risk),
                format!("{} ± {}", last(&c.bias2), fmt_sig(c.bias2_jackknife_se, 2)),
                last(&c.variance),
                format!(
                    "{} ± {}",
                    fmt_sig(c.slope_last_decade, 3),
                    fmt_sig(c.slope_jackknife_se, 2)
                ),
            ]
        })
        .collect();
    r.table(
        &[
            "ε",
            "steps per chain",
            "data per test",
            "accept",
            "risk",
            "bias² ± jackknife se",
            "variance",
            "slope (last decade) ± jackknife se",
        ],
        &rows,
    );
    r.image("Fig. 3", "fig3_risk.svg");
}

fn fig56_section(a: &Austerity, r: &mut Report) {
    let f = &a.fig56;
    r.section("(c) Figs. 5–6 — SGLD, MH-corrected and Austerity-corrected SGLD");
    r.paragraph(&format!(
        "KDD99-like logistic regression, N = {}, d = {}; SGLD minibatch n = Austerity mini-batch \
         m = {} (N/20). Step sizes h = c·λ_min with λ_min = {} the smallest eigenvalue of the \
         Laplace covariance (largest true variance {}). {} chains per method and step size, each \
         given {} evaluations, started at Laplace draws. Truth: {} importance draws (ESS {}) with \
         the Laplace moments as control variates; its own expected L1 error ≈ {} (Σ var = {}).",
        f.n,
        f.d,
        f.batch,
        fmt_sig(f.lambda_min, 3),
        fmt_sig(f.max_variance, 3),
        f.chains,
        fmt_sig(f.budget as f64, 3),
        f.truth_draws,
        fmt_sig(f.truth_ess, 4),
        fmt_sig(f.truth_l1_floor, 2),
        fmt_sig(f.sum_variance, 3)
    ));
    for s in &f.steps {
        let rows: Vec<Vec<String>> = s
            .curves
            .iter()
            .map(|c| {
                vec![
                    c.method.label(),
                    fmt_sig(c.l1.last().copied().unwrap_or(f64::NAN), 3),
                    fmt_sig(c.pooled_l1, 3),
                    fmt_sig(c.mean_variance_ratio, 3),
                    format!(
                        "{} ± {}",
                        fmt_sig(c.second_moment_ratio, 3),
                        fmt_sig(c.second_moment_ratio_mcse, 2)
                    ),
                    pct(c.accept),
                    fmt_sig(c.steps, 3),
                    fmt_sig(c.evals_per_step, 4),
                    pct(c.test_data_fraction),
                ]
            })
            .collect();
        r.paragraph(&format!("**h = {} λ_min = {}**", s.factor, fmt_sig(s.step_size, 3)));
        r.table(
            &[
                "method",
                "L1 error (mean over chains)",
                "pooled L1",
                "pooled var / true var",
                "E(θ−μ)²/var ± MCSE",
                "accept",
                "steps per chain",
                "evals per step",
                "data per test",
            ],
            &rows,
        );
    }
    r.image("Figs. 5-6", "fig5_6_sgld_variance_error.svg");
}

fn fig78_section(a: &Austerity, r: &mut Report) {
    let g = &a.fig78;
    let s = &g.sizes;
    r.section("(d) Figs. 7–8 — approximate Gibbs on the three-way MRF");
    r.paragraph(&format!(
        "D = {} variables, N_i = {} factors (pairs) per variable, Austerity mini-batch m = {} pairs. \
         Truth: {} exact Gibbs chains × {} sweeps (after {} burn-in) from random states; flip rate \
         {}, bulk ESS of the number of ones {}, R-hat {}; L1 distance between two reference chains \
         {} (truth's own error ≈ {}). Fig. 7: {} (state, variable) pairs from the reference chains, \
         spread over {} probability bins, {} repetitions each ({} at ε = 0.01). Fig. 8: {} chains per method from \
         random states, {} factor evaluations each, {} random 5-variable subsets.",
        s.d,
        g.factors_per_variable,
        s.batch,
        s.reference_chains,
        s.reference_sweeps,
        s.reference_burn_in,
        pct(g.reference_flip_rate),
        fmt_sig(g.reference_ess, 3),
        fmt_sig(g.reference_rhat, 4),
        fmt_sig(g.reference_split_l1, 3),
        fmt_sig(g.truth_l1_floor, 2),
        g.points.len(),
        s.pair_bins,
        s.reps,
        s.reps_smallest_epsilon,
        s.chains,
        fmt_sig(s.budget as f64, 3),
        s.subsets
    ));
    let rows: Vec<Vec<String>> = g
        .conditional_errors
        .iter()
        .map(|c| {
            vec![
                c.epsilon.to_string(),
                fmt_sig(c.max_abs_error, 3),
                fmt_sig(c.max_binomial_sd, 2),
                fmt_sig(c.mean_error_above_half, 2),
                fmt_sig(c.mean_error_below_half, 2),
                pct(c.fraction_used),
            ]
        })
        .collect();
    r.table(
        &[
            "ε",
            "max abs error",
            "max binomial sd",
            "mean error (P > ½)",
            "mean error (P < ½)",
            "factors used",
        ],
        &rows,
    );
    r.image("Fig. 7", "fig7_conditionals.svg");
    let rows: Vec<Vec<String>> = g
        .curves
        .iter()
        .map(|c| {
            vec![
                c.label(),
                fmt_sig(c.l1.last().copied().unwrap_or(f64::NAN), 3),
                fmt_sig(c.sweeps, 4),
                pct(c.fraction_used),
            ]
        })
        .collect();
    r.table(
        &["method", "L1 error at the budget", "sweeps per chain", "factors used per update"],
        &rows,
    );
    r.image("Fig. 8", "fig8_joint_error.svg");
}
