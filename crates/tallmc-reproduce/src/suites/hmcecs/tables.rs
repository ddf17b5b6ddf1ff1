//! Tables 1–2 and Fig. 2 of Dang et al. (2019), §6.5 (HIGGS): perturbed and signed HMC-ECS
//! against SG-HMC and SGLD (with and without control variates) and full-data HMC, on the
//! higgs-like logistic regression (d = 29; n = 10⁵ quick, 10⁷ full; [`higgs_like`]).
//!
//! **Runs** (each [`CHAINS`] chains started at draws from the Laplace approximation, so every
//! chain is near stationarity and warmup only tunes):
//! * **full-data HMC** — the reference ("truth" for Fig. 2): Laplace covariance as fixed dense
//!   metric, trajectory length 1.2 (HMC-ECS's), ε by dual averaging to 0.8;
//! * **perturbed HMC-ECS** — the library defaults ([`HmcEcsConfig`]): 2nd-order control
//!   variates at the posterior mode, m tuned for V[ℓ̂] ≤ 1 (at least 100), G = 100 blocks,
//!   εL = 1.2, θ* and M re-set every 200 warmup iterations;
//! * **signed HMC-ECS** — defaults ([`SignedHmcEcsConfig`]): block size 30, λ = 100, a tuned
//!   for P(L̂_B ≥ 0) ≥ 0.99; posterior summaries sign-corrected
//!   ([`tallmc_diagnostics::sign_corrected`]);
//! * **SG-HMC** with 2nd-order control variates and without (the paper's SG-HMC₁ / SG-HMC₂),
//!   and **SGLD** with and without: as in the paper, the same m as perturbed HMC-ECS, the
//!   inverse Hessian at the mode as mass matrix / preconditioner ("the unrealistically
//!   favorable scenario"), fixed step sizes picked by trial as the paper does ([`SGHMC_STEP`],
//!   L = 1.2/ε; [`SGLD_STEP`]), and as many iterations as give the gradient evaluations of
//!   perturbed HMC-ECS after burn-in.
//!
//! **Cost** (the paper's convention): per-datum evaluations ℓ_i, ∇ℓ_i, ∇²ℓ_i (EvalCounts
//! total). HMC-ECS and full HMC: the whole run — Newton for the mode, the control variates,
//! re-centring passes, warmup and sampling; SG methods: post burn-in only. CT_j = (cost per
//! draw) × IF_j with IF_j = draws/ESS_j and ESS_j = (sd_j / MCSE_j)² (the ESS of the mean; for
//! signed HMC-ECS with the delta-method MCSE of the sign-corrected mean, so the sign's cost is
//! included). RCT_j = CT_j / CT_j(perturbed HMC-ECS); min / median / max over the 29
//! parameters (Table 1). The evaluation ratio of full HMC is its CT over perturbed HMC-ECS's
//! (median over parameters).

use serde_json::{Value, json};
use tallmc_core::{EvalCounts, Terms};
use tallmc_diagnostics::{Draws, sign_corrected, summarize};
use tallmc_estimators::{ControlVariate, ControlVariateGradient, CvOrder, RankOne};
use tallmc_integrators::Metric;
use tallmc_models::synthetic::{HIGGS_LIKE_PRIOR_SD, higgs_like};
use tallmc_models::{DesignOptions, LogisticRegression};
use tallmc_samplers::sink::MemorySink;
use tallmc_samplers::{
    ChainOutput, Hmc, HmcConfig, HmcEcs, HmcEcsConfig, Laplace, NewtonOptions, SgHmc, SgHmcConfig,
    Sgld, SgldConfig, SignedHmcEcs, SignedHmcEcsConfig, laplace_approximation,
};

use super::DATA_SEED;
use crate::chains::{Chains, mean_stat, run_config};
use crate::figure::{Axes, Figure, Legend, PALETTE, RefLine, Scatter};
use crate::part::{Claim, Part, Z_MAX};
use crate::report::{Report, fmt_sig};
use crate::{Context, Result};

