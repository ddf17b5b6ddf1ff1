//! Piecewise-deterministic kernels: samplers whose output is a continuous trajectory.
//!
//! BPS, SBPS, lipSBPS and Zig-Zag move a particle on straight lines, x(t) = x + v t, and change
//! the velocity v at the events of a Poisson process. Their output is the **trajectory**, not a
//! list of draws: the posterior expectation of f is the time average
//!
//! ```text
//! E_π[f] ≈ (1/T) ∫_0^T f(x(t)) dt,
//! ```
//!
//! and the positions *at events* are not distributed as π (events happen more often where the
//! potential rises, so event positions are biased towards high-potential regions). That is why
//! a [`PdmpKernel`] is a different trait from [`Kernel`](crate::Kernel): one step of the
//! [`PdmpChain`] it builds yields a
//! [`Segment`] (start time, start position, velocity, duration, and what ended it), never a draw.
//! The driver hands segments to segment sinks; equally weighted draws exist only where an
//! adapter evaluates the trajectory on a fixed time grid. There is no way to record an event
//! position as a draw.
//!
//! Chains keep their particle in a [`Trajectory`], which records each segment as it moves, so
//! every kernel reports segments the same way.

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::{EvalCounts, Result, Tuning};

/// What ended a trajectory segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventKind {
    /// The velocity was reflected off a (possibly estimated) gradient: BPS and its variants.
    Bounce,
    /// Coordinate `j` of the velocity changed sign: Zig-Zag.
    Flip(u32),
    /// The velocity was redrawn from its reference distribution.
    Refresh,
    /// A thinning proposal was rejected: the particle moved, the velocity is unchanged.
    Rejected,
    /// The segment reached the horizon of a rate bound, which is rebuilt there; the velocity is
    /// unchanged.
    Horizon,
    /// Numerical trouble at the segment's end (a non-finite gradient or rate): the kernel
    /// reversed the velocity to leave the region and reports the event (see each kernel).
    Divergence,
    /// The run's budget ended the segment (set by the driver when it truncates the last one).
    End,
}

impl EventKind {
    /// Whether the velocity changes at this event (bounce, flip, refresh, divergence).
    pub fn changes_velocity(self) -> bool {
        matches!(self, Self::Bounce | Self::Flip(_) | Self::Refresh | Self::Divergence)
    }

    /// A short lower-case name (`bounce`, `flip`, `refresh`, `rejected`, `horizon`,
    /// `divergence`, `end`), as written in skeleton files.
    pub fn name(self) -> &'static str {
        match self {
            Self::Bounce => "bounce",
            Self::Flip(_) => "flip",
            Self::Refresh => "refresh",
            Self::Rejected => "rejected",
            Self::Horizon => "horizon",
            Self::Divergence => "divergence",
            Self::End => "end",
        }
    }
}

/// One straight piece of a trajectory: x(s) = `position` + `velocity`·(s − `start_time`) for
/// s ∈ [`start_time`, `start_time` + `duration`].
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
    /// Trajectory time at the start of the segment.
    pub start_time: f64,
    /// Length of the segment in trajectory time (≥ 0).
    pub duration: f64,
    /// Position at the start.
    pub position: &'a [f64],
    /// dx/dt along the segment.
    pub velocity: &'a [f64],
    /// What happened at the end of the segment.
    pub end: EventKind,
}

impl Segment<'_> {
    /// Writes x(`start_time` + s) = position + s·velocity into `out`, for 0 ≤ s ≤ duration.
    pub fn position_after(&self, s: f64, out: &mut [f64]) {
        for ((o, x), v) in out.iter_mut().zip(self.position).zip(self.velocity) {
            *o = x + s * v;
        }
    }

    /// Trajectory time at the end of the segment.
    pub fn end_time(&self) -> f64 {
        self.start_time + self.duration
    }
}

/// A particle on a piecewise-linear path: current position, velocity and time, plus the last
/// segment it travelled.
///
/// A kernel step calls [`Trajectory::advance`] (which records the segment's start, then moves),
/// then changes the velocity through [`Trajectory::velocity_mut`] if an event happened, and
/// finally [`Trajectory::set_end`]. Nothing allocates after construction.
#[derive(Debug, Clone, PartialEq)]
pub struct Trajectory {
    position: Vec<f64>,
    velocity: Vec<f64>,
    time: f64,
    start_position: Vec<f64>,
    start_velocity: Vec<f64>,
    start_time: f64,
    duration: f64,
    end: EventKind,
}

impl Trajectory {
    /// A particle at `position` with `velocity` (same length) at time 0, with an empty last
    /// segment.
    pub fn new(position: Vec<f64>, velocity: Vec<f64>) -> Self {
        assert_eq!(position.len(), velocity.len(), "position and velocity lengths differ");
        Self {
            start_position: position.clone(),
            start_velocity: velocity.clone(),
            position,
            velocity,
            time: 0.0,
            start_time: 0.0,
            duration: 0.0,
            end: EventKind::Horizon,
        }
    }

