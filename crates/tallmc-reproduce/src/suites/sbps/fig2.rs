//! §4, Fig. 2 of Pakman et al. (2017): SBPS's thinning band on a 2-D logistic regression,
//! from one bounce to the next.
//!
//! **Problem.** The §7.1 data with d = 2, N = 1000 (`sbps_logistic(1000, 2, DATA_SEED)`, prior
//! N(0, 10² I)); SBPS with n = 100, k = 3, started at [`START`] = 0.
//!
//! **What is recorded.** The kernel is stepped by hand (no driver: the figure looks inside the
//! steps). The first interval between velocity changes after [`BURN_IN_BOUNCES`] bounces (0:
//! from the start, t = 0, to the first bounce — the paper's "starting from t = 0") with at least
//! [`MIN_REJECTED`] rejected proposals and no refreshment is kept (deterministic given the seed).
//! Far from the mode the rate rises steeply and the band tracks it; near the mode (try a few
//! bounces of burn-in) the minibatch noise, sd ≈ 30–40 here, dominates G(t).
//! For every step in it: the chord band γ the chain built ([`SbpsChain::band`]), shifted to the
//! time since the last bounce and drawn up to the step's end; the step's end — a rejected proposal
//! (its observation G_j), a horizon (an observation, no proposal) or the accepted bounce (G* is
//! minus the reset observation). The true G(t) = ⟨∇U(x(t)), v⟩ is evaluated on the full data
//! along the line. The run continues for [`AFTER_TIME`] time units after the interval; its
//! proposal rate is set against the constant bound N·L of lipSBPS (L = √d max|x_ij|, Supp. F),
//! the kind of bound the paper quotes as 10⁴–2·10⁴.

use rand::Rng;
use serde_json::{Value, json};
use tallmc_core::{EventKind, FullData, Parallelism, PdmpChain, PdmpKernel, rng::chain_rng};
use tallmc_models::LogisticRegression;
use tallmc_samplers::{
    Laplace, NewtonOptions, Sbps, SbpsChain, SbpsConfig, SbpsState, laplace_approximation,
};

use super::linalg::ellipse;
use super::problem::logistic_model;
use super::{Claim, Part, Problems, chain_seed};
use crate::figure::{Axes, Color, Figure, Legend, Line, Marker, PALETTE, RefLine, Scatter};
use crate::report::{Report, fmt_sig};
use crate::{Context, Error, Result};

/// Bounces before the recorded interval.
pub const BURN_IN_BOUNCES: usize = 0;
/// Where the run starts: w = 0, about 10 posterior sds from the mode, so that the rate
/// G(t) rises steeply along the first lines (the paper's figure starts "from t = 0").
pub const START: [f64; 2] = [0.0, 0.0];
/// Rejected proposals the recorded interval must have.
pub const MIN_REJECTED: usize = 3;
/// Trajectory time run after the recorded interval (the proposal rate is measured over the
/// whole run).
pub const AFTER_TIME: f64 = 200.0;
/// Steps after which the search gives up (then the last complete interval is shown).
const MAX_STEPS: usize = 200_000;

/// One piece of the band: γ on [start, end] (time since the last bounce), at its knots.
#[derive(Debug, Clone)]
pub struct BandPiece {
    /// Times of the knots (clipped to the step's end).
    pub t: Vec<f64>,
    /// γ at those times.
    pub gamma: Vec<f64>,
}

/// Fig. 2.
#[derive(Debug)]
pub struct Fig2 {
    /// Band pieces, one per step of the interval.
    pub band: Vec<BandPiece>,
    /// Rejected proposals (t, G_j).
    pub rejected: Vec<(f64, f64)>,
    /// Observations at the band's horizon (t, G_j).
    pub horizons: Vec<(f64, f64)>,
    /// The accepted proposal (t, G*) and γ there.
    pub accepted: (f64, f64, f64),
    /// The true rate G(t) on a grid over the interval (t, G).
    pub truth: Vec<(f64, f64)>,
    /// Position and velocity at the start of the interval, the bounce position, the velocity
    /// after it and the position at the next velocity change.
    pub path: [[f64; 2]; 5],
    /// Mode and Laplace covariance of the 2-D posterior.
    pub laplace: Laplace,
    /// Over the whole run: second-stage proposals, bounces, violations, trajectory time.
    pub run: (u64, u64, u64, f64),
    /// N·L, the constant bound of lipSBPS.
    pub constant_bound: f64,
}

