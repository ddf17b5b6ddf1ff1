//! **§7.1, Fig. 4** of Pakman et al. (2017): Bayesian logistic regression, d = 20, N = 1000,
//! minibatch n = 100 ([`problem`](super::problem): `sbps_logistic(1000, 20, DATA_SEED)`, prior
//! N(0, 10² I)), every sampler from the same random start w₀ ~ N(0, I₂₀) (drawn from the run
//! seed), with a budget in **data passes** (epochs = per-datum gradient evaluations / N):
//!
//! * **SBPS** (k = 3, n = 100, refresh rate 0.05, unit-sphere velocities: the paper's and the
//!   library's defaults) and **pSBPS** (the same with the diagonal preconditioner, adapted during
//!   the burn-in and then frozen — the library's pSBPS; the paper adapts throughout);
//! * **lipSBPS** (one datum per proposal against the Lipschitz-type bound, refresh rate 1) and
//!   **ZZ-SS** (one datum per proposal against Bierkens et al.'s bound N max_J |x_Ji|);
//! * **SGLD** at the step size picked by the scan of Supp. E ([`sg_scan`](super::sg_scan)) and at
//!   the paper's ε = 0.01, and **mSGNHT** at its own scanned step (step sizes in the paper's
//!   units, converted in [`sg_scan`](super::sg_scan)).
//!
//! Measured ([`fig4_trace`](super::fig4_trace)): the error of the running posterior-mean
//! estimate — RMS over the 20 coordinates of (m̂_j − m_j)/sd_j against the long full-data HMC
//! reference of [`Logistic`](super::Logistic) — at log-spaced epoch counts e, each estimate
//! averaging the window (e/2, e] for every method (exact time averages for the continuous-time samplers,
//! iterate means for SGLD and mSGNHT), and the NLL per datum of the current position (the
//! paper's top-left panel).
//!
//! **Claim** (read quantitatively: "converges orders of magnitude faster than lipSBPS and
//! ZZ-SS"): SBPS's error drops, and stays, below the final error of lipSBPS (and of ZZ-SS) at
//! an epoch count at least 10× smaller than their budget. Two claims, one per exact sampler: the
//! ZZ-SS one holds; the lipSBPS one is decided at the Monte Carlo noise floor of a one-chain
//! quick run (its bound N·L costs about 8× SBPS's evaluations per unit time, but exact BPS mixes
//! faster per unit time, and both end at errors of 0.1–0.4 sd), so its verdict changes with the
//! seed.

use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;
use serde_json::{Value, json};
use tallmc_core::Terms;
use tallmc_core::rng::chain_rng;
use tallmc_samplers::{LipSbps, LipSbpsConfig, Sbps, SbpsConfig, ZigZagSubsampling};

use super::fig4_trace::{Plan, Target, Trace, pooled_final, run_pdmp, run_sg, running_estimates};
use super::paper_bound::PaperBound;
use super::sg_scan::{Scan, ScanPlan, SgMethod, msgnht, scan, sgld};
use super::{Claim, Part, Problems, chain_seed};
use crate::figure::{Axes, Figure, Legend, Line, PALETTE, RefLine};
use crate::report::{Report, fmt_sig};
use crate::{Context, Result};

/// Seed tag of the start w₀; the methods use tag [`TAG_RUNS`] (stream = 8·method index +
/// chain), the scans [`TAG_SCAN_SGLD`] and [`TAG_SCAN_MSGNHT`].
pub const TAG_START: u64 = 60;
/// Seed tag of the Fig. 4 runs.
pub const TAG_RUNS: u64 = 61;
/// Seed tag of the SGLD scan.
pub const TAG_SCAN_SGLD: u64 = 62;
/// Seed tag of the mSGNHT scan.
pub const TAG_SCAN_MSGNHT: u64 = 63;
/// Data passes per chain: quick, full.
pub const BUDGET_EPOCHS: (f64, f64) = (4_000.0, 32_000.0);
/// Chains per method (all from the same start; the errors are of their pooled estimate):
/// quick, full.
pub const CHAINS: (usize, usize) = (1, 2);
/// Minibatch size of SBPS, pSBPS, SGLD and mSGNHT (the paper's n).
pub const BATCH: usize = 100;
/// SGLD's small step of Fig. 4 (paper units).
pub const SGLD_SMALL_STEP: f64 = 0.01;
/// The step grid of the scan (paper units, decreasing), for SGLD and mSGNHT alike.
pub const SCAN_GRID: [f64; 9] = [5.0, 2.0, 1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01];
/// Length of each scan run in relaxation times of the slowest posterior direction.
pub const SCAN_RELAXATIONS: f64 = 20.0;
/// The factor the claim asks for: SBPS reaches the exact samplers' final error with at least
/// this many times fewer data passes.
pub const SPEEDUP_CLAIM: f64 = 10.0;

