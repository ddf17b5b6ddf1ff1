//! A small exact piecewise-deterministic kernel for the continuous-time driver's tests: the
//! Zig-Zag sampler for a Gaussian N(μ, diag σ²), which needs no data.
//!
//! Coordinate j flips its velocity vⱼ ∈ {−1, +1} at rate λⱼ = (vⱼ (xⱼ − μⱼ)/σⱼ²)⁺ =
//! ∂ⱼU⁺ along v. Along the segment x(s) = x + v s, with a = vⱼ(xⱼ − μⱼ) (vⱼ² = 1),
//! λⱼ(s) = (a + s)⁺/σⱼ², so the first arrival of coordinate j solves
//!
//! ```text
//! ∫_0^τ (a + s)⁺ ds = σⱼ² E,  E ~ Exp(1)   ⇒   τ = −a + √((a⁺)² + 2σⱼ² E)
//! ```
//!
//! (if a ≥ 0: aτ + τ²/2 = σ²E; if a < 0 the rate is 0 until s = −a, then (τ + a)²/2 = σ²E;
//! both are the formula). The next event is the smallest τⱼ, redrawn from scratch every step
//! (valid: the process is Markov, and competing Poisson clocks restart memorylessly from the
//! current state). An optional horizon H ends a step at H without a flip (valid for the same
//! reason), to produce `Horizon` segments. Each step "costs" d gradient evaluations and makes
//! one proposal, so evaluation budgets can be tested.

#![allow(dead_code)]

use rand::{Rng, RngExt};
use rand_distr::Exp1;
use tallmc_core::{
    Error, EvalCounts, EventKind, PdmpChain, PdmpKernel, Result, SegmentStats, Trajectory,
};

/// What goes wrong, on purpose, for the error tests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fault {
    /// Nothing.
    None,
    /// `step` returns an error at step n (0-based, warmup included).
    ErrAt(u64),
    /// Every step from step n on has duration 0.
    StallFrom(u64),
    /// Step n has an infinite duration.
    InfiniteAt(u64),
}

/// Zig-Zag for N(mean, diag sd²): the settings.
#[derive(Debug, Clone)]
pub struct ZigZag {
    pub mean: Vec<f64>,
    pub sd: Vec<f64>,
    pub horizon: f64,
    pub fault: Fault,
}

/// A running test Zig-Zag chain, counting the driver's calls.
#[derive(Debug, Clone)]
pub struct ZigZagChain {
    pub settings: ZigZag,
    pub trajectory: Trajectory,
    pub steps: u64,
    pub adapts: u64,
    pub warmup_begun: bool,
    pub warmup_ended: bool,
}

impl ZigZag {
    /// Standard normal in `d` dimensions.
    pub fn standard(d: usize) -> Self {
        Self::new(vec![0.0; d], vec![1.0; d])
    }

    pub fn new(mean: Vec<f64>, sd: Vec<f64>) -> Self {
        Self { mean, sd, horizon: f64::INFINITY, fault: Fault::None }
    }

    pub fn with_horizon(mut self, h: f64) -> Self {
        self.horizon = h;
        self
    }

    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = fault;
        self
    }
}

impl PdmpKernel<()> for ZigZag {
    type Chain = ZigZagChain;

    fn build_chain<R: Rng + ?Sized>(&self, _: &(), x: &[f64], rng: &mut R) -> Result<ZigZagChain> {
        tallmc_core::error::check_finite_vector("initial position", x, self.mean.len())?;
        let v = (0..x.len()).map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 }).collect();
        Ok(ZigZagChain {
            settings: self.clone(),
            trajectory: Trajectory::new(x.to_vec(), v),
            steps: 0,
            adapts: 0,
            warmup_begun: false,
            warmup_ended: false,
        })
    }
}

/// What the toy chain saw of the driver's warmup hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ToyTuning {
    /// Calls to `adapt`.
    pub adapt_calls: u64,
    /// Whether `begin_warmup` was called.
    pub warmup_begun: bool,
    /// Whether `end_warmup` was called.
    pub warmup_ended: bool,
}

impl tallmc_core::Tuning for ToyTuning {
    fn comment_lines(&self) -> Vec<String> {
        vec![
            format!("adapt calls = {}", self.adapt_calls),
            format!("warmup begun = {}, ended = {}", self.warmup_begun, self.warmup_ended),
        ]
    }
}

impl PdmpChain<()> for ZigZagChain {
    type Tuning = ToyTuning;

    fn trajectory(&self) -> &Trajectory {
        &self.trajectory
    }

    fn step<R: Rng + ?Sized>(&mut self, _: &(), rng: &mut R) -> Result<SegmentStats> {
        let n = self.steps;
        self.steps += 1;
        let (z, t) = (&self.settings, &mut self.trajectory);
        let d = z.mean.len();
        let stats = SegmentStats {
            evals: EvalCounts { gradients: d as u64, ..EvalCounts::ZERO },
            proposals: 1,
            ..SegmentStats::NONE
        };
        match z.fault {
            Fault::ErrAt(k) if n == k => {
                return Err(Error::Internal("test kernel failure").context(format!("step {n}")));
            }
            Fault::StallFrom(k) if n >= k => {
                t.advance(0.0);
                t.set_end(EventKind::Horizon);
                return Ok(stats);
            }
            Fault::InfiniteAt(k) if n == k => {
                t.advance(f64::INFINITY);
                t.set_end(EventKind::Horizon);
                return Ok(stats);
            }
            _ => {}
        }
        let (mut best, mut jbest) = (f64::INFINITY, 0);
        for j in 0..d {
            let a = t.velocity()[j] * (t.position()[j] - z.mean[j]);
            let e: f64 = rng.sample(Exp1);
            let s2 = z.sd[j] * z.sd[j];
            let tau = -a + (a.max(0.0).powi(2) + 2.0 * s2 * e).sqrt();
            if tau < best {
                best = tau;
                jbest = j;
            }
        }
        if best > z.horizon {
            t.advance(z.horizon);
            t.set_end(EventKind::Horizon);
            return Ok(stats);
        }
        t.advance(best);
        t.velocity_mut()[jbest] *= -1.0;
        t.set_end(EventKind::Flip(jbest as u32));
        Ok(SegmentStats { bounces: 1, ratio: 1.0, ..stats })
    }

    fn begin_warmup(&mut self) {
        self.warmup_begun = true;
    }

    fn adapt<R: Rng + ?Sized>(&mut self, _: &(), _: &SegmentStats, _: &mut R) -> Result<()> {
        self.adapts += 1;
        Ok(())
    }

    fn end_warmup(&mut self) {
        self.warmup_ended = true;
    }

    fn tuning(&self) -> ToyTuning {
        ToyTuning {
            adapt_calls: self.adapts,
            warmup_begun: self.warmup_begun,
            warmup_ended: self.warmup_ended,
        }
    }
}