/// Per-step record of the search.
struct Interval {
    band: Vec<BandPiece>,
    rejected: Vec<(f64, f64)>,
    horizons: Vec<(f64, f64)>,
    start: [f64; 4],
}

impl Interval {
    fn new(state: &SbpsState) -> Self {
        let (x, v) = (state.trajectory.position(), state.trajectory.velocity());
        Self {
            band: Vec::new(),
            rejected: Vec::new(),
            horizons: Vec::new(),
            start: [x[0], x[1], v[0], v[1]],
        }
    }
}

impl Fig2 {
    /// Runs SBPS on the 2-D problem until a suitable interval is recorded.
    pub fn compute(ctx: &Context<'_>, _problems: &Problems<'_>) -> Result<Self> {
        let model = logistic_model(1000, 2)?;
        let laplace = laplace_approximation(&model, &[0.0; 2], NewtonOptions::default())?;
        let kernel = Sbps::new(SbpsConfig::default())?;
        let mut rng = chain_rng(chain_seed(ctx.seed, 20), 0);
        let mut chain = kernel.build_chain(&model, &START, &mut rng)?;
        let (mut proposals, mut bounces, mut violations) = (0u64, 0u64, 0u64);
        let mut current = Interval::new(chain.state());
        for _ in 0..MAX_STEPS {
            let s0 = chain.state().observations.last().map_or(0.0, |o| o.0);
            let stats = chain.step(&model, &mut rng)?;
            proposals += stats.proposals;
            bounces += stats.bounces;
            violations += stats.violations;
            let state = chain.state();
            let seg = state.trajectory.last_segment();
            let s = s0 + seg.duration;
            if let Some(b) = chain.band() {
                current.band.push(clip_band(b.knots(), b.values(), s0, s));
            }
            let g_last = state.observations.last().map_or(f64::NAN, |o| o.1);
            match seg.end {
                EventKind::Rejected => current.rejected.push((s, g_last)),
                EventKind::Horizon => current.horizons.push((s, g_last)),
                EventKind::Bounce => {
                    let done = bounces as usize > BURN_IN_BOUNCES
                        && current.rejected.len() >= MIN_REJECTED;
                    if done {
                        let gamma = current
                            .band
                            .last()
                            .and_then(|p| p.gamma.last().copied())
                            .unwrap_or(f64::NAN);
                        return finish(
                            ctx,
                            &model,
                            &mut chain,
                            &mut rng,
                            current,
                            (s, -g_last, gamma),
                            laplace,
                            (proposals, bounces, violations),
                        );
                    }
                    current = Interval::new(state);
                }
                _ => current = Interval::new(state),
            }
        }
        Err(Error::Fixture {
            name: "sbps Fig. 2".into(),
            message: format!("no interval with {MIN_REJECTED} rejections in {MAX_STEPS} steps"),
        })
    }

    /// Mean proposal rate of the run (second-stage proposals per unit time).
    pub fn proposal_rate(&self) -> f64 {
        self.run.0 as f64 / self.run.3
    }
}

/// γ's knots shifted by `s0` and clipped at `end`.
fn clip_band(knots: &[f64], values: &[f64], s0: f64, end: f64) -> BandPiece {
    let (mut t, mut gamma) = (Vec::new(), Vec::new());
    for k in 0..knots.len() {
        let tk = s0 + knots[k];
        if tk <= end {
            t.push(tk);
            gamma.push(values[k]);
        } else {
            if k > 0 {
                let f = (end - s0 - knots[k - 1]) / (knots[k] - knots[k - 1]);
                t.push(end);
                gamma.push(values[k - 1] + f * (values[k] - values[k - 1]));
            }
            break;
        }
    }
    BandPiece { t, gamma }
}