/// The samplers of Fig. 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// SBPS, k = 3.
    Sbps,
    /// Preconditioned SBPS.
    Psbps,
    /// lipSBPS with the paper's bound N·L (exact, n = 1).
    LipSbps,
    /// lipSBPS with the library's tighter bound N·B(v) (exact, n = 1).
    LipSbpsLibrary,
    /// Zig-Zag with subsampling (exact, n = 1).
    ZzSs,
    /// SGLD at the scanned step.
    Sgld,
    /// SGLD at ε = 0.01.
    SgldSmall,
    /// mSGNHT at the scanned step.
    Msgnht,
}

impl Method {
    /// Every method, in figure order.
    pub const ALL: [Self; 8] = [
        Self::Sbps,
        Self::Psbps,
        Self::LipSbps,
        Self::LipSbpsLibrary,
        Self::ZzSs,
        Self::Sgld,
        Self::SgldSmall,
        Self::Msgnht,
    ];

    /// Key in the summary.
    pub fn key(self) -> &'static str {
        match self {
            Self::Sbps => "sbps",
            Self::Psbps => "psbps",
            Self::LipSbps => "lipsbps_paper_bound",
            Self::LipSbpsLibrary => "lipsbps_library_bound",
            Self::ZzSs => "zz_ss",
            Self::Sgld => "sgld_scanned",
            Self::SgldSmall => "sgld_small",
            Self::Msgnht => "msgnht_scanned",
        }
    }

    /// Whether the method is a continuous-time sampler.
    pub fn continuous(self) -> bool {
        matches!(self, Self::Sbps | Self::Psbps | Self::LipSbps | Self::LipSbpsLibrary | Self::ZzSs)
    }
}

/// One method's chains and what they give.
#[derive(Debug, Clone)]
pub struct MethodRun {
    /// Which.
    pub method: Method,
    /// Its label (with the step size for the SG methods).
    pub label: String,
    /// The paper's step size ε (SG methods).
    pub step: Option<f64>,
    /// The chains.
    pub chains: Vec<Trace>,
    /// Error of the pooled running estimate at every checkpoint (NaN before the first one with
    /// a half).
    pub error: Vec<f64>,
    /// Pooled final estimate (second halves).
    pub mean: Vec<f64>,
    /// Its batch-means MCSE.
    pub mcse: Vec<f64>,
}

impl MethodRun {
    /// The error at the end of the budget.
    pub fn final_error(&self) -> f64 {
        self.error.last().copied().unwrap_or(f64::NAN)
    }

    /// Sum over chains of a count.
    pub fn total(&self, f: impl Fn(&Trace) -> u64) -> u64 {
        self.chains.iter().map(f).sum()
    }
}

/// Fig. 4: the runs, the scans and the reference they are measured against.
#[derive(Debug, Clone)]
pub struct Fig4 {
    /// Budget and checkpoints (epochs per chain).
    pub plan: Plan,
    /// Chains per method.
    pub chains: usize,
    /// The common start w₀.
    pub start: Vec<f64>,
    /// Reference posterior means (full-data HMC).
    pub ref_mean: Vec<f64>,
    /// Reference posterior sds.
    pub ref_sd: Vec<f64>,
    /// MCSE of the reference means.
    pub ref_mcse: Vec<f64>,
    /// N.
    pub n: usize,
    /// NLL(ŵ)/N at the posterior mode.
    pub map_nll: f64,
    /// The paper's lipSBPS constant L = √D max |x_id| and the library's max_i ‖x_i‖.
    pub lip_constants: (f64, f64),
    /// The SGLD and mSGNHT scans.
    pub scans: Vec<Scan>,
    /// One run per method, in [`Method::ALL`] order.
    pub runs: Vec<MethodRun>,
}

