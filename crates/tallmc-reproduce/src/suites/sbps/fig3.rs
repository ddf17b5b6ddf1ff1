//! §5, Fig. 3 of Pakman et al. (2017): SBPS against pSBPS on the §7.1 posterior (d = 20,
//! N = 1000, n = 100, k = 3), along the direction of greatest Laplace covariance.
//!
//! **Runs.** Both from w = 0 (far from the mode ŵ, as in the paper's figure, which shows the
//! approach), 2 chains each, warmup of [`WARMUP_EPOCHS`] epochs per chain (pSBPS learns its
//! diagonal preconditioner A there, β = 0.99, ε = 10⁻⁴, and freezes it — see
//! `docs/methods/sbps.md`), then 5,000 (quick) / 50,000 (full) epochs per chain, grid draws every
//! [`GRID_STEP`] time units.
//!
//! **Measured.** Along u₁, the unit eigenvector of the largest eigenvalue of the Laplace
//! covariance: the time averages of z = ⟨x − ŵ, u₁⟩ and z² (so Var z and the batch-means MCSE of
//! E z give an ESS), ESS per epoch; the ACF of z from the grid draws against the lag in epochs
//! (each method's own epochs per unit time); the trace of z over the first epochs of sampling.

use serde_json::{Value, json};
use tallmc_diagnostics::continuous::QuadratureConfig;
use tallmc_models::synthetic::SBPS_N;
use tallmc_samplers::continuous::{Budget, ContinuousRunConfig};
use tallmc_samplers::{Sbps, SbpsConfig, SbpsTuning};

use super::linalg::{ellipse, project, project_covariance};
use super::pdmp::{PdmpRun, RunOptions, TestFunction, acf, ess_rate_ratio, run_pdmp};
use super::{Claim, Part, Problems, chain_seed};
use crate::figure::{Axes, Color, Figure, Legend, Line, RefLine};
use crate::report::{Report, fmt_sig};
use crate::{Context, Error, Result};

/// Warmup per chain, epochs.
pub const WARMUP_EPOCHS: u64 = 500;
/// Spacing of the grid draws, trajectory time.
pub const GRID_STEP: f64 = 0.25;
/// Lags of the ACF, in grid steps.
pub const ACF_LAGS: usize = 200;
/// Epochs of the trace panel.
pub const TRACE_EPOCHS: f64 = 1_000.0;

/// One method's measurements.
#[derive(Debug)]
pub struct Method {
    /// "SBPS" or "pSBPS".
    pub name: &'static str,
    /// E z and its MCSE.
    pub mean: (f64, f64),
    /// Var z.
    pub variance: f64,
    /// ESS of E z per epoch.
    pub ess_per_epoch: f64,
    /// Batches behind the MCSE.
    pub batches: usize,
    /// Epochs per unit time.
    pub epochs_per_time: f64,
    /// Violation rate.
    pub violation_rate: f64,
    /// ACF of z (chain 1's grid draws).
    pub acf: Vec<f64>,
    /// Trace of z (chain 1's grid draws over the first [`TRACE_EPOCHS`]).
    pub trace: Vec<f64>,
    /// The projections of chain 1's first grid draws on (u₁, u_d).
    pub plane: (Vec<f64>, Vec<f64>),
    /// (min, max) of the learned A (1 for SBPS), chain 1.
    pub scale_range: (f64, f64),
}

impl Method {
    fn measure(
        name: &'static str, run: &PdmpRun<SbpsTuning>, mode: &[f64], u: &[f64], w: &[f64],
    ) -> Self {
        let z = run.function("z").map_or((f64::NAN, f64::NAN, 0), |e| (e.mean, e.mcse, e.batches));
        let z2 = run.function("z^2").map_or(f64::NAN, |e| e.mean);
        let variance = z2 - z.0 * z.0;
        let epochs = run.epochs(SBPS_N);
        let epochs_per_time = run.epochs_per_time(SBPS_N);
        let proj = run.grid_projection(0, mode, u);
        let shown = ((TRACE_EPOCHS / epochs_per_time) / GRID_STEP) as usize;
        let plane = match run.chains[0].sink.draws() {
            Some(d) => (0..d.num_draws().min(2_000))
                .map(|i| (project(d.draw(i), mode, u), project(d.draw(i), mode, w)))
                .unzip(),
            None => (Vec::new(), Vec::new()),
        };
        let scale_range = scale_range(run.chains[0].report.tuning.preconditioner.as_deref());
        Self {
            name,
            mean: (z.0, z.1),
            variance,
            ess_per_epoch: variance / (z.1 * z.1) / epochs,
            batches: z.2,
            epochs_per_time,
            violation_rate: run.violation_rate(),
            acf: acf(&proj, ACF_LAGS),
            trace: proj[..shown.min(proj.len())].to_vec(),
            plane,
            scale_range,
        }
    }