/// Chains per method.
pub const CHAINS: usize = 2;
/// SG-HMC step size ε in the whitened coordinates of the Laplace mass matrix (trajectory
/// length 1.2 as HMC-ECS, so L = 24). Picked by trial as in the paper: at ε = 0.05 the
/// integrator's own bias on a standard-normal target is about −5 % in variance (see
/// `tallmc_samplers::sghmc`).
pub const SGHMC_STEP: f64 = 0.05;
/// SGLD step size h with the Laplace covariance as preconditioner (whitened units): the
/// discretization alone inflates variances by about h/4 = 0.5 %.
pub const SGLD_STEP: f64 = 0.02;
/// HMC-ECS's trajectory length εL (the paper's 1.2).
pub const TRAJECTORY_LENGTH: f64 = 1.2;
/// "As accurate as the issue asks": every posterior mean within this many posterior sds of
/// full-data HMC's…
pub const MAX_MEAN_ERROR_SDS: f64 = 0.1;
/// …and every posterior sd within this relative error.
pub const MAX_SD_ERROR: f64 = 0.1;
/// Perturbed HMC-ECS's mean inefficiency factor is below this multiple of full-data HMC's.
pub const MAX_IF_RATIO: f64 = 1.5;
/// Full-data HMC needs at least this multiple of perturbed HMC-ECS's evaluations per
/// effective draw (the check).
pub const MIN_FULL_HMC_RATIO: f64 = 100.0;
/// Relative sd error above which an SG method is visibly biased.
pub const MIN_BIASED_SD_ERROR: f64 = 0.5;

/// Sizes of one run of this part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Observations.
    pub n: usize,
    /// Warmup (burn-in) iterations per chain of the MH-corrected methods.
    pub warmup: usize,
    /// Draws per chain of the MH-corrected methods.
    pub draws: usize,
}

impl Plan {
    /// The plan of a mode: quick n = 10⁵ (600 + 1,000), full n = 10⁷ (1,000 + 2,000).
    pub fn of(mode: crate::Mode) -> Self {
        mode.pick(
            Self { n: 100_000, warmup: 600, draws: 1000 },
            Self { n: 10_000_000, warmup: 1000, draws: 2000 },
        )
    }
}

/// The compared methods, in table order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Full-data HMC (the reference).
    FullHmc,
    /// Perturbed HMC-ECS.
    Perturbed,
    /// Signed HMC-ECS.
    Signed,
    /// SG-HMC with 2nd-order control variates (SG-HMC₁).
    SgHmcCv,
    /// SG-HMC, plain minibatch gradients (SG-HMC₂).
    SgHmc,
    /// SGLD with 2nd-order control variates.
    SgldCv,
    /// SGLD, plain minibatch gradients.
    Sgld,
}

impl Method {
    /// Every method.
    pub const ALL: [Self; 7] = [
        Self::FullHmc,
        Self::Perturbed,
        Self::Signed,
        Self::SgHmcCv,
        Self::SgHmc,
        Self::SgldCv,
        Self::Sgld,
    ];

    /// Key in the summary.
    pub fn key(self) -> &'static str {
        match self {
            Self::FullHmc => "full_hmc",
            Self::Perturbed => "hmc_ecs_perturbed",
            Self::Signed => "hmc_ecs_signed",
            Self::SgHmcCv => "sghmc_cv",
            Self::SgHmc => "sghmc",
            Self::SgldCv => "sgld_cv",
            Self::Sgld => "sgld",
        }
    }

    /// Label in tables and figures.
    pub fn label(self) -> &'static str {
        match self {
            Self::FullHmc => "full-data HMC",
            Self::Perturbed => "HMC-ECS perturbed",
            Self::Signed => "HMC-ECS signed",
            Self::SgHmcCv => "SG-HMC + CV",
            Self::SgHmc => "SG-HMC",
            Self::SgldCv => "SGLD + CV",
            Self::Sgld => "SGLD",
        }
    }

    /// Whether the method has an MH correction (its cost counts the whole run).
    fn corrected(self) -> bool {
        matches!(self, Self::FullHmc | Self::Perturbed | Self::Signed)
    }
}

/// What one method measured.
#[derive(Debug, Clone)]
pub struct MethodRun {
    /// Which.
    pub method: Method,
    /// Posterior means (sign-corrected for signed HMC-ECS).
    pub mean: Vec<f64>,
    /// Posterior sds (sign-corrected for signed HMC-ECS).
    pub sd: Vec<f64>,
    /// MCSE of the means.
    pub mcse_mean: Vec<f64>,
    /// ESS of each mean, (sd/MCSE)².
    pub ess: Vec<f64>,
    /// Draws over all chains.
    pub draws: usize,
    /// Mean θ-step acceptance statistic (NaN for the uncorrected SG methods).
    pub accept: f64,
    /// Mean u-step acceptance (HMC-ECS only).
    pub u_accept: Option<f64>,
    /// Mean leapfrog steps per iteration (SG-HMC: steps per trajectory; SGLD: 1).
    pub steps: f64,
    /// Step size (adapted, chain 1).
    pub step_size: f64,
    /// τ̂ (signed only).
    pub tau: Option<f64>,
    /// Subsample size m per likelihood estimate (signed: λ × block size; full HMC: n).
    pub m: f64,
    /// Per-datum evaluations in the cost (see the module docs).
    pub cost: EvalCounts,
    /// Per-datum evaluations of the sampling phase only.
    pub sampling_evals: EvalCounts,
    /// Divergent transitions after warmup.
    pub divergences: usize,
    /// Wall seconds (slowest chain, warmup + sampling).
    pub seconds: f64,
}

