//! Suite `sbps`: the experiments of Pakman, Gilboa, Carlson & Paninski (2017), *Stochastic
//! Bouncy Particle Sampler*, ICML — BPS with noisy gradients, SBPS ([`Sbps`](tallmc_samplers::Sbps))
//! and pSBPS, against SGLD and exact references.
//!
//! **Parts** (one module each; every part is a result type implementing [`Part`]):
//!
//! * [`fig1`] — **§3.1, Fig. 1**: BPS on a 2-D correlated Gaussian with exact gradients against
//!   BPS with gradients perturbed by N(0, 5²) noise (Theorem 1): the marginal is unchanged,
//!   travel times are shorter, mixing per unit time is slower.
//! * [`fig2`] — **§4, Fig. 2**: SBPS's thinning band on a 2-D logistic regression, from one
//!   bounce to the next.
//! * [`fig3`] — **§5, Fig. 3**: SBPS against pSBPS on the §7.1 d = 20 logistic regression, along
//!   the direction of greatest Laplace covariance.
//! * [`tradeoff`] — **§4.1 and Supp. F**: posterior error and bound-violation rate against the
//!   band multiple k and the minibatch size n on the d = 20 problem, against a long full-data
//!   HMC reference.
//! * [`fig4`] — **§7.1, Fig. 4**: error of the running posterior-mean estimate against data
//!   passes on the d = 20, N = 1000 logistic regression, for SBPS, pSBPS, SGLD (step size
//!   scanned as in Supp. E, [`sg_scan`], and the paper's small step), mSGNHT, lipSBPS and ZZ-SS,
//!   all from the same random start.
//! * [`fig5`] — **§7.2, Fig. 5**: continuous (quadrature along the trajectory) against discrete
//!   (grid draws) estimates of E[sin((w₁ − ŵ₁)/r)] as r/b varies.
//! * [`fig6`] — **§7.3, Fig. 6**: the d = 192 softmax network on 7 × 7 four-digit images:
//!   SBPS against SGLD at two step sizes and an exact reference, along the reference's
//!   directions of largest, median and smallest variance.
//! * [`zzcv_scaling`] — **beyond the paper**: Zig-Zag with control variates' per-datum
//!   evaluations per effective sample against n on the higgs-like logistic regression (d = 29),
//!   beside full-data HMC's.
//!
//! **Adding a part.** Write a module with a result type, an inherent
//! `compute(ctx: &Context, problems: &Problems) -> Result<Self>` and an `impl Part` (summary,
//! claims, figures, report); then add a field to [`SbpsSuite`], one line to [`compute`] and one
//! entry to [`SbpsSuite::parts`]. Shared problems (the §7.1 posterior with its Laplace
//! approximation and HMC reference) are built once, lazily, by [`Problems`].
//!
//! **Claims.** Each part turns its measurements into [`Claim`]s — the paper's statement, the
//! measured numbers, the criterion and whether it holds — computed once: `report.md`'s verdict
//! column and the tests (which assert `holds`) read the same values, so they cannot disagree.
//!
//! **Seeds.** Every data set has the fixed seed [`DATA_SEED`] (each generator has its own tag,
//! so their streams differ); `--seed` changes the chains only. Run r of the suite uses the
//! master seed [`chain_seed`]`(seed, r)`.

pub mod fig1;
pub mod fig2;
pub mod fig3;
pub mod fig4;
pub mod fig4_trace;
pub mod fig5;
pub mod fig6;
pub mod linalg;
pub mod noisy_bps;
pub mod paper_bound;
pub mod pdmp;
pub mod problem;
pub mod sg_scan;
pub mod tradeoff;
pub mod zzcv_scaling;

use serde_json::{Map, Value, json};

use crate::report::Report;
use crate::{Context, Error, Mode, Result};
pub use problem::{Logistic, Problems};

/// Seed of every data set of the suite (fixed: the data are part of the problem; `--seed`
/// changes the chains only).
pub const DATA_SEED: u64 = 1;

