//! Running estimates by cost, for Fig. 4: each sampler is stepped by hand from one start, and
//! after every step the cost so far (per-datum gradient evaluations) decides what is recorded.
//!
//! * **Cost and epochs.** Every kernel of Fig. 4 counts one per-datum gradient (and one term)
//!   for every datum it touches: SBPS and pSBPS n per proposal, lipSBPS and ZZ-SS 1 per
//!   proposal, SGLD and mSGNHT n per update. An epoch (data pass) is N per-datum gradient
//!   evaluations, so epochs = gradients / N for every method.
//! * **What is averaged.** A continuous-time sampler contributes its trajectory exactly,
//!   ∫_seg x dt = τ(x₀ + uτ/2) with weight τ per segment; a stochastic-gradient sampler its
//!   iterates, weight 1 each. Cumulative sums from the start are recorded at every checkpoint,
//!   so any window of the run can be averaged afterwards.
//! * **Burn-in: the first half.** The estimate at e epochs averages the window (e/2, e] — the
//!   usual "discard the first half" rule, the same for every method ([`running_estimates`]).
//!   The checkpoints are E·2^(−k/[`PER_OCTAVE`]) for a budget E, so e/2 is a checkpoint too and
//!   the windows are exact (to one kernel step). A fixed short burn-in would leave every
//!   method's transient from the random start in its average, fading only like 1/epochs, so the
//!   curves would measure the starting point more than the samplers.
//! * **Adaptation.** Adaptive kernels (pSBPS's preconditioner) adapt during the first half of
//!   the budget and are frozen at its end (the library's warmup; the run is stepped by hand
//!   because the driver hands only post-warmup segments to its sinks, and the NLL panel needs
//!   the path from the start).
//! * **Checkpoints.** At each, the negative log-likelihood per datum −(1/N) Σ_i ℓ_i(x) of the
//!   current position is recorded too (the paper's top-left panel; a diagnostic pass, not
//!   counted), at the end of the step that reaches it.
//! * **MCSE.** The second half of the budget is cut into [`BATCHES`] equal-cost batches; the
//!   batch means of all chains, weighted by their time (or iterates), give the MCSE of the
//!   pooled final estimate, √(Σ w_b (m_b − m̂)² / ((B − 1) W)), as
//!   `tallmc_diagnostics::continuous` does over time.

use std::time::Instant;

use crate::{Error, Result};
use tallmc_core::rng::ChainRng;
use tallmc_core::{Chain, Kernel, PdmpChain, PdmpKernel, StepStats, Terms};

/// Checkpoints per halving of the epoch count (≈ 20 per decade).
pub const PER_OCTAVE: usize = 6;
/// Batches of the second half of a run, for the MCSE.
pub const BATCHES: usize = 16;

/// When to stop and where to record.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Data passes of each chain.
    pub budget_epochs: f64,
    /// Epoch counts at which the estimate and the NLL are recorded, increasing, ending at the
    /// budget: E·2^(−k/[`PER_OCTAVE`]) down to at least `first`.
    pub checkpoints: Vec<f64>,
}

impl Plan {
    /// Checkpoints E·2^(−k/6) from the budget E down to the last one ≥ `first` epochs.
    pub fn new(budget_epochs: f64, first: f64) -> Self {
        let mut checkpoints: Vec<f64> = (0..)
            .map(|k| budget_epochs * 2f64.powf(-(k as f64) / PER_OCTAVE as f64))
            .take_while(|&e| e >= first)
            .collect();
        checkpoints.reverse();
        Self { budget_epochs, checkpoints }
    }

    /// The index of the checkpoint at half of checkpoint `k`'s epochs, if there is one.
    pub fn half(&self, k: usize) -> Option<usize> {
        k.checked_sub(PER_OCTAVE)
    }
}

/// The reference the error is measured against.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// Posterior means.
    pub mean: &'a [f64],
    /// Posterior sds (the error's units).
    pub sd: &'a [f64],
}

impl Target<'_> {
    /// RMS over coordinates of (estimate_j − mean_j)/sd_j.
    pub fn error(&self, estimate: &[f64]) -> f64 {
        let d = self.mean.len() as f64;
        let s: f64 = estimate
            .iter()
            .zip(self.mean)
            .zip(self.sd)
            .map(|((e, m), s)| ((e - m) / s).powi(2))
            .sum();
        (s / d).sqrt()
    }
}