impl Fig4 {
    /// Runs the scans, then every method (chains in parallel).
    pub fn compute(ctx: &Context<'_>, problems: &Problems<'_>) -> Result<Self> {
        let p = problems.logistic()?;
        let (model, laplace, reference) = (&p.model, &p.laplace, &p.reference);
        let (n, d) = (model.num_terms(), model.dim());
        let plan = Plan::new(ctx.mode.pick(BUDGET_EPOCHS.0, BUDGET_EPOCHS.1), 0.1);
        let chains = ctx.mode.pick(CHAINS.0, CHAINS.1);
        let mut rng = chain_rng(chain_seed(ctx.seed, TAG_START), 0);
        let start: Vec<f64> = (0..d).map(|_| StandardNormal.sample(&mut rng)).collect();

        let scan_plan = ScanPlan::from_reference(
            SCAN_GRID.to_vec(),
            SCAN_RELAXATIONS,
            BATCH,
            reference,
            laplace,
        );
        let scans = [(SgMethod::Sgld, TAG_SCAN_SGLD), (SgMethod::Msgnht, TAG_SCAN_MSGNHT)]
            .par_iter()
            .map(|&(m, tag)| scan(m, model, laplace, &scan_plan, ctx.seed, tag))
            .collect::<Result<Vec<_>>>()?;
        // No acceptable step: the smallest of the grid (the report says so).
        let smallest = SCAN_GRID[SCAN_GRID.len() - 1];
        let (sgld_step, msgnht_step) =
            (scans[0].pick.unwrap_or(smallest), scans[1].pick.unwrap_or(smallest));

        let paper = PaperBound::new(model);
        let jobs: Vec<(usize, usize)> =
            (0..Method::ALL.len()).flat_map(|m| (0..chains).map(move |c| (m, c))).collect();
        let task = ctx.reporter.task("sbps fig4: chains", jobs.len() as u64);
        let traces = jobs
            .par_iter()
            .map(|&(m, c)| {
                let mut rng = chain_rng(chain_seed(ctx.seed, TAG_RUNS), 8 * m + c);
                let trace = match Method::ALL[m] {
                    Method::Sbps => {
                        let kernel = Sbps::new(SbpsConfig::with_batch(BATCH))?;
                        run_pdmp(model, &kernel, &start, &plan, &mut rng)?
                    }
                    Method::Psbps => {
                        let kernel = Sbps::new(SbpsConfig::with_batch(BATCH).preconditioned())?;
                        run_pdmp(model, &kernel, &start, &plan, &mut rng)?
                    }
                    Method::LipSbps => {
                        let kernel = LipSbps::new(LipSbpsConfig::default())?;
                        run_pdmp(&paper, &kernel, &start, &plan, &mut rng)?
                    }
                    Method::LipSbpsLibrary => {
                        let kernel = LipSbps::new(LipSbpsConfig::default())?;
                        run_pdmp(model, &kernel, &start, &plan, &mut rng)?
                    }
                    Method::ZzSs => {
                        run_pdmp(model, &ZigZagSubsampling::new(), &start, &plan, &mut rng)?
                    }
                    Method::Sgld => {
                        run_sg(model, sgld(sgld_step, n, BATCH)?, &start, &plan, &mut rng)?
                    }
                    Method::SgldSmall => {
                        run_sg(model, sgld(SGLD_SMALL_STEP, n, BATCH)?, &start, &plan, &mut rng)?
                    }
                    Method::Msgnht => {
                        run_sg(model, msgnht(msgnht_step, n, BATCH)?, &start, &plan, &mut rng)?
                    }
                };
                task.advance(1);
                Ok(trace)
            })
            .collect::<Result<Vec<_>>>()?;
        drop(task);

        let target = Target { mean: &reference.mean, sd: &reference.sd };
        let mut traces = traces.into_iter();
        let runs = Method::ALL
            .iter()
            .map(|&method| {
                let chains: Vec<Trace> = traces.by_ref().take(chains).collect();
                let error = running_estimates(&chains, &plan, d)
                    .iter()
                    .map(|e| if e[0].is_nan() { f64::NAN } else { target.error(e) })
                    .collect();
                let (mean, mcse) = pooled_final(&chains, d);
                let (label, step) = match method {
                    Method::Sbps => ("SBPS".to_string(), None),
                    Method::Psbps => ("pSBPS".into(), None),
                    Method::LipSbps => ("lipSBPS".into(), None),
                    Method::LipSbpsLibrary => ("lipSBPS, library bound".into(), None),
                    Method::ZzSs => ("ZZ-SS".into(), None),
                    Method::Sgld => {
                        (format!("SGLD ε = {}", fmt_sig(sgld_step, 2)), Some(sgld_step))
                    }
                    Method::SgldSmall => {
                        (format!("SGLD ε = {}", fmt_sig(SGLD_SMALL_STEP, 2)), Some(SGLD_SMALL_STEP))
                    }
                    Method::Msgnht => {
                        (format!("mSGNHT ε = {}", fmt_sig(msgnht_step, 2)), Some(msgnht_step))
                    }
                };
                MethodRun { method, label, step, chains, error, mean, mcse }
            })
            .collect();

        let all: Vec<u32> = (0..n as u32).collect();
        let mut values = vec![0.0; n];
        model.log_terms(&laplace.mode, &all, &mut values);
        let map_nll = -values.iter().sum::<f64>() / n as f64;
        Ok(Self {
            plan,
            chains,
            start,
            ref_mean: reference.mean.clone(),
            ref_sd: reference.sd.clone(),
            ref_mcse: reference.mcse.clone(),
            n,
            map_nll,
            lip_constants: (paper.constant(), model.max_row_norm()),
            scans,
            runs,
        })
    }