#[allow(clippy::too_many_arguments)]
fn finish<R: Rng>(
    ctx: &Context<'_>, model: &LogisticRegression, chain: &mut SbpsChain, rng: &mut R,
    interval: Interval, accepted: (f64, f64, f64), laplace: Laplace, counts: (u64, u64, u64),
) -> Result<Fig2> {
    let _ = ctx;
    let [x0, y0, vx, vy] = interval.start;
    let tb = accepted.0;
    let bounce = [x0 + vx * tb, y0 + vy * tb];
    let state = chain.state();
    let after = [state.trajectory.velocity()[0], state.trajectory.velocity()[1]];
    // Follow the new velocity to the next velocity change, then keep running for
    // [`AFTER_TIME`] to measure the proposal rate beyond the transient.
    let mut next = None;
    let (mut proposals, mut bounces, mut violations) = counts;
    let t_end = state.trajectory.time() + AFTER_TIME;
    while chain.trajectory().time() < t_end {
        let stats = chain.step(model, rng)?;
        let state = chain.state();
        proposals += stats.proposals;
        bounces += stats.bounces;
        violations += stats.violations;
        if next.is_none() && state.trajectory.last_segment().end.changes_velocity() {
            next = Some([state.trajectory.position()[0], state.trajectory.position()[1]]);
        }
    }
    let next = next.unwrap_or(bounce);
    // The true rate along the recorded line.
    let mut full = FullData::for_model(model, Parallelism::Sequential);
    let mut g = [0.0; 2];
    let truth = (0..=200)
        .map(|k| {
            let t = tb * k as f64 / 200.0;
            full.log_posterior_grad(model, &[x0 + vx * t, y0 + vy * t], &mut g);
            (t, -(g[0] * vx + g[1] * vy))
        })
        .collect();
    let l = model.max_abs_entry() * 2f64.sqrt();
    let time = chain.trajectory().time();
    Ok(Fig2 {
        band: interval.band,
        rejected: interval.rejected,
        horizons: interval.horizons,
        accepted,
        truth,
        path: [[x0, y0], [vx, vy], bounce, after, next],
        laplace,
        run: (proposals, bounces, violations, time),
        constant_bound: 1000.0 * l,
    })
}