/// What one chain recorded: one entry per checkpoint of the plan (a step that crosses several
/// checkpoints records the same state for each).
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// Epochs actually spent when each checkpoint was recorded.
    pub epochs: Vec<f64>,
    /// Negative log-likelihood per datum of the current position at each checkpoint.
    pub nll: Vec<f64>,
    /// ∫x dt (time averages) or Σ x_k (iterate averages) from the start to each checkpoint,
    /// row-major checkpoints × d.
    pub cumulative: Vec<f64>,
    /// The matching total weight (trajectory time, or number of iterates).
    pub weight: Vec<f64>,
    /// Per batch of the second half: the weighted sums (batches × d, row-major).
    pub batch_sum: Vec<f64>,
    /// Per batch of the second half: the weight.
    pub batch_weight: Vec<f64>,
    /// Epochs spent.
    pub total_epochs: f64,
    /// Kernel steps (segments or updates).
    pub steps: u64,
    /// Thinning proposals (continuous-time samplers).
    pub proposals: u64,
    /// Velocity changes (bounces, flips, refreshments).
    pub events: u64,
    /// Bound violations (SBPS's bias diagnostic).
    pub violations: u64,
    /// Divergences.
    pub divergences: u64,
    /// Trajectory time (continuous-time samplers).
    pub time: f64,
    /// Wall seconds.
    pub seconds: f64,
}

/// The running estimate pooled over chains at every checkpoint of `plan`, the first half of
/// the run so far discarded (module docs); NaN before the first checkpoint with a half.
pub fn running_estimates(chains: &[Trace], plan: &Plan, d: usize) -> Vec<Vec<f64>> {
    (0..plan.checkpoints.len())
        .map(|k| {
            let mut est = vec![f64::NAN; d];
            let Some(h) = plan.half(k) else { return est };
            let w: f64 = chains.iter().map(|c| c.weight[k] - c.weight[h]).sum();
            if w > 0.0 {
                for (j, e) in est.iter_mut().enumerate() {
                    let s: f64 = chains
                        .iter()
                        .map(|c| c.cumulative[k * d + j] - c.cumulative[h * d + j])
                        .sum();
                    *e = s / w;
                }
            }
            est
        })
        .collect()
}

/// The pooled final estimate (the second half of every chain) and its batch-means MCSE over
/// the batches of all chains.
pub fn pooled_final(chains: &[Trace], d: usize) -> (Vec<f64>, Vec<f64>) {
    let total: f64 = chains.iter().flat_map(|c| &c.batch_weight).sum();
    let mean: Vec<f64> = (0..d)
        .map(|j| {
            chains.iter().flat_map(|c| c.batch_sum.chunks_exact(d).map(move |b| b[j])).sum::<f64>()
                / total
        })
        .collect();
    let batches: usize =
        chains.iter().map(|c| c.batch_weight.iter().filter(|w| **w > 0.0).count()).sum();
    let mcse = (0..d)
        .map(|j| {
            let ss: f64 = chains
                .iter()
                .flat_map(|c| c.batch_sum.chunks_exact(d).zip(&c.batch_weight))
                .filter(|(_, w)| **w > 0.0)
                .map(|(b, w)| w * (b[j] / w - mean[j]).powi(2))
                .sum();
            (ss / (batches.max(2) - 1) as f64 / total).sqrt()
        })
        .collect();
    (mean, mcse)
}

/// Accumulates the cumulative sums, the batches and the checkpoints of one chain.
struct Tracker<'a, M: ?Sized> {
    model: &'a M,
    plan: &'a Plan,
    n: f64,
    d: usize,
    cost: u64,
    half: u64,
    end: u64,
    sum: Vec<f64>,
    weight: f64,
    next: usize,
    all: Vec<u32>,
    values: Vec<f64>,
    trace: Trace,
    clock: Instant,
}

impl<'a, M: Terms + ?Sized> Tracker<'a, M> {
    fn new(model: &'a M, plan: &'a Plan) -> Self {
        let (n, d) = (model.num_terms(), model.dim());
        let nf = n as f64;
        let trace = Trace {
            batch_sum: vec![0.0; BATCHES * d],
            batch_weight: vec![0.0; BATCHES],
            ..Trace::default()
        };
        Self {
            model,
            plan,
            n: nf,
            d,
            cost: 0,
            half: (0.5 * plan.budget_epochs * nf).round() as u64,
            end: (plan.budget_epochs * nf).round() as u64,
            sum: vec![0.0; d],
            weight: 0.0,
            next: 0,
            all: (0..n as u32).collect(),
            values: vec![0.0; n],
            trace,
            clock: Instant::now(),
        }
    }