    /// Dimension d.
    pub fn dim(&self) -> usize {
        self.position.len()
    }

    /// Current position x.
    pub fn position(&self) -> &[f64] {
        &self.position
    }

    /// Current velocity v (dx/dt).
    pub fn velocity(&self) -> &[f64] {
        &self.velocity
    }

    /// The velocity, to change it at an event (after [`Trajectory::advance`]).
    pub fn velocity_mut(&mut self) -> &mut [f64] {
        &mut self.velocity
    }

    /// Position and velocity together, mutably (e.g. to restart a chain elsewhere).
    pub fn position_velocity_mut(&mut self) -> (&mut [f64], &mut [f64]) {
        (&mut self.position, &mut self.velocity)
    }

    /// Current trajectory time.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Moves for time `tau` ≥ 0 along the current velocity: records the segment's start (time,
    /// position, velocity), then x ← x + v·tau and t ← t + tau. The segment's end kind is
    /// [`EventKind::Rejected`] until [`Trajectory::set_end`]. O(d).
    pub fn advance(&mut self, tau: f64) {
        debug_assert!(tau >= 0.0, "negative segment duration {tau}");
        self.start_position.copy_from_slice(&self.position);
        self.start_velocity.copy_from_slice(&self.velocity);
        self.start_time = self.time;
        self.duration = tau;
        for (x, v) in self.position.iter_mut().zip(&self.velocity) {
            *x += tau * v;
        }
        self.time += tau;
        self.end = EventKind::Rejected;
    }

    /// Records what ended the last segment.
    pub fn set_end(&mut self, end: EventKind) {
        self.end = end;
    }

    /// The last segment travelled (with the velocity it was travelled at, whatever happened at
    /// its end).
    pub fn last_segment(&self) -> Segment<'_> {
        Segment {
            start_time: self.start_time,
            duration: self.duration,
            position: &self.start_position,
            velocity: &self.start_velocity,
            end: self.end,
        }
    }
}

/// What one step of a piecewise-deterministic kernel did (one segment). Every kernel reports
/// the same counts, so the driver and the figures count events the same way for all of them.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SegmentStats {
    /// Per-datum evaluations made during the step.
    pub evals: EvalCounts,
    /// Thinning proposals examined (each costs a rate evaluation).
    pub proposals: u64,
    /// Accepted velocity changes off a gradient (BPS reflections, Zig-Zag flips).
    pub bounces: u64,
    /// Velocity refreshments.
    pub refreshes: u64,
    /// Proposals whose rate exceeded the bound they were proposed from (rate/bound > 1): a bias
    /// diagnostic in SBPS, an error in the exact samplers.
    pub violations: u64,
    /// Divergences (non-finite gradient or rate).
    pub divergences: u64,
    /// rate/bound at the step's proposal (NaN when the step made none).
    pub ratio: f64,
}

impl SegmentStats {
    /// No evaluation, no event, ratio NaN.
    pub const NONE: Self = Self {
        evals: EvalCounts::ZERO,
        proposals: 0,
        bounces: 0,
        refreshes: 0,
        violations: 0,
        divergences: 0,
        ratio: f64::NAN,
    };

    /// Events that changed the velocity: bounces + refreshes + divergences.
    pub fn events(&self) -> u64 {
        self.bounces + self.refreshes + self.divergences
    }
}

/// Totals of [`SegmentStats`] over many steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EventTotals {
    /// Per-datum evaluations.
    pub evals: EvalCounts,
    /// Segments travelled (kernel steps).
    pub segments: u64,
    /// Thinning proposals.
    pub proposals: u64,
    /// Bounces and flips.
    pub bounces: u64,
    /// Refreshments.
    pub refreshes: u64,
    /// Bound violations (rate/bound > 1).
    pub violations: u64,
    /// Divergences.
    pub divergences: u64,
}

impl EventTotals {
    /// Adds one step's stats.
    pub fn add(&mut self, s: &SegmentStats) {
        self.evals += s.evals;
        self.segments += 1;
        self.proposals += s.proposals;
        self.bounces += s.bounces;
        self.refreshes += s.refreshes;
        self.violations += s.violations;
        self.divergences += s.divergences;
    }

    /// Events that changed the velocity: bounces + refreshes + divergences.
    pub fn events(&self) -> u64 {
        self.bounces + self.refreshes + self.divergences
    }

    /// violations / proposals (0 when there was no proposal).
    pub fn violation_rate(&self) -> f64 {
        if self.proposals == 0 { 0.0 } else { self.violations as f64 / self.proposals as f64 }
    }
}

impl std::ops::AddAssign for EventTotals {
    /// Adds another run's totals (chains, or warmup and sampling), field by field.
    fn add_assign(&mut self, other: Self) {
        self.evals += other.evals;
        self.segments += other.segments;
        self.proposals += other.proposals;
        self.bounces += other.bounces;
        self.refreshes += other.refreshes;
        self.violations += other.violations;
        self.divergences += other.divergences;
    }
}