impl MethodRun {
    /// IF_j = draws / ESS_j.
    pub fn inefficiency(&self) -> Vec<f64> {
        self.ess.iter().map(|e| self.draws as f64 / e).collect()
    }

    /// CT_j = cost per draw × IF_j (per-datum evaluations per effective draw).
    pub fn computing_time(&self) -> Vec<f64> {
        let per_draw = self.cost.total() as f64 / self.draws as f64;
        self.inefficiency().iter().map(|f| per_draw * f).collect()
    }
}

/// Tables 1–2 and Fig. 2.
#[derive(Debug, Clone)]
pub struct Tables {
    /// Sizes.
    pub plan: Plan,
    /// Newton's method for the mode (shared by every method; counted in each corrected
    /// method's cost).
    pub newton: EvalCounts,
    /// One run per method, in [`Method::ALL`] order.
    pub runs: Vec<MethodRun>,
}

/// Runs the part with the sizes of the context's mode.
pub fn compute(ctx: &Context<'_>) -> Result<Tables> {
    compute_with(ctx, Plan::of(ctx.mode))
}

/// Runs the part with the given sizes (the n = 10⁶ checks use this).
pub fn compute_with(ctx: &Context<'_>, plan: Plan) -> Result<Tables> {
    let syn = higgs_like(plan.n, DATA_SEED)?;
    let model = LogisticRegression::new(syn.data, DesignOptions::default(), HIGGS_LIKE_PRIOR_SD)?;
    let d = model.dim();
    let laplace = laplace_approximation(&model, &vec![0.0; d], NewtonOptions::default())?;
    let inits = laplace.dispersed_positions(CHAINS, 1.0, ctx.seed)?;
    let problem = Chains { model: &model, inits: &inits, reporter: ctx.reporter };
    let run = |warmup: usize, draws: usize, salt: u64| {
        run_config(warmup, draws, CHAINS, ctx.seed.wrapping_add(salt))
    };
    let mut runs = Vec::new();
    let label = |m: Method| format!("hmcecs tables: {}", m.label());

    let hmc = HmcConfig {
        trajectory_length: TRAJECTORY_LENGTH,
        ..HmcConfig::with_fixed_metric(laplace.dense_metric()?)
    };
    let out =
        problem.run(run(plan.warmup, plan.draws, 0), &Hmc::new(hmc)?, &label(Method::FullHmc))?;
    runs.push(measure(Method::FullHmc, &out, &laplace, plan.n as f64)?);

    let perturbed = HmcEcsConfig { center: Some(laplace.mode.clone()), ..Default::default() };
    let out = problem.run(
        run(plan.warmup, plan.draws, 1),
        &HmcEcs::new(perturbed)?,
        &label(Method::Perturbed),
    )?;
    // m from the chain's tuning (the mean batch size is (L + 1)·m per iteration).
    let m = out[0].report.tuning.estimator.subsample_size;
    let ecs = measure(Method::Perturbed, &out, &laplace, m as f64)?;
    let ecs_gradients_per_chain = ecs.sampling_evals.gradients as f64 / CHAINS as f64 / m as f64;
    runs.push(ecs);

    let signed = SignedHmcEcsConfig { center: Some(laplace.mode.clone()), ..Default::default() };
    let out = problem.run(
        run(plan.warmup, plan.draws, 2),
        &SignedHmcEcs::new(signed.clone())?,
        &label(Method::Signed),
    )?;
    runs.push(measure(Method::Signed, &out, &laplace, (signed.lambda * signed.block_size) as f64)?);

    // The SG methods: same m, Laplace mass matrix / preconditioner, as many minibatch
    // gradients after burn-in as perturbed HMC-ECS used (its gradient evaluations / m).
    let metric = Metric::dense(laplace.covariance.clone(), d)?;
    let (cv, _) = ControlVariate::new(&model, &laplace.mode, CvOrder::Two)?;
    let cv_gradient = ControlVariateGradient::new(&model, cv, RankOne::new(m), m)?;
    let num_steps = (TRAJECTORY_LENGTH / SGHMC_STEP).round() as usize;
    let sghmc = SgHmcConfig {
        step_size: SGHMC_STEP,
        num_steps,
        batch: m,
        metric: Some(metric.clone()),
        ..Default::default()
    };
    let sghmc_draws = ((ecs_gradients_per_chain / num_steps as f64).round() as usize).max(100);
    let sgld = SgldConfig {
        step_size: SGLD_STEP,
        batch: m,
        preconditioner: Some(metric),
        ..Default::default()
    };
    let sgld_draws = (ecs_gradients_per_chain.round() as usize).max(100);
    let sg_burnin = |draws: usize| (draws / 5).max(50);
    for method in [Method::SgHmcCv, Method::SgHmc, Method::SgldCv, Method::Sgld] {
        let (salt, draws) = match method {
            Method::SgHmcCv | Method::SgHmc => (3, sghmc_draws),
            _ => (4, sgld_draws),
        };
        let cfg = run(sg_burnin(draws), draws, salt);
        let measured = match method {
            Method::SgHmcCv => measure(
                method,
                &problem.run(
                    cfg,
                    &SgHmc::with_estimator(sghmc.clone(), cv_gradient.clone())?,
                    &label(method),
                )?,
                &laplace,
                m as f64,
            )?,
            Method::SgHmc => measure(
                method,
                &problem.run(cfg, &SgHmc::new(sghmc.clone())?, &label(method))?,
                &laplace,
                m as f64,
            )?,
            Method::SgldCv => measure(
                method,
                &problem.run(
                    cfg,
                    &Sgld::with_estimator(sgld.clone(), cv_gradient.clone())?,
                    &label(method),
                )?,
                &laplace,
                m as f64,
            )?,
            _ => measure(
                method,
                &problem.run(cfg, &Sgld::new(sgld.clone())?, &label(method))?,
                &laplace,
                m as f64,
            )?,
        };
        runs.push(measured);
    }
    Ok(Tables { plan, newton: laplace.evals, runs })
}