    /// The run of `method`.
    pub fn run(&self, method: Method) -> &MethodRun {
        &self.runs[Method::ALL.iter().position(|m| *m == method).unwrap_or(0)]
    }

    /// The reference's own error floor: RMS over coordinates of MCSE_j / sd_j.
    pub fn reference_floor(&self) -> f64 {
        let d = self.ref_sd.len() as f64;
        (self.ref_mcse.iter().zip(&self.ref_sd).map(|(m, s)| (m / s).powi(2)).sum::<f64>() / d)
            .sqrt()
    }

    /// max_j |m̂_j − m_j| / √(MCSE_j² + MCSE_j(reference)²) of `method`'s final estimate.
    pub fn max_z(&self, method: Method) -> f64 {
        let r = self.run(method);
        (0..r.mean.len())
            .map(|j| (r.mean[j] - self.ref_mean[j]).abs() / r.mcse[j].hypot(self.ref_mcse[j]))
            .fold(0.0, f64::max)
    }

    /// Whether `method`'s final estimate is biased: some coordinate more than 4 combined MCSE
    /// from the reference (a Bonferroni-type threshold: P(max of 20 |N(0, 1)| > 4) ≈ 0.001).
    pub fn biased(&self, method: Method) -> bool {
        self.max_z(method) > 4.0
    }

    /// The first checkpoint (epochs per chain) from which `method`'s error stays below `level`
    /// to the end (None if its final error is not below it).
    pub fn epochs_to_stay_below(&self, method: Method, level: f64) -> Option<f64> {
        let mut first = None;
        for (e, x) in self.plan.checkpoints.iter().zip(&self.run(method).error) {
            if *x < level {
                first.get_or_insert(*e);
            } else {
                first = None;
            }
        }
        first
    }

    /// SBPS (`fast`) against an exact sampler (`slow`): (the slow sampler's final error, the
    /// epoch count from which the fast one's error stays below it, budget / that epoch count).
    pub fn speedup(&self, fast: Method, slow: Method) -> (f64, Option<f64>, f64) {
        let level = self.run(slow).final_error();
        let when = self.epochs_to_stay_below(fast, level);
        let ratio = when.map_or(0.0, |e| self.plan.budget_epochs / e);
        (level, when, ratio)
    }
}