/// A piecewise-deterministic Markov process kernel, as its immutable, validated settings.
///
/// Settings are checked when the value is made (each kernel's constructor);
/// [`PdmpKernel::build_chain`] checks them against the model and builds a [`PdmpChain`] at a
/// position. The chain owns its particle, scratch and tuning; there is no way to step a kernel
/// that was not built. One settings value builds every chain of a run (the continuous driver
/// shares it between threads), as [`Kernel`](crate::Kernel) does for discrete-time kernels.
///
/// `M` is the model; an implementation states in its where-clause exactly what it needs from
/// the model.
pub trait PdmpKernel<M: ?Sized>: Sync {
    /// The running chain these settings build.
    type Chain: PdmpChain<M>;

    /// Builds a chain at `position` (velocity drawn from the kernel's reference distribution),
    /// validating its length and finiteness and whatever the kernel needs from the model there.
    /// Per-datum evaluations made here (a gradient at the start, a bound's set-up pass) are
    /// reported with the first step's [`SegmentStats`], so run totals are complete.
    fn build_chain<R: Rng + ?Sized>(
        &self, model: &M, position: &[f64], rng: &mut R,
    ) -> Result<Self::Chain>;
}

/// One running piecewise-deterministic chain: the particle, scratch and tuning of a built
/// [`PdmpKernel`]. Each [`PdmpChain::step`] moves the particle along one segment (to the next
/// thinning proposal, event, or bound horizon) and reports it.
///
/// The driver calls [`PdmpChain::begin_warmup`], then `step` and [`PdmpChain::adapt`] until
/// the warmup budget (in trajectory time, events or evaluations) is spent, then
/// [`PdmpChain::end_warmup`], then `step` until the sampling budget is spent, handing every
/// post-warmup segment ([`Trajectory::last_segment`]) to the segment sinks. `step` allocates
/// nothing; the random number generator is always borrowed.
pub trait PdmpChain<M: ?Sized>: Send {
    /// The typed tuning (settings and adapted quantities) the chain reports.
    type Tuning: Tuning;

    /// The particle: position, velocity, time and last segment.
    fn trajectory(&self) -> &Trajectory;

    /// Moves along one segment. Numerical trouble is a divergence in the stats (and
    /// [`EventKind::Divergence`] as the segment's end); an `Err` means the run cannot continue
    /// (for an exact sampler, a bound the model provides that its rate exceeded).
    fn step<R: Rng + ?Sized>(&mut self, model: &M, rng: &mut R) -> Result<SegmentStats>;

    /// Called once before the first warmup step.
    fn begin_warmup(&mut self) {}

    /// Called after every warmup step: adapt tuning (e.g. a preconditioner). It must not move
    /// the particle (the trajectory would become discontinuous).
    fn adapt<R: Rng + ?Sized>(
        &mut self, model: &M, stats: &SegmentStats, rng: &mut R,
    ) -> Result<()> {
        let _ = (model, stats, rng);
        Ok(())
    }

    /// Called once after the last warmup step: fix the tuning for sampling.
    fn end_warmup(&mut self) {}

    /// The current (after warmup: the adapted) tuning; its
    /// [`comment_lines`](Tuning::comment_lines) describe the kernel's settings and tuning.
    fn tuning(&self) -> Self::Tuning;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advance_records_the_segment_before_the_event() {
        let mut t = Trajectory::new(vec![1.0, 2.0], vec![0.5, -1.0]);
        t.advance(2.0);
        t.velocity_mut()[1] = 1.0;
        t.set_end(EventKind::Flip(1));
        assert_eq!(t.position(), &[2.0, 0.0]);
        assert_eq!(t.time(), 2.0);
        let s = t.last_segment();
        assert_eq!((s.start_time, s.duration, s.end), (0.0, 2.0, EventKind::Flip(1)));
        assert_eq!(s.position, &[1.0, 2.0]);
        assert_eq!(s.velocity, &[0.5, -1.0]);
        let mut mid = [0.0; 2];
        s.position_after(1.0, &mut mid);
        assert_eq!(mid, [1.5, 1.0]);
        assert_eq!(s.end_time(), 2.0);
        t.advance(0.5);
        assert_eq!(t.last_segment().start_time, 2.0);
        assert_eq!(t.last_segment().velocity, &[0.5, 1.0]);
        assert_eq!(t.position(), &[2.25, 0.5]);
    }

    #[test]
    fn totals_count_events_and_violation_rate() {
        let mut tot = EventTotals::default();
        let s = SegmentStats { proposals: 2, bounces: 1, violations: 1, ..SegmentStats::NONE };
        tot.add(&s);
        tot.add(&SegmentStats { refreshes: 1, ..SegmentStats::NONE });
        assert_eq!(tot.segments, 2);
        assert_eq!(tot.events(), 2);
        assert_eq!(tot.violation_rate(), 0.5);
        assert!(EventKind::Flip(3).changes_velocity());
        assert!(!EventKind::Rejected.changes_velocity());
    }
}