fn measure<S: serde::Serialize, T>(
    method: Method, out: &[ChainOutput<MemorySink<S>, T>], laplace: &Laplace, m: f64,
) -> Result<MethodRun> {
    let d = laplace.mode.len();
    let draws: usize = out.iter().map(|c| c.sink.num_draws()).sum();
    let (mut mean, mut sd, mut mcse) = (Vec::new(), Vec::new(), Vec::new());
    let mut tau = None;
    if method == Method::Signed {
        let signs: Vec<Vec<f64>> =
            out.iter().map(|c| c.sink.stat("sign__").unwrap_or_default()).collect();
        for j in 0..d {
            let x: Vec<Vec<f64>> = out.iter().map(|c| c.sink.coordinate(j)).collect();
            let s = sign_corrected(&x, &signs)?;
            mean.push(s.mean);
            sd.push(s.sd);
            mcse.push(s.mcse_mean);
            tau = Some(s.tau);
        }
    } else {
        let chains: Vec<&[f64]> = out.iter().map(|c| c.sink.draws.as_slice()).collect();
        let names: Vec<String> = (0..d).map(|j| format!("theta.{j}")).collect();
        for s in summarize(&names, &Draws::new(&chains, d)?)? {
            mean.push(s.mean);
            sd.push(s.sd);
            mcse.push(s.mcse_mean);
        }
    }
    let ess = sd.iter().zip(&mcse).map(|(s, e)| (s / e).powi(2)).collect();
    let warmup: EvalCounts = out.iter().map(|c| c.report.warmup_evals).sum();
    let sampling: EvalCounts = out.iter().map(|c| c.report.sampling_evals).sum();
    // The corrected methods pay the whole run and Newton's method for the mode (once: the
    // chains share it).
    let cost = if method.corrected() { warmup + sampling + laplace.evals } else { sampling };
    let steps = match method {
        Method::FullHmc | Method::Perturbed | Method::Signed => mean_stat(out, "n_leapfrog__"),
        Method::SgHmcCv | Method::SgHmc => (TRAJECTORY_LENGTH / SGHMC_STEP).round(),
        _ => 1.0,
    };
    let u_accept = matches!(method, Method::Perturbed | Method::Signed)
        .then(|| mean_stat(out, "u_accept_stat__"));
    let step_size = match method {
        Method::SgHmcCv | Method::SgHmc => SGHMC_STEP,
        Method::SgldCv | Method::Sgld => SGLD_STEP,
        _ => mean_stat(&out[..1], "stepsize__"),
    };
    let accept = if method.corrected() {
        out.iter().map(|c| c.report.mean_accept_stat).sum::<f64>() / out.len() as f64
    } else {
        f64::NAN
    };
    Ok(MethodRun {
        method,
        mean,
        sd,
        mcse_mean: mcse,
        ess,
        draws,
        accept,
        u_accept,
        steps,
        step_size,
        tau,
        m,
        cost,
        sampling_evals: sampling,
        divergences: out.iter().map(|c| c.report.divergences).sum(),
        seconds: out
            .iter()
            .map(|c| c.report.warmup_seconds + c.report.sampling_seconds)
            .fold(0.0, f64::max),
    })
}