    /// Whether the second half of the budget has started.
    fn second_half(&self) -> bool {
        self.cost >= self.half
    }

    fn done(&self) -> bool {
        self.cost >= self.end
    }

    /// Adds `integral` (∫x over a segment, or an iterate) with weight `w` (its duration, or 1),
    /// made at the current cost, to the cumulative sums and, in the second half, to its batch.
    fn accumulate(&mut self, w: f64, integral: &[f64]) {
        for (s, x) in self.sum.iter_mut().zip(integral) {
            *s += x;
        }
        self.weight += w;
        if self.second_half() {
            let span = (self.end - self.half).max(1) as u128;
            let b = ((u128::from(self.cost - self.half) * BATCHES as u128 / span) as usize)
                .min(BATCHES - 1);
            let row = &mut self.trace.batch_sum[b * self.d..(b + 1) * self.d];
            for (s, x) in row.iter_mut().zip(integral) {
                *s += x;
            }
            self.trace.batch_weight[b] += w;
        }
    }

    /// Records every checkpoint reached by the cost so far, at `position`.
    fn checkpoint(&mut self, position: &[f64]) {
        let epochs = self.cost as f64 / self.n;
        let cps = &self.plan.checkpoints;
        if self.next >= cps.len() || epochs < cps[self.next] {
            return;
        }
        self.model.log_terms(position, &self.all, &mut self.values);
        let nll = -self.values.iter().sum::<f64>() / self.n;
        while self.next < cps.len() && epochs >= cps[self.next] {
            self.next += 1;
            self.trace.epochs.push(epochs);
            self.trace.nll.push(nll);
            self.trace.cumulative.extend_from_slice(&self.sum);
            self.trace.weight.push(self.weight);
        }
    }

    fn finish(mut self) -> Result<Trace> {
        if self.trace.batch_weight.iter().all(|w| *w <= 0.0)
            || self.trace.weight.len() != self.plan.checkpoints.len()
        {
            return Err(Error::Core(tallmc_core::Error::Internal(
                "Fig. 4: a run ended without its checkpoints or second half",
            )));
        }
        self.trace.total_epochs = self.cost as f64 / self.n;
        self.trace.seconds = self.clock.elapsed().as_secs_f64();
        Ok(self.trace)
    }
}

/// Steps a continuous-time `kernel` from `start` until the budget is spent (module docs):
/// adapts during the first half, averages the trajectory exactly.
pub fn run_pdmp<M, K>(
    model: &M, kernel: &K, start: &[f64], plan: &Plan, rng: &mut ChainRng,
) -> Result<Trace>
where
    M: Terms + ?Sized,
    K: PdmpKernel<M>,
{
    let mut t = Tracker::new(model, plan);
    let mut chain = kernel.build_chain(model, start, rng)?;
    chain.begin_warmup();
    let mut warm = true;
    let mut integral = vec![0.0; model.dim()];
    while !t.done() {
        let stats = chain.step(model, rng)?;
        let seg = chain.trajectory().last_segment();
        if seg.duration > 0.0 {
            let tau = seg.duration;
            for ((s, x), v) in integral.iter_mut().zip(seg.position).zip(seg.velocity) {
                *s = tau * (x + 0.5 * v * tau);
            }
            t.accumulate(tau, &integral);
            t.trace.time += tau;
        }
        t.cost += stats.evals.gradients;
        t.trace.steps += 1;
        t.trace.proposals += stats.proposals;
        t.trace.events += stats.bounces + stats.refreshes;
        t.trace.violations += stats.violations;
        t.trace.divergences += stats.divergences;
        if warm {
            chain.adapt(model, &stats, rng)?;
            if t.second_half() {
                chain.end_warmup();
                warm = false;
            }
        }
        t.checkpoint(chain.trajectory().position());
    }
    t.finish()
}

/// Steps a stochastic-gradient `kernel` from `start` until the budget is spent, accumulating
/// its iterates (module docs).
pub fn run_sg<M, K>(
    model: &M, kernel: K, start: &[f64], plan: &Plan, rng: &mut ChainRng,
) -> Result<Trace>
where
    M: Terms + ?Sized,
    K: Kernel<M>,
{
    let mut t = Tracker::new(model, plan);
    let mut chain = kernel.build_chain(model, start, rng)?;
    while !t.done() {
        let stats = chain.step(model, rng)?;
        t.accumulate(1.0, chain.position());
        t.cost += stats.evals().gradients;
        t.trace.steps += 1;
        t.trace.divergences += u64::from(stats.divergent());
        t.checkpoint(chain.position());
    }
    t.finish()
}
