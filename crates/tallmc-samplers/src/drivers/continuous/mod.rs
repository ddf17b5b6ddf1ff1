//! Continuous-time output: the driver for piecewise-deterministic kernels (BPS, SBPS, Zig-Zag)
//! and the sinks that turn their trajectories into skeletons, draws and exact averages.
//!
//! # Trajectories, not draws
//!
//! The chain a [`PdmpKernel`](tallmc_core::PdmpKernel) builds moves a particle on straight lines,
//! x(t) = x + v t, changing v at the events of a Poisson process. Its output is the whole
//! trajectory, and posterior expectations are **time averages**
//!
//! ```text
//! E_π[f] ≈ (1/T) ∫_0^T f(x(t)) dt.
//! ```
//!
//! The positions *at events* are not draws from π: events happen at rate λ(x, v), highest
//! where the potential U = −log π rises fastest along v, so event positions over-represent
//! high-potential regions (for the 1-D Zig-Zag on N(0, 1) the event positions have density
//! ∝ |x| φ(x), not φ(x)). Nothing here ever records an event position as a draw. The user-facing
//! flow is
//!
//! ```text
//! kernel ─▶ ContinuousDriver ─▶ SegmentSink ─┬─▶ SkeletonSink / MemorySkeleton   (event skeleton)
//!                                            ├─▶ GridDraws ─▶ any DrawSink        (x(kΔ): CSV, ESS, R̂)
//!                                            └─▶ TimeAverageSink                  (exact ∫, batch-means MCSE)
//! ```
//!
//! * [`GridDraws`] evaluates the trajectory at t = Δ, 2Δ, … and is the **only** place where a
//!   PDMP makes equally weighted draws: at stationarity x(kΔ) ~ π for every k.
//! * [`TimeAverageSink`] integrates exactly: ∫x = τ(x₀ + vτ/2) and
//!   ∫x² = τ(x₀² + x₀vτ + v²τ²/3) per segment (and cross moments on request), and estimates the
//!   MCSE of the mean by batch means over time — equal-length time batches, merged in pairs as
//!   the run grows so memory stays bounded, MCSE = √(Σ_b t_b (m_b − m̂)²/((B − 1) T)). Test
//!   functions are integrated by composite Gauss–Legendre quadrature. The formulas and their
//!   properties are in [`tallmc_diagnostics::continuous`].
//!
//! # A run
//!
//! Per chain k (chains run in parallel with rayon; chain k draws from
//! [`chain_rng`](tallmc_core::rng::chain_rng)`(seed, k)`, so a chain's output does not depend
//! on the number of chains or threads): the kernel's settings build the chain at its position
//! ([`PdmpKernel::build_chain`](tallmc_core::PdmpKernel::build_chain)); `begin_warmup`; `step`
//! then `adapt` until the warmup [`Budget`] is spent; `end_warmup`; [`SegmentSink::begin`]
//! (with the comment lines of the chain's typed tuning);
//! then `step` until the sampling budget is spent, handing **every** segment
//! ([`Trajectory::last_segment`](tallmc_core::Trajectory::last_segment), with the step's
//! [`SegmentStats`](tallmc_core::SegmentStats)) to the sink; [`SegmentSink::finish`].
//!
//! * **Budgets** ([`Budget`]) are trajectory time, events (velocity changes), per-datum
//!   evaluations, or `count` grid draws Δ apart (time `count`·Δ). Counting budgets stop after
//!   the first step that reaches them; time budgets are exact.
//! * **The warmup split.** With a time budget W, the step that crosses W is a warmup step (the
//!   kernel adapts on it and its counts are warmup counts); the part of its segment after W is
//!   the first sampling segment, with [`SegmentStats::NONE`](tallmc_core::SegmentStats::NONE)
//!   and the same end event.
//! * **The sampling clock** starts at 0 at the end of warmup; segments are placed at the sum
//!   of the previous sampled durations. With a time budget T the last segment is truncated at T
//!   and its end kind set to [`EventKind::End`](tallmc_core::EventKind::End) (its step's counts,
//!   cut-off event included, are sampling counts: the work was done). The report's
//!   `sampling_time` is then exactly T.
//! * **Guards.** A kernel `Err` is fatal ([`SamplerError::Segment`](crate::SamplerError::Segment),
//!   naming the chain and the 0-based segment number, warmup included), as is a segment of
//!   negative or non-finite duration; more than
//!   [`ContinuousRunConfig::max_zero_duration_steps`] zero-duration segments in a row is
//!   [`SamplerError::Stalled`](crate::SamplerError::Stalled).
//! * **Stopping.** Once the flag given to [`ContinuousDriver::stop_when`] is raised (e.g. by
//!   Ctrl-C), every chain ends after its current segment and finishes its sink, so files stay
//!   complete and readable; the report says `interrupted`, with the time and counts made.
//! * **Cost.** The driver itself does O(1) work per step plus what the sinks do; memory sinks
//!   grow by amortized doubling only.
//!
//! # Example
//!
//! The exact Zig-Zag sampler for N(0, 1): the flip rate along the segment is
//! (v(x + vs))⁺ = (a + s)⁺ with a = vx (v² = 1), so the first arrival solves
//! ∫_0^τ (a + s)⁺ ds = E with E ~ Exp(1): τ = −a + √((a⁺)² + 2E).
//!
//! ```
//! use rand::{Rng, RngExt};
//! use rand_distr::Exp1;
//! use tallmc_core::{
//!     EventKind, NoTuning, PdmpChain, PdmpKernel, Result, SegmentStats, Trajectory,
//! };
//! use tallmc_samplers::continuous::{
//!     Budget, ContinuousRunConfig, InMemoryOptions, sample_trajectories_in_memory,
//!     summarize_trajectories,
//! };
//!
//! struct ZigZag;
//! struct ZigZagChain(Trajectory);
//! impl PdmpKernel<()> for ZigZag {
//!     type Chain = ZigZagChain;
//!     fn build_chain<R: Rng + ?Sized>(&self, _: &(), x: &[f64], rng: &mut R) -> Result<ZigZagChain> {
//!         let v = if rng.random::<bool>() { 1.0 } else { -1.0 };
//!         Ok(ZigZagChain(Trajectory::new(x.to_vec(), vec![v])))
//!     }
//! }
//! impl PdmpChain<()> for ZigZagChain {
//!     type Tuning = NoTuning;
//!     fn trajectory(&self) -> &Trajectory {
//!         &self.0
//!     }
//!     fn step<R: Rng + ?Sized>(&mut self, _: &(), rng: &mut R) -> Result<SegmentStats> {
//!         let t = &mut self.0;
//!         let a = t.velocity()[0] * t.position()[0];
//!         let e: f64 = rng.sample(Exp1);
//!         t.advance(-a + (a.max(0.0).powi(2) + 2.0 * e).sqrt());
//!         t.velocity_mut()[0] *= -1.0;
//!         t.set_end(EventKind::Flip(0));
//!         Ok(SegmentStats { bounces: 1, ..SegmentStats::NONE })
//!     }
//!     fn tuning(&self) -> NoTuning {
//!         NoTuning
//!     }
//! }
//!
//! let config = ContinuousRunConfig {
//!     warmup: Budget::Time(10.0),
//!     sampling: Budget::Draws { count: 2000, grid_step: 0.5 },
//!     num_chains: 2,
//!     seed: 3,
//!     ..Default::default()
//! };
//! let opts = InMemoryOptions::default();
//! let chains = sample_trajectories_in_memory(&(), config, &[vec![0.0]], &ZigZag, opts)?;
//! // Exact time averages: mean 0 and sd 1 within Monte Carlo error.
//! let s = &summarize_trajectories(&chains).unwrap()[0];
//! assert!(s.mean.abs() < 4.0 * s.mcse_mean);
//! assert_eq!(s.time, 2.0 * 1000.0);
//! // Exactly `count` grid draws per chain, on the sampling clock.
//! let draws = chains[0].sink.draws().unwrap();
//! assert_eq!(draws.num_draws(), 2000);
//! assert_eq!(draws.stat("time__").unwrap()[1999], 1000.0);
//! // The skeleton starts at 0, ends at T, and has one row per flip in between.
//! let sk = &chains[0].sink.skeleton;
//! assert_eq!((sk.times[0], sk.times[sk.len() - 1]), (0.0, 1000.0));
//! # Ok::<(), tallmc_samplers::SamplerError>(())
//! ```

mod chain;
mod driver;
mod memory;
mod run;

pub use crate::sinks::segments as sink;

pub use crate::budget::Budget;
pub use memory::{
    InMemoryOptions, MemoryTrajectory, sample_trajectories_in_memory, summarize_trajectories,
};
pub use run::{
    ContinuousChainOutput, ContinuousChainReport, ContinuousDriver, ContinuousRunConfig,
    DEFAULT_MAX_ZERO_DURATION_STEPS, PROGRESS_TICKS, PdmpTuningOf,
};
pub use sink::{
    GridDraws, GridStats, MemorySkeleton, SegmentFooter, SegmentHeader, SegmentSink, SkeletonEvent,
    SkeletonSink, TestFn, TimeAverageSink,
};