    fn summary(&self) -> Value {
        json!({
            "mean_z": self.mean.0, "mcse_z": self.mean.1, "var_z": self.variance,
            "ess_per_epoch_z": self.ess_per_epoch, "epochs_per_time": self.epochs_per_time,
            "violation_rate": self.violation_rate,
            "preconditioner_range": [self.scale_range.0, self.scale_range.1],
        })
    }
}

/// The range of the preconditioner A, as the CSV comments print it (4 decimals); (1, 1) when
/// absent (SBPS).
fn scale_range(scale: Option<&[f64]>) -> (f64, f64) {
    let Some(scale) = scale else { return (1.0, 1.0) };
    let rounded = scale.iter().filter_map(|a| format!("{a:.4}").parse::<f64>().ok());
    rounded.fold((f64::INFINITY, 0.0), |(a, b), x| (a.min(x), b.max(x)))
}

/// Fig. 3.
#[derive(Debug)]
pub struct Fig3 {
    /// SBPS.
    pub sbps: Method,
    /// pSBPS.
    pub psbps: Method,
    /// Laplace variance along u₁ and along u_d, and their covariance matrix in that plane.
    pub plane_cov: [[f64; 2]; 2],
    /// Sampling epochs per chain.
    pub epochs: u64,
    /// Largest over smallest marginal Laplace sd (the anisotropy a diagonal A can remove).
    pub sd_span: f64,
}

impl Fig3 {
    /// Runs SBPS and pSBPS.
    pub fn compute(ctx: &Context<'_>, problems: &Problems<'_>) -> Result<Self> {
        let p = problems.logistic()?;
        let d = p.dim();
        let mode = p.laplace.mode.clone();
        let u = p.eigen.vectors[0].clone();
        let w = p.eigen.vectors[d - 1].clone();
        let epochs = ctx.mode.pick(5_000, 50_000);
        let evals = |e: u64| 2 * e * SBPS_N as u64;
        let (m1, u1, m2, u2) = (mode.clone(), u.clone(), mode.clone(), u.clone());
        let options = RunOptions {
            grid_step: Some(GRID_STEP),
            skeleton: false,
            functions: vec![
                TestFunction::new(
                    "z",
                    move |x: &[f64]| project(x, &m1, &u1),
                    QuadratureConfig::default(),
                ),
                TestFunction::new(
                    "z^2",
                    move |x: &[f64]| project(x, &m2, &u2).powi(2),
                    QuadratureConfig::default(),
                ),
            ],
        };
        let start = [vec![0.0; d]];
        let mut methods = Vec::new();
        for (i, (name, cfg)) in
            [("SBPS", SbpsConfig::default()), ("pSBPS", SbpsConfig::default().preconditioned())]
                .into_iter()
                .enumerate()
        {
            let config = ContinuousRunConfig {
                warmup: Budget::Evaluations(evals(WARMUP_EPOCHS)),
                sampling: Budget::Evaluations(evals(epochs)),
                num_chains: 2,
                seed: chain_seed(ctx.seed, 40 + i as u64),
                ..ContinuousRunConfig::default()
            };
            let run = run_pdmp(
                &p.model,
                config,
                &start,
                &Sbps::new(cfg)?,
                &options,
                ctx.reporter,
                &format!("sbps Fig. 3: {name}"),
            )?;
            methods.push(Method::measure(name, &run, &mode, &u, &w));
        }
        let psbps = methods
            .pop()
            .ok_or_else(|| Error::Fixture { name: "Fig. 3".into(), message: "no run".into() })?;
        let sbps = methods
            .pop()
            .ok_or_else(|| Error::Fixture { name: "Fig. 3".into(), message: "no run".into() })?;
        let sds = p.laplace.sds();
        let sd_span = sds.iter().copied().fold(0.0, f64::max)
            / sds.iter().copied().fold(f64::INFINITY, f64::min);
        Ok(Self {
            sbps,
            psbps,
            plane_cov: project_covariance(&p.laplace.covariance, &u, &w),
            epochs,
            sd_span,
        })
    }

    /// ESS per epoch along u₁, pSBPS / SBPS, and the standard error of its logarithm.
    pub fn ess_ratio(&self) -> (f64, f64) {
        ess_rate_ratio(
            (self.psbps.ess_per_epoch, self.psbps.batches),
            (self.sbps.ess_per_epoch, self.sbps.batches),
        )
    }
}