/// The master seed of run `tag` of the suite: `seed · 100 + tag` (tags are below 100, so the
/// runs of different suite seeds never share a stream).
pub fn chain_seed(seed: u64, tag: u64) -> u64 {
    seed.wrapping_mul(100).wrapping_add(tag)
}

/// A claim of the paper beside what was measured, with the criterion that decides it.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// Short stable name (tests refer to claims by it).
    pub id: &'static str,
    /// What the paper says (with its section or figure).
    pub paper: String,
    /// The measured numbers.
    pub measured: String,
    /// The rule that decides the verdict (thresholds from MCSEs where there is noise).
    pub criterion: String,
    /// Whether the measurement satisfies the criterion.
    pub holds: bool,
}

impl Claim {
    /// A claim.
    pub fn new(
        id: &'static str,
        paper: impl Into<String>,
        measured: impl Into<String>,
        criterion: impl Into<String>,
        holds: bool,
    ) -> Self {
        Self {
            id,
            paper: paper.into(),
            measured: measured.into(),
            criterion: criterion.into(),
            holds,
        }
    }

    /// The verdict column: "holds" or "does not hold", then the criterion.
    pub fn verdict(&self) -> String {
        let v = if self.holds { "holds" } else { "**does not hold**" };
        format!("{v} ({})", self.criterion)
    }
}

/// What every part of the suite provides once computed.
pub trait Part {
    /// Key of the part in the JSON summary (e.g. `fig1_noisy_gradients`).
    fn key(&self) -> &'static str;
    /// The JSON summary of the part (numbers only; the quick one is part of an insta snapshot).
    fn summary(&self) -> Value;
    /// The paper's claims beside the measurements, with verdicts.
    fn claims(&self) -> Vec<Claim>;
    /// Writes the part's SVG figures into `ctx.out_dir`.
    fn figures(&self, ctx: &Context<'_>) -> Result<()>;
    /// Appends the part's section to the report.
    fn report(&self, r: &mut Report);
}

/// Everything the suite measured.
#[derive(Debug)]
pub struct SbpsSuite {
    /// Mode.
    pub mode: Mode,
    /// Seed of the chains.
    pub seed: u64,
    /// Fig. 1: exact against noisy gradients.
    pub fig1: fig1::Fig1,
    /// Fig. 2: the thinning band.
    pub fig2: fig2::Fig2,
    /// Fig. 3: SBPS against pSBPS.
    pub fig3: fig3::Fig3,
    /// The k / n trade-off.
    pub tradeoff: tradeoff::Tradeoff,
    /// Fig. 4: error against data passes.
    pub fig4: fig4::Fig4,
    /// Fig. 5: continuous against discrete estimates.
    pub fig5: fig5::Fig5,
    /// Fig. 6: the d = 192 network.
    pub fig6: fig6::Fig6,
    /// ZZ-CV's cost per effective sample against n (beyond the paper).
    pub zzcv_scaling: zzcv_scaling::ZzcvScaling,
    /// The shared §7.1 posterior's reference, summarized.
    pub reference: Value,
}

impl SbpsSuite {
    /// The parts, in report order.
    pub fn parts(&self) -> Vec<&dyn Part> {
        vec![
            &self.fig1,
            &self.fig2,
            &self.fig3,
            &self.tradeoff,
            &self.fig4,
            &self.fig5,
            &self.fig6,
            &self.zzcv_scaling,
        ]
    }

    /// The JSON summary (the quick one is an insta snapshot after rounding).
    pub fn summary(&self) -> Value {
        let mut parts = Map::new();
        for p in self.parts() {
            parts.insert(p.key().into(), p.summary());
        }
        json!({
            "suite": "sbps",
            "mode": self.mode,
            "seed": self.seed,
            "data_seed": DATA_SEED,
            "logistic_d20_reference": self.reference,
            "parts": parts,
        })
    }