/// Minimum, median and maximum.
fn min_median_max(v: &[f64]) -> (f64, f64, f64) {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let k = s.len();
    let med = if k % 2 == 1 { s[k / 2] } else { 0.5 * (s[k / 2 - 1] + s[k / 2]) };
    (s[0], med, s[k - 1])
}

/// Accuracy of one method against full-data HMC (Fig. 2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Accuracy {
    /// max_j |mean_j − mean_j(HMC)| / sd_j(HMC).
    pub max_mean_error_sds: f64,
    /// max_j |sd_j / sd_j(HMC) − 1|.
    pub max_sd_error: f64,
    /// max_j |mean_j − mean_j(HMC)| / √(MCSE_j² + MCSE_j(HMC)²).
    pub max_mean_z: f64,
}

impl Accuracy {
    /// max |Δmean|/sd, max |z| and max |sd ratio − 1| at 2 significant figures, for the claims.
    fn sig2(&self) -> [String; 3] {
        [self.max_mean_error_sds, self.max_mean_z, self.max_sd_error].map(|x| fmt_sig(x, 2))
    }
}

impl Tables {
    /// The run of `method`.
    pub fn run(&self, method: Method) -> &MethodRun {
        &self.runs[Method::ALL.iter().position(|m| *m == method).unwrap_or(0)]
    }

    /// Accuracy of `method` against full-data HMC.
    pub fn accuracy(&self, method: Method) -> Accuracy {
        let (r, h) = (self.run(method), self.run(Method::FullHmc));
        let mut a = Accuracy { max_mean_error_sds: 0.0, max_sd_error: 0.0, max_mean_z: 0.0 };
        for j in 0..r.mean.len() {
            let dm = (r.mean[j] - h.mean[j]).abs();
            a.max_mean_error_sds = a.max_mean_error_sds.max(dm / h.sd[j]);
            a.max_sd_error = a.max_sd_error.max((r.sd[j] / h.sd[j] - 1.0).abs());
            a.max_mean_z = a.max_mean_z.max(dm / r.mcse_mean[j].hypot(h.mcse_mean[j]));
        }
        a
    }

    /// Whether `method` is as accurate as the issue asks of perturbed HMC-ECS: every mean within
    /// 0.1 posterior sd and every sd within 10 % of full-data HMC.
    pub fn is_accurate(&self, method: Method) -> bool {
        let a = self.accuracy(method);
        a.max_mean_error_sds < MAX_MEAN_ERROR_SDS && a.max_sd_error < MAX_SD_ERROR
    }

    /// RCT_j of `method` relative to perturbed HMC-ECS: (min, median, max) over parameters.
    pub fn relative_computing_time(&self, method: Method) -> (f64, f64, f64) {
        let base = self.run(Method::Perturbed).computing_time();
        let ct = self.run(method).computing_time();
        let rct: Vec<f64> = ct.iter().zip(&base).map(|(a, b)| a / b).collect();
        min_median_max(&rct)
    }

    /// Fraction of the data a method evaluates per iteration (its sampling evaluations of ℓ_i
    /// or ∇ℓ_i, whichever is larger, per draw, over n).
    pub fn data_fraction_per_iteration(&self, method: Method) -> f64 {
        let r = self.run(method);
        let e = r.sampling_evals;
        e.terms.max(e.gradients) as f64 / r.draws as f64 / self.plan.n as f64
    }
}