impl Part for Fig2 {
    fn key(&self) -> &'static str {
        "fig2_band"
    }

    fn summary(&self) -> Value {
        let (p, b, v, t) = self.run;
        json!({
            "problem": {"n": 1000, "d": 2, "batch": 100, "k": 3.0},
            "interval": {"steps": self.band.len(), "rejected": self.rejected.len(),
                         "horizons": self.horizons.len(), "bounce_time": self.accepted.0,
                         "accepted_g": self.accepted.1, "gamma_at_bounce": self.accepted.2},
            "run": {"proposals": p, "bounces": b, "violations": v, "time": t,
                    "proposals_per_time": self.proposal_rate()},
            "constant_bound_nl": self.constant_bound,
        })
    }

    fn claims(&self) -> Vec<Claim> {
        let rate = self.proposal_rate();
        vec![Claim::new(
            "band_far_below_constant_bounds",
            "Fig. 2: the band proposes bounce times far less often than the constant bounds of local BPS / ZZ-SS (10⁴–2·10⁴ for this data)",
            format!(
                "SBPS proposals per unit time {} (whole run, {} proposals, {} bounces); lipSBPS bound N·L = {}",
                fmt_sig(rate, 3),
                self.run.0,
                self.run.1,
                fmt_sig(self.constant_bound, 3)
            ),
            "proposal rate below N·L / 10 (an order of magnitude)",
            rate < 0.1 * self.constant_bound,
        )]
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        let mut left = Axes::new()
            .with_title("Thinning band γ(t) from one bounce to the next")
            .with_x_label("time since the last bounce")
            .with_y_label("rate")
            .with_legend(Legend::TopLeft);
        let (tt, gt): (Vec<f64>, Vec<f64>) = self.truth.iter().copied().unzip();
        left.push(
            Line::new(&tt, &gt)
                .with_color(PALETTE[2])
                .with_dashes()
                .with_label("true G(t) (full data)"),
        );
        for (i, p) in self.band.iter().enumerate() {
            let mut l = Line::new(&p.t, &p.gamma).with_color(PALETTE[0]);
            if i == 0 {
                l = l.with_label("proposal intensity γ(t)");
            }
            left.push(l);
        }
        let (rt, rg): (Vec<f64>, Vec<f64>) = self.rejected.iter().copied().unzip();
        left.push(
            Scatter::new(&rt, &rg)
                .with_color(Color::rgb(0x00, 0x9e, 0x73))
                .with_label("rejected proposals (G_j)"),
        );
        if !self.horizons.is_empty() {
            let (ht, hg): (Vec<f64>, Vec<f64>) = self.horizons.iter().copied().unzip();
            left.push(
                Scatter::new(&ht, &hg)
                    .with_marker(Marker::Square)
                    .with_color(PALETTE[4])
                    .with_label("observations at the band horizon"),
            );
        }
        left.push(
            Scatter::new(&[self.accepted.0], &[self.accepted.1])
                .with_color(Color::rgb(0xd5, 0x5e, 0x00))
                .with_size(6.0)
                .with_label("accepted proposal (G*)"),
        );
        left.push(RefLine::horizontal(0.0));
        let mut right = Axes::new()
            .with_title("SBPS trajectory on the Laplace contours")
            .with_x_label("w₁")
            .with_y_label("w₂")
            .with_legend(Legend::Hidden);
        let m = [self.laplace.mode[0], self.laplace.mode[1]];
        let c = &self.laplace.covariance;
        for r in [1.0, 3.0, 6.0, 10.0, 15.0] {
            let (x, y) = ellipse(m, [[c[0], c[1]], [c[2], c[3]]], r, 120);
            right.push(Line::new(&x, &y).with_color(Color::rgb(0x99, 0x99, 0x99)).with_width(0.8));
        }
        let [p0, v0, pb, vb, pn] = self.path;
        right.push(
            Line::new(&[p0[0], pb[0], pn[0]], &[p0[1], pb[1], pn[1]])
                .with_color(PALETTE[0])
                .with_width(1.5),
        );
        let scale = 0.5 * (c[0].sqrt() + c[3].sqrt());
        for (p, v) in [(p0, v0), (pb, vb)] {
            right.push(
                Line::new(&[p[0], p[0] + scale * v[0]], &[p[1], p[1] + scale * v[1]])
                    .with_color(Color::rgb(0xd5, 0x5e, 0x00))
                    .with_width(2.0),
            );
            right.push(
                Scatter::new(&[p[0] + scale * v[0]], &[p[1] + scale * v[1]])
                    .with_marker(Marker::Triangle)
                    .with_color(Color::rgb(0xd5, 0x5e, 0x00)),
            );
        }
        right.push(Scatter::new(&[p0[0], pb[0]], &[p0[1], pb[1]]).with_color(PALETTE[0]));
        let fig = Figure::new()
            .with_title("Fig. 2: SBPS proposal intensity, logistic regression d = 2, N = 1000, n = 100, k = 3")
            .with_columns(2)
            .with_panel(left)
            .with_panel(right);
        vec![("fig2_band.svg", fig)]
    }

    fn report(&self, r: &mut Report) {
        r.section("Fig. 2: the thinning band");
        let (p, b, v, t) = self.run;
        r.paragraph(&format!(
            "The §7.1 data with d = 2, N = 1000, prior N(0, 10² I); SBPS n = 100, k = 3, from \
             w = 0 (about 10 posterior sds from the mode). Shown: the first interval between velocity changes after {BURN_IN_BOUNCES} bounces (0: \
             from the start to the first bounce) with at least {MIN_REJECTED} rejected proposals ({} steps, {} rejected proposals, {} horizon \
             observations, bounce at t = {}). Each step's chord band γ (the kernel's, read with \
             `Sbps::band`) is drawn from the step's start to its end; G_j are the minibatch \
             observations, G* the accepted one, and the dashed curve the full-data rate G(t). Over \
             the whole run ({} time units): {p} proposals, {b} bounces ({} proposals per bounce), \
             {v} bound violations ({} of proposals). The constant bound of lipSBPS, N·L with \
             L = √d max|x_ij|, is {} here.",
            self.band.len(),
            self.rejected.len(),
            self.horizons.len(),
            fmt_sig(self.accepted.0, 3),
            fmt_sig(t, 3),
            fmt_sig(p as f64 / b.max(1) as f64, 3),
            fmt_sig(v as f64 / p.max(1) as f64, 2),
            fmt_sig(self.constant_bound, 3)
        ));
        r.image("Fig. 2", "fig2_band.svg");
    }
}