    /// Every claim with the key of its part.
    pub fn claims(&self) -> Vec<(&'static str, Claim)> {
        self.parts()
            .into_iter()
            .flat_map(|p| p.claims().into_iter().map(move |c| (p.key(), c)))
            .collect()
    }
}

/// Runs the suite: computes, writes `summary.json`, `report.md` and the figures when the context
/// asks for files, and returns the summary.
pub fn run(ctx: &Context<'_>) -> Result<Value> {
    let suite = compute(ctx)?;
    let summary = suite.summary();
    if ctx.write_files {
        let path = ctx.out_dir.join("summary.json");
        let text = serde_json::to_string_pretty(&summary).unwrap_or_default() + "\n";
        std::fs::write(&path, text).map_err(|source| Error::Write { path, source })?;
        for p in suite.parts() {
            p.figures(ctx)?;
        }
        report(&suite).save(&ctx.out_dir.join("report.md"))?;
    }
    Ok(summary)
}

/// Runs every part (each reports its wall time).
pub fn compute(ctx: &Context<'_>) -> Result<SbpsSuite> {
    let problems = Problems::new(ctx);
    let timed = |what: &str, clock: std::time::Instant| {
        ctx.reporter.note(&format!("sbps: {what} took {:.1} s", clock.elapsed().as_secs_f64()));
    };
    let clock = std::time::Instant::now();
    let fig1 = fig1::Fig1::compute(ctx, &problems)?;
    timed("Fig. 1 noisy gradients", clock);
    let clock = std::time::Instant::now();
    let fig2 = fig2::Fig2::compute(ctx, &problems)?;
    timed("Fig. 2 thinning band", clock);
    let clock = std::time::Instant::now();
    let reference = problems.logistic()?.reference_summary();
    timed("d = 20 posterior and HMC reference", clock);
    let clock = std::time::Instant::now();
    let fig3 = fig3::Fig3::compute(ctx, &problems)?;
    timed("Fig. 3 SBPS vs pSBPS", clock);
    let clock = std::time::Instant::now();
    let tradeoff = tradeoff::Tradeoff::compute(ctx, &problems)?;
    timed("k / n trade-off", clock);
    let clock = std::time::Instant::now();
    let fig4 = fig4::Fig4::compute(ctx, &problems)?;
    timed("Fig. 4 error against data passes", clock);
    let clock = std::time::Instant::now();
    let fig5 = fig5::Fig5::compute(ctx, &problems)?;
    timed("Fig. 5 continuous vs discrete", clock);
    let clock = std::time::Instant::now();
    let fig6 = fig6::Fig6::compute(ctx, &problems)?;
    timed("Fig. 6 neural network", clock);
    let clock = std::time::Instant::now();
    let zzcv_scaling = zzcv_scaling::ZzcvScaling::compute(ctx, &problems)?;
    timed("ZZ-CV cost per effective sample against n", clock);
    Ok(SbpsSuite {
        mode: ctx.mode,
        seed: ctx.seed,
        fig1,
        fig2,
        fig3,
        tradeoff,
        fig4,
        fig5,
        fig6,
        zzcv_scaling,
        reference,
    })
}

fn report(s: &SbpsSuite) -> Report {
    let mut r = Report::new("Stochastic Bouncy Particle Sampler (Pakman et al. 2017)");
    r.paragraph(&format!(
        "Mode `{}`, seed {} (data seed {DATA_SEED}). SBPS: BPS driven by minibatch gradients \
         (a fresh minibatch of n at every proposed bounce), proposals from the upper band of a \
         local linear regression of the noisy rate with multiple k, bound violations counted; \
         velocities uniform on the unit sphere (so trajectory time is distance), refresh rate \
         0.05. Posterior expectations are exact time averages along the trajectory; draws exist \
         only on a time grid. Cost is counted in per-datum evaluations; an epoch is N of them.",
        s.mode, s.seed
    ));
    r.section("Claims and measurements");
    let rows: Vec<Vec<String>> = s
        .claims()
        .into_iter()
        .map(|(key, c)| {
            let verdict = c.verdict();
            vec![key.to_string(), c.paper, c.measured, verdict]
        })
        .collect();
    r.table(&["part", "paper (Pakman et al. 2017)", "measured here", "verdict"], &rows);
    for p in s.parts() {
        p.report(&mut r);
    }
    r
}