impl Part for Tables {
    fn key(&self) -> &'static str {
        "tables12_fig2"
    }

    fn summary(&self) -> Value {
        let methods: Vec<Value> = self
            .runs
            .iter()
            .map(|r| {
                let acc = self.accuracy(r.method);
                let (lo, med, hi) = self.relative_computing_time(r.method);
                let inefficiency = r.inefficiency();
                json!({
                    "method": r.method.key(),
                    "accept_theta": r.accept,
                    "accept_u": r.u_accept,
                    "steps_per_iteration": r.steps,
                    "step_size": r.step_size,
                    "if_mean": inefficiency.iter().sum::<f64>() / inefficiency.len() as f64,
                    "ess_min": r.ess.iter().copied().fold(f64::INFINITY, f64::min),
                    "tau": r.tau,
                    "m": r.m,
                    "m_over_n_percent": 100.0 * r.m / self.plan.n as f64,
                    "data_fraction_per_iteration": self.data_fraction_per_iteration(r.method),
                    "cost_evals": r.cost.total(),
                    "draws": r.draws,
                    "rct_min_median_max": [lo, med, hi],
                    "max_mean_error_sds": acc.max_mean_error_sds,
                    "max_sd_error": acc.max_sd_error,
                    "max_mean_z": acc.max_mean_z,
                    "divergences": r.divergences,
                    "mean": r.mean,
                    "sd": r.sd,
                })
            })
            .collect();
        json!({
            "data": format!("higgs-like logistic regression, d = 29, data seed {DATA_SEED}"),
            "n": self.plan.n, "warmup": self.plan.warmup, "draws_per_chain": self.plan.draws,
            "chains": CHAINS, "sghmc_step": SGHMC_STEP, "sgld_step": SGLD_STEP,
            "newton_evals": self.newton.total(),
            "full_hmc_cost_ratio_median": self.relative_computing_time(Method::FullHmc).1,
            "methods": methods,
        })
    }

    fn claims(&self) -> Vec<Claim> {
        let p = self.run(Method::Perturbed);
        let h = self.run(Method::FullHmc);
        let s = self.run(Method::Signed);
        let mean_if = |r: &MethodRun| {
            let f = r.inefficiency();
            f.iter().sum::<f64>() / f.len() as f64
        };
        let rct = |m: Method| {
            let (a, b, c) = self.relative_computing_time(m);
            format!("{} / {} / {}", fmt_sig(a, 3), fmt_sig(b, 3), fmt_sig(c, 3))
        };
        // "At comparable accuracy": a method that is cheaper per effective draw but misses the
        // posterior (means off by ≥ 0.1 sd or sds by ≥ 10 %) does not contradict the ordering.
        let sg = [Method::SgHmcCv, Method::SgHmc, Method::SgldCv, Method::Sgld];
        let cheaper_and_accurate: Vec<&str> = sg
            .iter()
            .filter(|m| self.relative_computing_time(**m).1 <= 1.0 && self.is_accurate(**m))
            .map(|m| m.label())
            .collect();
        let cheaper_but_biased: Vec<String> = sg
            .iter()
            .filter(|m| self.relative_computing_time(**m).1 <= 1.0 && !self.is_accurate(**m))
            .map(|m| {
                let a = self.accuracy(*m);
                format!(
                    "{} (median RCT {}, but means off by up to {} sd and sds by {} %)",
                    m.label(),
                    fmt_sig(self.relative_computing_time(*m).1, 2),
                    fmt_sig(a.max_mean_error_sds, 2),
                    fmt_sig(100.0 * a.max_sd_error, 2)
                )
            })
            .collect();
        let full_ratio = self.relative_computing_time(Method::FullHmc).1;
        let pa = self.accuracy(Method::Perturbed);
        let sa = self.accuracy(Method::Signed);
        let plain = self.accuracy(Method::SgHmc);
        let [p_mean, p_z, p_sd] = pa.sig2();
        let [s_mean, s_z, s_sd] = sa.sig2();
        let [plain_mean, _, plain_sd] = plain.sig2();
        let [sgld_mean, _, sgld_sd] = self.accuracy(Method::Sgld).sig2();
        let n = self.plan.n as f64;
        let exact_divergences: usize = [Method::FullHmc, Method::Perturbed, Method::Signed]
            .iter()
            .map(|&m| self.run(m).divergences)
            .sum();
        vec![
            Claim::new(
                "table2_hmc_ecs_mixes_like_full_hmc",
                "Table 2: θ-step acceptance 0.980 / 0.979 (HMC 0.980), u-step 1 / 0.993, IF 2.19 / 2.19 (HMC 2.08), τ̂ = 1, 100 m/n = 0.012 / 0.029 (perturbed / signed, n = 10.5M)",
                format!(
                    "n = {}: θ-accept {} / {} (HMC {}), u-accept {} / {}, mean IF {} / {} (HMC {}), τ̂ = {}, 100 m/n = {} / {}",
                    fmt_sig(n, 2),
                    fmt_sig(p.accept, 3),
                    fmt_sig(s.accept, 3),
                    fmt_sig(h.accept, 3),
                    fmt_sig(p.u_accept.unwrap_or(f64::NAN), 3),
                    fmt_sig(s.u_accept.unwrap_or(f64::NAN), 3),
                    fmt_sig(mean_if(p), 3),
                    fmt_sig(mean_if(s), 3),
                    fmt_sig(mean_if(h), 3),
                    fmt_sig(s.tau.unwrap_or(f64::NAN), 4),
                    fmt_sig(100.0 * p.m / n, 2),
                    fmt_sig(100.0 * s.m / n, 2),
                ),
                format!("perturbed HMC-ECS's mean IF < {MAX_IF_RATIO} × full-data HMC's"),
                mean_if(p) < MAX_IF_RATIO * mean_if(h),
            ),
            Claim::new(
                "table1_hmc_ecs_costs_least_at_comparable_accuracy",
                "Table 1: RCT (min / median / max) vs perturbed HMC-ECS — signed 0.8 / 1.15 / 1.95, SG-HMC 2.43 / 2.97 / 4.08, SGLD 3.58 / 12.46 / 326.8",
                format!(
                    "signed {}, SG-HMC+CV {}, SG-HMC {}, SGLD+CV {}, SGLD {}{}",
                    rct(Method::Signed),
                    rct(Method::SgHmcCv),
                    rct(Method::SgHmc),
                    rct(Method::SgldCv),
                    rct(Method::Sgld),
                    if cheaper_but_biased.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; cheaper per effective draw but biased: {}",
                            cheaper_but_biased.join("; ")
                        )
                    }
                ),
                "every SG method's median RCT > 1 unless it misses the posterior (a mean off by ≥ 0.1 sd or an sd by ≥ 10 %)",
                cheaper_and_accurate.is_empty(),
            ),
            Claim::new(
                "s6_5_full_hmc_costs_far_more",
                "§6.5: full-data HMC is 642.8× (perturbed) more expensive in evaluations at n = 10.5M",
                format!(
                    "median CT ratio full HMC / perturbed HMC-ECS at n = {}: {}× (m = {})",
                    fmt_sig(n, 2),
                    fmt_sig(full_ratio, 3),
                    p.m
                ),
                format!(
                    "ratio ≥ {MIN_FULL_HMC_RATIO} (the ratio grows like n/m; the issue's check at n = 10⁶ is the same bound)"
                ),
                full_ratio >= MIN_FULL_HMC_RATIO,
            ),
            Claim::new(
                "fig2_hmc_ecs_matches_full_hmc",
                "Fig. 2: both HMC-ECS algorithms approximate the posterior means and variances well",
                format!(
                    "max |Δmean|/sd: perturbed {p_mean} (max |z| {p_z}), signed {s_mean} (max |z| {s_z}); max |sd ratio − 1|: perturbed {p_sd}, signed {s_sd}; divergent transitions of full HMC and both HMC-ECS: {exact_divergences}"
                ),
                format!(
                    "perturbed: every mean within {Z_MAX} combined MCSE of full-data HMC and every sd within {} %; signed: every sign-corrected mean within {Z_MAX} combined MCSE; no divergent transition",
                    100.0 * MAX_SD_ERROR
                ),
                pa.max_mean_z < Z_MAX
                    && pa.max_sd_error < MAX_SD_ERROR
                    && sa.max_mean_z < Z_MAX
                    && exact_divergences == 0,
            ),
            Claim::new(
                "fig2_sg_methods_without_cv_are_biased",
                "Fig. 2: SGLD is biased (and here SG-HMC without control variates: its minibatch noise dominates the friction)",
                format!(
                    "max |sd ratio − 1|: SG-HMC {plain_sd}, SGLD {sgld_sd}; max |Δmean|/sd: SG-HMC {plain_mean}, SGLD {sgld_mean}"
                ),
                format!("plain SG-HMC's sds off by more than {} %", 100.0 * MIN_BIASED_SD_ERROR),
                plain.max_sd_error > MIN_BIASED_SD_ERROR,
            ),
        ]
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        figures(self)
    }

    fn report(&self, r: &mut Report) {
        r.section("Tables 1–2 and Fig. 2: higgs-like logistic regression (HIGGS stand-in)");
        r.paragraph(&format!(
            "n = {}, d = 29, {CHAINS} chains per method started at Laplace draws. Full HMC and \
             HMC-ECS: {} warmup + {} draws per chain; their cost is the whole run (Newton, \
             control variates, re-centring, warmup, sampling). SG methods: the same m as \
             perturbed HMC-ECS, Laplace preconditioning, SG-HMC ε = {SGHMC_STEP} with \
             L = 1.2/ε, SGLD h = {SGLD_STEP}, as many gradient evaluations after burn-in as \
             perturbed HMC-ECS; their cost is post burn-in only (the paper's convention). \
             CT = evaluations per draw × IF, IF = draws/ESS of the mean. Signed HMC-ECS is \
             summarized with sign-corrected means.",
            self.plan.n, self.plan.warmup, self.plan.draws
        ));
        r.table_of(
            &[
                "method",
                "α_θ",
                "α_u",
                "L",
                "mean IF",
                "min ESS",
                "τ̂",
                "100 m/n",
                "RCT min / median / max",
                "max |Δmean|/sd",
                "max |sd ratio − 1|",
            ],
            self.runs.iter(),
            |x| {
                let f = x.inefficiency();
                let (lo, med, hi) = self.relative_computing_time(x.method);
                let acc = self.accuracy(x.method);
                vec![
                    x.method.label().to_string(),
                    fmt_sig(x.accept, 3),
                    x.u_accept.map_or("–".into(), |u| fmt_sig(u, 3)),
                    fmt_sig(x.steps, 3),
                    fmt_sig(f.iter().sum::<f64>() / f.len() as f64, 3),
                    fmt_sig(x.ess.iter().copied().fold(f64::INFINITY, f64::min), 3),
                    x.tau.map_or("–".into(), |t| fmt_sig(t, 4)),
                    fmt_sig(100.0 * x.m / self.plan.n as f64, 2),
                    format!("{} / {} / {}", fmt_sig(lo, 3), fmt_sig(med, 3), fmt_sig(hi, 3)),
                    fmt_sig(acc.max_mean_error_sds, 2),
                    fmt_sig(acc.max_sd_error, 2),
                ]
            },
        );
        r.image("Fig. 2: posterior means and variances against full-data HMC", "fig2_moments.svg");
    }
}