impl Part for Fig3 {
    fn key(&self) -> &'static str {
        "fig3_psbps"
    }

    fn summary(&self) -> Value {
        let (r, se) = self.ess_ratio();
        json!({
            "laplace_var_top_direction": self.plane_cov[0][0], "laplace_sd_span": self.sd_span,
            "epochs_per_chain": self.epochs, "warmup_epochs": WARMUP_EPOCHS, "chains": 2,
            "sbps": self.sbps.summary(), "psbps": self.psbps.summary(),
            "ess_per_epoch_ratio_psbps_over_sbps": r, "ess_ratio_log_se": se,
        })
    }

    fn claims(&self) -> Vec<Claim> {
        let (r, se) = self.ess_ratio();
        vec![Claim::new(
            "psbps_mixes_faster_along_top_direction",
            "§5, Fig. 3: pSBPS mixes faster than SBPS in the direction of greatest covariance (when the posterior is anisotropic and roughly axis-aligned)",
            format!(
                "ESS per epoch of ⟨x − ŵ, u₁⟩: SBPS {}, pSBPS {} (ratio {}); learned A in [{}, {}]; marginal Laplace sds span a factor {}",
                fmt_sig(self.sbps.ess_per_epoch, 3),
                fmt_sig(self.psbps.ess_per_epoch, 3),
                fmt_sig(r, 3),
                fmt_sig(self.psbps.scale_range.0, 3),
                fmt_sig(self.psbps.scale_range.1, 3),
                fmt_sig(self.sd_span, 2)
            ),
            format!("log ratio > 4 se of the log ratio (se {})", fmt_sig(se, 2)),
            r.ln() > 4.0 * se,
        )]
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        let mut contours = Axes::new()
            .with_title("Laplace contours in the plane (u₁, u_d) with grid draws")
            .with_x_label("⟨x − ŵ, u₁⟩ (largest variance)")
            .with_y_label("⟨x − ŵ, u_d⟩ (smallest variance)")
            .with_legend(Legend::TopRight);
        for r in [1.0, 2.0, 3.0] {
            let (x, y) = ellipse([0.0, 0.0], self.plane_cov, r, 120);
            contours
                .push(Line::new(&x, &y).with_color(Color::rgb(0x99, 0x99, 0x99)).with_width(0.8));
        }
        let mut acf = Axes::new()
            .with_title("ACF of ⟨x − ŵ, u₁⟩")
            .with_x_label("lag (epochs)")
            .with_y_label("autocorrelation")
            .with_series(RefLine::horizontal(0.0));
        let mut trace = Axes::new()
            .with_title("Trajectory along u₁ (after warmup)")
            .with_x_label("epochs")
            .with_y_label("⟨x − ŵ, u₁⟩")
            .with_series(RefLine::horizontal(0.0));
        for (m, color) in
            [(&self.sbps, crate::figure::PALETTE[0]), (&self.psbps, crate::figure::PALETTE[1])]
        {
            let per = GRID_STEP * m.epochs_per_time;
            contours.push(
                crate::figure::Scatter::new(&m.plane.0, &m.plane.1)
                    .with_size(1.5)
                    .with_color(color)
                    .with_label(m.name),
            );
            let lags: Vec<f64> = (0..m.acf.len()).map(|k| k as f64 * per).collect();
            acf.push(Line::new(&lags, &m.acf).with_color(color).with_label(m.name));
            let t: Vec<f64> = (1..=m.trace.len()).map(|k| k as f64 * per).collect();
            trace.push(Line::new(&t, &m.trace).with_color(color).with_label(m.name));
        }
        let fig = Figure::new()
            .with_title(
                "Fig. 3: SBPS vs pSBPS, logistic regression d = 20, N = 1000, n = 100, k = 3",
            )
            .with_columns(3)
            .with_panel(contours)
            .with_panel(acf)
            .with_panel(trace);
        vec![("fig3_psbps.svg", fig)]
    }

    fn report(&self, r: &mut Report) {
        r.section("Fig. 3: SBPS against pSBPS");
        r.paragraph(&format!(
            "The §7.1 posterior (d = 20, N = 1000), n = 100, k = 3, from w = 0; 2 chains per method, \
             warmup {WARMUP_EPOCHS} epochs (pSBPS adapts A there, then freezes it), then {} epochs \
             per chain. u₁ is the leading eigenvector of the Laplace covariance (variance {} along \
             it). ESS per epoch of the time average of ⟨x − ŵ, u₁⟩ from the batch-means MCSE.",
            self.epochs,
            fmt_sig(self.plane_cov[0][0], 3)
        ));
        let row = |m: &Method| {
            vec![
                m.name.to_string(),
                format!("{} ± {}", fmt_sig(m.mean.0, 2), fmt_sig(m.mean.1, 2)),
                fmt_sig(m.variance, 3),
                fmt_sig(m.ess_per_epoch, 3),
                fmt_sig(m.epochs_per_time, 3),
                fmt_sig(m.violation_rate, 2),
                format!("{}–{}", fmt_sig(m.scale_range.0, 3), fmt_sig(m.scale_range.1, 3)),
            ]
        };
        r.table(
            &[
                "method",
                "E⟨x − ŵ, u₁⟩",
                "Var",
                "ESS / epoch",
                "epochs / time",
                "violation rate",
                "A",
            ],
            &[row(&self.sbps), row(&self.psbps)],
        );
        r.image("Fig. 3", "fig3_psbps.svg");
    }
}