impl Part for Fig4 {
    fn key(&self) -> &'static str {
        "fig4_logistic"
    }

    fn summary(&self) -> Value {
        let runs: Vec<Value> = self
            .runs
            .iter()
            .map(|r| {
                json!({
                    "method": r.method.key(),
                    "step_paper_units": r.step,
                    "final_error_sds": r.final_error(),
                    "max_z": self.max_z(r.method),
                    "steps": r.total(|t| t.steps),
                    "proposals": r.total(|t| t.proposals),
                    "events": r.total(|t| t.events),
                    "violations": r.total(|t| t.violations),
                    "divergences": r.total(|t| t.divergences),
                    "final_nll_chain1": r.chains[0].nll.last(),
                })
            })
            .collect();
        let scans: Vec<Value> = self
            .scans
            .iter()
            .map(|s| {
                json!({
                    "method": s.method.key(),
                    "grid": s.points.iter().map(|p| p.eps).collect::<Vec<_>>(),
                    "epochs": s.points.iter().map(|p| s.plan.epochs(p.eps)).collect::<Vec<_>>(),
                    "max_mean_bias": s.plan.max_mean_bias,
                    "max_sd_bias": s.plan.max_sd_bias,
                    "mean_bias": s.points.iter().map(|p| p.mean_bias).collect::<Vec<_>>(),
                    "sd_bias": s.points.iter().map(|p| p.sd_bias).collect::<Vec<_>>(),
                    "pick": s.pick,
                })
            })
            .collect();
        let speed = |slow: Method| {
            let (level, when, ratio) = self.speedup(Method::Sbps, slow);
            json!({"level": level, "sbps_epochs": when, "ratio": ratio})
        };
        json!({
            "budget_epochs_per_chain": self.plan.budget_epochs,
            "chains": self.chains,
            "batch": BATCH,
            "start": self.start,
            "map_nll_per_datum": self.map_nll,
            "lipsbps_constant_paper": self.lip_constants.0,
            "max_row_norm": self.lip_constants.1,
            "reference_floor_sds": self.reference_floor(),
            "scans": scans,
            "runs": runs,
            "sbps_vs_lipsbps": speed(Method::LipSbps),
            "sbps_vs_lipsbps_library_bound": speed(Method::LipSbpsLibrary),
            "sbps_vs_zz_ss": speed(Method::ZzSs),
        })
    }

    fn claims(&self) -> Vec<Claim> {
        let f = self;
        let e = |m: Method| fmt_sig(f.run(m).final_error(), 2);
        let (l_level, l_when, l_ratio) = f.speedup(Method::Sbps, Method::LipSbps);
        let (z_level, z_when, z_ratio) = f.speedup(Method::Sbps, Method::ZzSs);
        let (b_level, b_when, b_ratio) = f.speedup(Method::Sbps, Method::LipSbpsLibrary);
        let when = |w: Option<f64>| w.map_or("never".into(), |x| fmt_sig(x, 3));
        let budget = f.plan.budget_epochs;
        let sg = [Method::Sgld, Method::SgldSmall, Method::Msgnht];
        let sg_errors: Vec<String> = sg
            .iter()
            .map(|&m| {
                format!(
                    "{} {} sd (max |z| {}: {})",
                    f.run(m).label,
                    e(m),
                    fmt_sig(f.max_z(m), 2),
                    if f.biased(m) { "biased" } else { "not detectably biased" }
                )
            })
            .collect();
        let sbps = f.run(Method::Sbps).final_error();
        let beats_sg =
            [Method::Sgld, Method::Msgnht].iter().all(|&m| sbps < f.run(m).final_error());
        let scan_pick =
            |k: usize| f.scans[k].pick.map_or("none acceptable".into(), |p| fmt_sig(p, 2));
        vec![
            Claim::new(
                "sbps_fewer_passes_than_zzss",
                "Fig. 4: SBPS converges orders of magnitude faster than ZZ-SS",
                format!(
                    "after {} epochs ZZ-SS's error is {} sd; SBPS stays below it from epoch {}: \
                     {}× fewer data passes (SBPS's own final error {} sd)",
                    fmt_sig(budget, 3),
                    fmt_sig(z_level, 2),
                    when(z_when),
                    fmt_sig(z_ratio, 3),
                    e(Method::Sbps),
                ),
                format!("ratio ≥ {SPEEDUP_CLAIM}"),
                z_ratio >= SPEEDUP_CLAIM,
            ),
            Claim::new(
                "sbps_fewer_passes_than_lipsbps",
                "Fig. 4: SBPS converges orders of magnitude faster than lipSBPS (the paper's bound N·L)",
                format!(
                    "after {} epochs lipSBPS's error is {} sd; SBPS stays below it from epoch {}: \
                     {}× fewer data passes",
                    fmt_sig(budget, 3),
                    fmt_sig(l_level, 2),
                    when(l_when),
                    fmt_sig(l_ratio, 3),
                ),
                format!("ratio ≥ {SPEEDUP_CLAIM}"),
                l_ratio >= SPEEDUP_CLAIM,
            ),
            Claim::new(
                "sbps_vs_lipsbps_library_bound",
                "(lipSBPS as the library runs it, with its ~5× tighter bound B(v))",
                format!(
                    "final error {} sd after {} epochs; SBPS stays below it from epoch {}: {}×",
                    fmt_sig(b_level, 2),
                    fmt_sig(budget, 3),
                    when(b_when),
                    fmt_sig(b_ratio, 3)
                ),
                format!("informative: ratio ≥ {SPEEDUP_CLAIM}"),
                b_ratio >= SPEEDUP_CLAIM,
            ),
            Claim::new(
                "sbps_beats_tuned_sgld_and_msgnht",
                "Fig. 4: SBPS outperforms the optimally tuned SGLD and mSGNHT",
                format!("final errors: SBPS {} sd; {}", e(Method::Sbps), sg_errors.join("; ")),
                "SBPS's final error below scanned SGLD's and mSGNHT's",
                beats_sg,
            ),
            Claim::new(
                "sg_scan_finds_a_step",
                "Supp. E: the scan picks ε = 0.1 for SGLD (the paper also runs mSGNHT at 0.1)",
                format!("picked ε = {} (SGLD), {} (mSGNHT)", scan_pick(0), scan_pick(1)),
                "informative: an acceptable step exists (the pick depends on the data and threshold)",
                f.scans.iter().all(|s| s.pick.is_some()),
            ),
        ]
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        let f = self;
        let mut nll = Axes::new()
            .with_title("NLL per datum of the current position (chain 1)")
            .with_x_label("epochs")
            .with_y_label("NLL / N")
            .with_log_x()
            .with_log_y()
            .with_legend(Legend::TopRight);
        let mut err = Axes::new()
            .with_title("Error of the running posterior-mean estimate")
            .with_x_label("epochs (per chain)")
            .with_y_label("RMS (estimate − HMC mean) / sd")
            .with_log_x()
            .with_log_y()
            .with_legend(Legend::BottomLeft);
        for (k, m) in f.runs.iter().enumerate() {
            let color = PALETTE[k % PALETTE.len()];
            let c = &m.chains[0];
            nll.push(Line::new(&c.epochs, &c.nll).with_color(color).with_label(m.label.clone()));
            err.push(
                Line::new(&f.plan.checkpoints, &m.error)
                    .with_color(color)
                    .with_label(m.label.clone()),
            );
        }
        let (d, n) = (f.ref_sd.len() as f64, f.n as f64);
        let laplace_mean = f.map_nll + d / (2.0 * n);
        let laplace_sd = (2.0 * d).sqrt() / (2.0 * n);
        nll.push(RefLine::horizontal(f.map_nll).with_label("NLL(ŵ)/N"));
        nll.push(RefLine::horizontal(laplace_mean + laplace_sd).with_label("Laplace mean ± sd"));
        nll.push(RefLine::horizontal(laplace_mean - laplace_sd));
        err.push(RefLine::horizontal(f.reference_floor()).with_label("reference MCSE"));
        let fig = Figure::new()
            .with_title("Fig. 4: logistic regression, d = 20, N = 1000, n = 100")
            .with_columns(2)
            .with_panel(nll)
            .with_panel(err);

        let mut panels = Figure::new()
            .with_title("Supp. E: step-size scans against the Laplace approximation")
            .with_columns(2);
        for s in &f.scans {
            let eps: Vec<f64> = s.points.iter().map(|p| p.eps).collect();
            let mb: Vec<f64> = s.points.iter().map(|p| p.mean_bias).collect();
            let sb: Vec<f64> = s.points.iter().map(|p| p.sd_bias).collect();
            let pick = s.pick.map_or("none".into(), |p| fmt_sig(p, 2));
            let mut a = Axes::new()
                .with_title(format!("{} (pick: ε = {pick})", s.method.label()))
                .with_x_label("step size ε (paper units)")
                .with_y_label("bias against Laplace")
                .with_log_x()
                .with_log_y()
                .with_legend(Legend::TopLeft)
                .with_series(Line::new(&eps, &mb).with_label("max |mean − ŵ| / σ_L"))
                .with_series(Line::new(&eps, &sb).with_label("max |sd / σ_L − 1|"));
            a.push(RefLine::horizontal(s.plan.max_mean_bias).with_label("mean threshold"));
            a.push(RefLine::horizontal(s.plan.max_sd_bias).with_label("sd threshold"));
            panels.push(a);
        }
        vec![("fig4_logistic.svg", fig), ("fig4_step_scan.svg", panels)]
    }

    fn report(&self, r: &mut Report) {
        let f = self;
        r.section("Fig. 4: logistic regression, d = 20, N = 1000 — error against data passes");
        r.paragraph(&format!(
            "Every method runs {} chain(s) from the same w₀ ~ N(0, I), {} epochs each (per-datum \
             gradient evaluations / N). The estimate at e epochs averages the window (e/2, e] of \
             every chain (the first half is burn-in), pooled over the chains: exact time averages \
             for the continuous-time samplers, iterate means for SGLD and mSGNHT. Error = RMS over \
             coordinates of (estimate − HMC mean)/HMC sd; the reference's own error is {} sd. \
             'max |z|' compares the final estimate with the reference in combined MCSEs (batch \
             means, {} batches per chain over the second half); above 4 the method is called \
             biased. lipSBPS uses the paper's bound N·L, L = √D max|x_id| = {}; the library's \
             bound uses max_i ‖x_i‖ = {} instead.",
            f.chains,
            fmt_sig(f.plan.budget_epochs, 3),
            fmt_sig(f.reference_floor(), 2),
            super::fig4_trace::BATCHES,
            fmt_sig(f.lip_constants.0, 3),
            fmt_sig(f.lip_constants.1, 3),
        ));
        r.table_of(
            &[
                "method",
                "final error (sd)",
                "max |z|",
                "steps",
                "proposals",
                "violation rate",
                "divergences",
                "final NLL/N (chain 1)",
            ],
            f.runs.iter(),
            |m| {
                let proposals = m.total(|t| t.proposals);
                vec![
                    m.label.clone(),
                    fmt_sig(m.final_error(), 3),
                    fmt_sig(f.max_z(m.method), 3),
                    m.total(|t| t.steps).to_string(),
                    if m.method.continuous() { proposals.to_string() } else { "–".into() },
                    if m.method.continuous() {
                        fmt_sig(m.total(|t| t.violations) as f64 / proposals.max(1) as f64, 2)
                    } else {
                        "–".into()
                    },
                    m.total(|t| t.divergences).to_string(),
                    fmt_sig(m.chains[0].nll.last().copied().unwrap_or(f64::NAN), 4),
                ]
            },
        );
        for s in &f.scans {
            let rows: Vec<Vec<String>> = s
                .points
                .iter()
                .map(|p| {
                    vec![
                        fmt_sig(p.eps, 2),
                        fmt_sig(p.h, 3),
                        fmt_sig(s.plan.epochs(p.eps), 3),
                        fmt_sig(p.mean_bias, 3),
                        fmt_sig(p.sd_bias, 3),
                        p.divergences.to_string(),
                        if p.acceptable { "yes".into() } else { "no".into() },
                    ]
                })
                .collect();
            r.paragraph(&format!(
                "Supp. E scan of {}: from the largest ε down, one run from the mode per step, {} \
                 relaxation times of the slowest direction long; acceptable when mean bias ≤ {} \
                 Laplace sd and sd bias ≤ {} (twice the HMC reference's own distance from the \
                 Laplace approximation, floors 0.2 and 20 %). Pick: {}.",
                s.method.label(),
                fmt_sig(s.plan.relaxations, 2),
                fmt_sig(s.plan.max_mean_bias, 2),
                fmt_sig(s.plan.max_sd_bias, 2),
                s.pick.map_or("none acceptable (the smallest step is used)".into(), |p| format!(
                    "ε = {}",
                    fmt_sig(p, 2)
                )),
            ));
            r.table(
                &[
                    "ε (paper)",
                    "h (ours)",
                    "epochs",
                    "mean bias",
                    "sd bias",
                    "divergences",
                    "acceptable",
                ],
                &rows,
            );
        }
        r.image("Fig. 4: error and NLL against epochs", "fig4_logistic.svg");
        r.image("Supp. E: the step-size scans", "fig4_step_scan.svg");
    }
}