/// `fig2_moments.svg`: every parameter's posterior mean and variance from each method against
/// full-data HMC's, with the identity line, and the mean errors in posterior sds of the methods
/// within 1 sd (the biased SG methods are off that scale).
fn figures(t: &Tables) -> Vec<(&'static str, Figure)> {
    let h = t.run(Method::FullHmc);
    let var = |r: &MethodRun| r.sd.iter().map(|s| s * s).collect::<Vec<_>>();
    let mut means = Axes::new()
        .with_title("Posterior means")
        .with_x_label("full-data HMC")
        .with_y_label("method")
        .with_legend(Legend::TopLeft)
        .with_series(RefLine::identity());
    let mut variances = Axes::new()
        .with_title("Posterior variances")
        .with_x_label("full-data HMC")
        .with_y_label("method")
        .with_log_x()
        .with_log_y()
        .with_legend(Legend::TopLeft)
        .with_series(RefLine::identity());
    // The means panel spans the whole parameter range, where posterior-sd-sized errors are
    // invisible; the third panel shows them in posterior sds (the 0.1-sd criterion).
    let mut errors = Axes::new()
        .with_title("Mean error in posterior sds (methods within 1 sd)")
        .with_x_label("parameter")
        .with_y_label("(mean − HMC mean) / HMC sd")
        .with_legend(Legend::TopLeft)
        .with_series(RefLine::horizontal(0.1).with_label("± 0.1 sd"))
        .with_series(RefLine::horizontal(-0.1));
    let index: Vec<f64> = (0..h.mean.len()).map(|j| j as f64).collect();
    // One colour per method in every panel.
    for (k, r) in t.runs.iter().filter(|r| r.method != Method::FullHmc).enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let label = r.method.label();
        means.push(Scatter::new(&h.mean, &r.mean).with_color(color).with_label(label));
        variances.push(Scatter::new(&var(h), &var(r)).with_color(color).with_label(label));
        if t.accuracy(r.method).max_mean_error_sds < 1.0 {
            let z: Vec<f64> =
                r.mean.iter().zip(&h.mean).zip(&h.sd).map(|((m, mh), sd)| (m - mh) / sd).collect();
            errors.push(Scatter::new(&index, &z).with_color(color).with_label(label));
        }
    }
    let fig = Figure::new()
        .with_title(format!("Fig. 2: higgs-like logistic regression, n = {}", t.plan.n))
        .with_columns(3)
        .with_panel(means)
        .with_panel(variances)
        .with_panel(errors);
    vec![("fig2_moments.svg", fig)]
}
