//! Part (d), the paper's Figs. 7 and 8: approximate Gibbs sampling on the densely connected
//! binary MRF with three-way potentials.
//!
//! * Fig. 7: at (state, variable) pairs taken from an exact Gibbs chain and spread over the
//!   range of conditional probabilities, the probability P̂(x_i = 1 | x_−i) with which the
//!   Austerity update sets x_i = 1 ([`empirical_conditional`], many repetitions) against the
//!   exact conditional σ(S_i).
//! * Fig. 8: the average over random 5-variable subsets of the L1 distance between a chain's
//!   empirical marginal of the subset and the true one, against factor evaluations, for
//!   approximate Gibbs at each ε and exact Gibbs. The truth is a long exact Gibbs run.

use rand::RngExt;
use rayon::prelude::*;
use serde::Serialize;
use tallmc_bounds::{ExactTest, MeanTest};
use tallmc_core::BinaryFactors;
use tallmc_core::rng::{chain_rng, setup_rng};
use tallmc_models::ThreeWayMrf;
use tallmc_samplers::{ApproximateGibbs, GibbsConfig, GibbsStats, empirical_conditional};

use super::common::{
    ChainTotals, Checkpoints, austerity_test, index_pairs, log_grid, run_to_budget, run_until,
};
use crate::figure::{Axes, Color, Figure, Legend, Line, RefLine, Scatter};
use crate::{Context, Result, Task};

/// The ε of the paper's Figs. 7–8.
pub const EPSILONS: [f64; 6] = [0.01, 0.05, 0.1, 0.15, 0.2, 0.25];

/// Variables per subset of the accuracy measure (the paper's eq. 12).
pub const SUBSET_SIZE: usize = 5;

/// Streams: reference chains, Fig. 8 chains, Fig. 7 repetitions; the set-up RNG (subsets,
/// pairs, initial states) is `setup_rng(seed ^ SETUP_TAG)`.
const REFERENCE_STREAM: usize = 5000;
const CHAIN_STREAM: usize = 6000;
const CONDITIONAL_STREAM: usize = 50_000;
const SETUP_TAG: u64 = u64::from_le_bytes(*b"aust-mrf");

/// Checkpoints per curve and the decades they span.
const CHECKPOINTS: usize = 21;
const DECADES: f64 = 2.0;

/// Sizes of part (d).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GibbsSizes {
    /// Variables D.
    pub d: usize,
    /// Standard deviation of the log-potentials.
    pub log_potential_sd: f64,
    /// Seed of the field.
    pub mrf_seed: u64,
    /// Austerity mini-batch m (pairs of other variables per look).
    pub batch: usize,
    /// Exact reference chains.
    pub reference_chains: usize,
    /// Burn-in sweeps of each reference chain (not used).
    pub reference_burn_in: usize,
    /// Sweeps of each reference chain after burn-in.
    pub reference_sweeps: usize,
    /// States kept per reference chain as candidates for Fig. 7.
    pub kept_states: usize,
    /// Random 5-variable subsets of the accuracy measure.
    pub subsets: usize,
    /// Probability bins of width 1/bins for choosing Fig. 7's pairs.
    pub pair_bins: usize,
    /// Pairs per bin.
    pub pairs_per_bin: usize,
    /// Repetitions of each empirical conditional.
    pub reps: usize,
    /// Repetitions at ε = 0.01 (the smallest errors: more repetitions).
    pub reps_smallest_epsilon: usize,
    /// Chains per method in Fig. 8.
    pub chains: usize,
    /// Factor-evaluation budget per chain in Fig. 8.
    pub budget: u64,
}

/// One (state, variable) pair of Fig. 7.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConditionalPoint {
    /// Exact P(x_i = 1 | x_−i).
    pub exact: f64,
    /// The variable i.
    pub variable: usize,
    /// Empirical P̂(x_i = 1 | x_−i), one per ε.
    pub empirical: Vec<f64>,
    /// Mean fraction of the N_i factors used, one per ε.
    pub fraction_used: Vec<f64>,
}

/// Summary of Fig. 7 at one ε.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConditionalError {
    /// ε.
    pub epsilon: f64,
    /// Repetitions per pair.
    pub reps: usize,
    /// max over pairs of |P̂ − P|.
    pub max_abs_error: f64,
    /// The largest binomial sd √(P(1 − P)/reps) over the pairs (at the exact P).
    pub max_binomial_sd: f64,
    /// Mean of P̂ − P over pairs with P > 1/2.
    pub mean_error_above_half: f64,
    /// Its binomial sd √(Σ P(1 − P)/reps)/count.
    pub mean_error_above_half_sd: f64,
    /// Mean of P̂ − P over pairs with P < 1/2.
    pub mean_error_below_half: f64,
    /// Its binomial sd.
    pub mean_error_below_half_sd: f64,
    /// Mean fraction of the factors used per decision.
    pub fraction_used: f64,
}

/// One method's curve in Fig. 8.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JointCurve {
    /// ε, or `None` for exact Gibbs.
    pub epsilon: Option<f64>,
    /// Factor evaluations at each checkpoint (mean over chains).
    pub evals: Vec<f64>,
    /// Average L1 error over the subsets, mean over chains.
    pub l1: Vec<f64>,
    /// Sweeps per chain at the budget (mean).
    pub sweeps: f64,
    /// Mean fraction of the factors used per update.
    pub fraction_used: f64,
}

impl JointCurve {
    /// Label in figures and tables.
    pub fn label(&self) -> String {
        match self.epsilon {
            Some(e) => format!("ε = {e}"),
            None => "exact Gibbs".into(),
        }
    }
}

/// Part (d).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fig78 {
    /// Sizes.
    pub sizes: GibbsSizes,
    /// Factors per variable, N_i = (D − 1)(D − 2)/2.
    pub factors_per_variable: usize,
    /// Flip rate of the exact reference chains (updates that changed their variable).
    pub reference_flip_rate: f64,
    /// Bulk ESS of the number of ones, all reference chains together.
    pub reference_ess: f64,
    /// Rank R-hat of the number of ones over the reference chains.
    pub reference_rhat: f64,
    /// Average L1 distance between the first two reference chains' subset marginals (each
    /// chain's own error is about this / √2; the pooled truth's about this / √(2R)).
    pub reference_split_l1: f64,
    /// Estimated L1 error of the truth itself: `reference_split_l1` / √(2R).
    pub truth_l1_floor: f64,
    /// Fig. 7 pairs.
    pub points: Vec<ConditionalPoint>,
    /// Fig. 7 per ε.
    pub conditional_errors: Vec<ConditionalError>,
    /// Fig. 8 curves (exact first).
    pub curves: Vec<JointCurve>,
    /// Wall seconds: reference chains, Fig. 7, Fig. 8.
    pub wall_seconds: [f64; 3],
}

/// Counts of the 2^5 configurations of every subset, in the layout of
/// [`tallmc_models::mrf::empirical_marginal`]: entry c counts x_{vars\[m\]} = (c >> m) & 1.
#[derive(Debug, Clone)]
pub(crate) struct SubsetCounts {
    subsets: Vec<[usize; SUBSET_SIZE]>,
    counts: Vec<u64>,
    n: u64,
}

const CELLS: usize = 1 << SUBSET_SIZE;

impl SubsetCounts {
    pub(crate) fn new(subsets: &[[usize; SUBSET_SIZE]]) -> Self {
        Self { subsets: subsets.to_vec(), counts: vec![0; subsets.len() * CELLS], n: 0 }
    }

    pub(crate) fn add(&mut self, x: &[f64]) {
        for (m, s) in self.subsets.iter().enumerate() {
            let c = s.iter().enumerate().fold(0, |c, (k, &v)| c | (usize::from(x[v] >= 0.5) << k));
            self.counts[m * CELLS + c] += 1;
        }
        self.n += 1;
    }

    pub(crate) fn merge(&mut self, other: &Self) {
        self.counts.iter_mut().zip(&other.counts).for_each(|(a, b)| *a += b);
        self.n += other.n;
    }

    /// The empirical marginals, subset after subset (M × 32).
    pub(crate) fn marginals(&self) -> Vec<f64> {
        let n = self.n.max(1) as f64;
        self.counts.iter().map(|&c| c as f64 / n).collect()
    }

    /// Average over the subsets of Σ_c |empirical_c − truth_c|.
    pub(crate) fn mean_l1(&self, truth: &[f64]) -> f64 {
        let n = self.n.max(1) as f64;
        let total: f64 =
            self.counts.iter().zip(truth).map(|(&c, t)| (c as f64 / n - t).abs()).sum();
        total / self.subsets.len().max(1) as f64
    }
}

/// `m` random subsets of `SUBSET_SIZE` distinct variables among `d` (partial Fisher–Yates).
fn random_subsets(d: usize, m: usize, rng: &mut impl RngExt) -> Vec<[usize; SUBSET_SIZE]> {
    let mut perm: Vec<usize> = (0..d).collect();
    (0..m)
        .map(|_| {
            let mut s = [0; SUBSET_SIZE];
            for (k, slot) in s.iter_mut().enumerate() {
                let j = rng.random_range(k..d);
                perm.swap(k, j);
                *slot = perm[k];
            }
            s
        })
        .collect()
}

/// A uniformly random binary state.
fn random_state(d: usize, rng: &mut impl RngExt) -> Vec<f64> {
    (0..d).map(|_| if rng.random::<bool>() { 1.0 } else { 0.0 }).collect()
}

struct ReferenceChain {
    counts: SubsetCounts,
    kept: Vec<Vec<f64>>,
    ones: Vec<f64>,
    flips: u64,
    updates: u64,
}

struct GibbsChain {
    snapshots: Vec<(u64, f64)>,
    totals: ChainTotals,
    fraction_sum: f64,
}

/// What every Fig. 8 chain shares: the MRF, the budget of each chain, the checkpoint grid and
/// the subsets whose empirical conditionals are compared with `truth`.
struct GibbsJobs<'a> {
    mrf: &'a ThreeWayMrf,
    seed: u64,
    budget: u64,
    grid: &'a [f64],
    subsets: &'a [[usize; SUBSET_SIZE]],
    truth: &'a [f64],
    task: &'a dyn Task,
}

impl GibbsJobs<'_> {
    /// Runs one Gibbs chain with the mean test `test` from `init` on RNG stream `stream`.
    fn run<T: MeanTest + Clone + Send + Sync>(
        &self, test: T, init: &[f64], stream: usize,
    ) -> Result<GibbsChain> {
        let kernel = ApproximateGibbs::new(GibbsConfig::default(), test)?;
        let mut rng = chain_rng(self.seed, stream);
        let mut counts = SubsetCounts::new(self.subsets);
        let mut cps = Checkpoints::new(self.grid.to_vec());
        let mut snapshots = Vec::with_capacity(self.grid.len());
        let mut fraction_sum = 0.0;
        let totals = run_to_budget(
            self.mrf,
            &kernel,
            init,
            &mut rng,
            self.budget,
            self.task,
            |x, st, e| {
                counts.add(x);
                for _ in 0..cps.passed(e) {
                    snapshots.push((e, counts.mean_l1(self.truth)));
                }
                fraction_sum += st.mean_fraction_used;
            },
        )?;
        Ok(GibbsChain { snapshots, totals, fraction_sum })
    }
}

/// Runs part (d).
pub(crate) fn compute(sizes: GibbsSizes, ctx: &Context<'_>) -> Result<Fig78> {
    let s = sizes;
    let mrf = ThreeWayMrf::random(s.d, s.log_potential_sd, s.mrf_seed)?;
    let np = mrf.num_factors(0);
    let mut setup = setup_rng(ctx.seed ^ SETUP_TAG);
    let subsets = random_subsets(s.d, s.subsets, &mut setup);

    // Long exact reference chains from uniform random states.
    let ref_inits: Vec<Vec<f64>> =
        (0..s.reference_chains).map(|_| random_state(s.d, &mut setup)).collect();
    let sweeps = (s.reference_burn_in + s.reference_sweeps) as u64;
    let clock = std::time::Instant::now();
    let mut wall_seconds = [0.0; 3];
    let task = ctx.reporter.task(
        "austerity (d): exact Gibbs reference",
        s.reference_chains as u64 * sweeps * (s.d * np) as u64,
    );
    let keep_every = (s.reference_sweeps / s.kept_states.max(1)).max(1);
    let refs = (0..s.reference_chains)
        .into_par_iter()
        .map(|k| {
            let kernel = ApproximateGibbs::new(GibbsConfig::default(), ExactTest::new())?;
            let mut rng = chain_rng(ctx.seed, REFERENCE_STREAM + k);
            let mut r = ReferenceChain {
                counts: SubsetCounts::new(&subsets),
                kept: Vec::new(),
                ones: Vec::with_capacity(s.reference_sweeps),
                flips: 0,
                updates: 0,
            };
            let burn = s.reference_burn_in as u64;
            let mut sweep = 0u64;
            run_until(
                &mrf,
                &kernel,
                &ref_inits[k],
                &mut rng,
                sweeps,
                &*task,
                |t, _| t >= sweeps,
                |x, st: &GibbsStats, _| {
                    sweep += 1;
                    if sweep <= burn {
                        return;
                    }
                    r.counts.add(x);
                    r.ones.push(x.iter().sum());
                    r.flips += st.n_flips;
                    r.updates += st.n_updates;
                    if (sweep - burn).is_multiple_of(keep_every as u64)
                        && r.kept.len() < s.kept_states
                    {
                        r.kept.push(x.to_vec());
                    }
                },
            )?;
            Ok(r)
        })
        .collect::<Result<Vec<_>>>()?;
    drop(task);
    wall_seconds[0] = clock.elapsed().as_secs_f64();
    let mut pooled = SubsetCounts::new(&subsets);
    refs.iter().for_each(|r| pooled.merge(&r.counts));
    let truth = pooled.marginals();
    let ones: Vec<&[f64]> = refs.iter().map(|r| r.ones.as_slice()).collect();
    let reference_ess = tallmc_diagnostics::ess_bulk(&ones).unwrap_or(f64::NAN);
    let reference_rhat = tallmc_diagnostics::rhat(&ones).unwrap_or(f64::NAN);
    let reference_split_l1 = if refs.len() >= 2 {
        refs[0].counts.mean_l1(&refs[1].counts.marginals())
    } else {
        f64::NAN
    };
    let truth_l1_floor = reference_split_l1 / (2.0 * refs.len() as f64).sqrt();
    let flips: u64 = refs.iter().map(|r| r.flips).sum();
    let updates: u64 = refs.iter().map(|r| r.updates).sum();

    // Fig. 7: pairs spread over the probability range.
    let mut candidates: Vec<(usize, usize, usize, f64)> = Vec::new(); // (chain, state, i, p)
    for (c, r) in refs.iter().enumerate() {
        for (k, x) in r.kept.iter().enumerate() {
            for i in 0..s.d {
                candidates.push((c, k, i, mrf.exact_conditional(i, x)));
            }
        }
    }
    for j in (1..candidates.len()).rev() {
        let k = setup.random_range(0..=j);
        candidates.swap(j, k);
    }
    let bins = s.pair_bins.max(1);
    let mut taken = vec![0usize; bins];
    let mut pairs = Vec::new();
    for &(c, k, i, p) in &candidates {
        let b = ((p * bins as f64) as usize).min(bins - 1);
        if taken[b] < s.pairs_per_bin {
            taken[b] += 1;
            pairs.push((c, k, i, p));
        }
    }
    pairs.sort_by(|a, b| a.3.total_cmp(&b.3));
    let task = ctx.reporter.task(
        "austerity (d): empirical conditionals (Fig. 7)",
        (pairs.len() * ((EPSILONS.len() - 1) * s.reps + s.reps_smallest_epsilon)) as u64,
    );
    let reps = |e: usize| if e == 0 { s.reps_smallest_epsilon } else { s.reps };
    let jobs = index_pairs(pairs.len(), EPSILONS.len());
    let conditionals = jobs
        .par_iter()
        .map(|&(q, e)| {
            let (c, k, i, _) = pairs[q];
            let mut test = austerity_test(EPSILONS[e], s.batch)?;
            let mut rng = chain_rng(ctx.seed, CONDITIONAL_STREAM + q * 16 + e);
            let r = empirical_conditional(&mrf, &mut test, i, &refs[c].kept[k], reps(e), &mut rng)?;
            task.advance(reps(e) as u64);
            Ok(r)
        })
        .collect::<Result<Vec<_>>>()?;
    drop(task);
    let ne = EPSILONS.len();
    let points: Vec<ConditionalPoint> = pairs
        .iter()
        .enumerate()
        .map(|(q, &(_, _, i, p))| ConditionalPoint {
            exact: p,
            variable: i,
            empirical: (0..ne).map(|e| conditionals[q * ne + e].probability).collect(),
            fraction_used: (0..ne).map(|e| conditionals[q * ne + e].mean_fraction_used).collect(),
        })
        .collect();
    let conditional_errors = EPSILONS
        .iter()
        .enumerate()
        .map(|(e, &epsilon)| {
            let err = |pt: &ConditionalPoint| pt.empirical[e] - pt.exact;
            let mean_err = |f: &dyn Fn(f64) -> bool| {
                let sel: Vec<&ConditionalPoint> = points.iter().filter(|p| f(p.exact)).collect();
                let k = sel.len().max(1) as f64;
                let var: f64 = sel.iter().map(|p| p.exact * (1.0 - p.exact) / reps(e) as f64).sum();
                (sel.iter().map(|p| err(p)).sum::<f64>() / k, var.sqrt() / k)
            };
            let (above, above_sd) = mean_err(&|p| p > 0.5);
            let (below, below_sd) = mean_err(&|p| p < 0.5);
            ConditionalError {
                epsilon,
                reps: reps(e),
                max_abs_error: points.iter().map(|p| err(p).abs()).fold(0.0, f64::max),
                max_binomial_sd: points
                    .iter()
                    .map(|p| (p.exact * (1.0 - p.exact) / reps(e) as f64).sqrt())
                    .fold(0.0, f64::max),
                mean_error_above_half: above,
                mean_error_above_half_sd: above_sd,
                mean_error_below_half: below,
                mean_error_below_half_sd: below_sd,
                fraction_used: points.iter().map(|p| p.fraction_used[e]).sum::<f64>()
                    / points.len().max(1) as f64,
            }
        })
        .collect();

    wall_seconds[1] = clock.elapsed().as_secs_f64() - wall_seconds[0];

    // Fig. 8: exact Gibbs and approximate Gibbs at every ε, from random states.
    let methods: Vec<Option<f64>> =
        std::iter::once(None).chain(EPSILONS.iter().map(|&e| Some(e))).collect();
    let inits: Vec<Vec<f64>> = (0..s.chains).map(|_| random_state(s.d, &mut setup)).collect();
    let grid = log_grid(s.budget as f64, DECADES, CHECKPOINTS);
    let task = ctx
        .reporter
        .task("austerity (d): Gibbs chains (Fig. 8)", (methods.len() * s.chains) as u64 * s.budget);
    let gibbs = GibbsJobs {
        mrf: &mrf,
        seed: ctx.seed,
        budget: s.budget,
        grid: &grid,
        subsets: &subsets,
        truth: &truth,
        task: &*task,
    };
    let jobs = index_pairs(methods.len(), s.chains);
    let chains = jobs
        .par_iter()
        .map(|&(m, k)| {
            let (init, stream) = (&inits[k], CHAIN_STREAM + 100 * m + k);
            match methods[m] {
                None => gibbs.run(ExactTest::new(), init, stream),
                Some(eps) => gibbs.run(austerity_test(eps, s.batch)?, init, stream),
            }
        })
        .collect::<Result<Vec<_>>>()?;
    drop(task);
    wall_seconds[2] = clock.elapsed().as_secs_f64() - wall_seconds[0] - wall_seconds[1];
    let c = s.chains as f64;
    let curves = methods
        .iter()
        .enumerate()
        .map(|(m, &epsilon)| {
            let mine = &chains[m * s.chains..(m + 1) * s.chains];
            let points = mine.iter().map(|r| r.snapshots.len()).min().unwrap_or(0);
            let sweeps: u64 = mine.iter().map(|r| r.totals.steps).sum();
            JointCurve {
                epsilon,
                evals: (0..points)
                    .map(|j| mine.iter().map(|r| r.snapshots[j].0 as f64).sum::<f64>() / c)
                    .collect(),
                l1: (0..points)
                    .map(|j| mine.iter().map(|r| r.snapshots[j].1).sum::<f64>() / c)
                    .collect(),
                sweeps: sweeps as f64 / c,
                fraction_used: mine.iter().map(|r| r.fraction_sum).sum::<f64>() / sweeps as f64,
            }
        })
        .collect();
    Ok(Fig78 {
        sizes,
        factors_per_variable: np,
        reference_flip_rate: flips as f64 / updates.max(1) as f64,
        reference_ess,
        reference_rhat,
        reference_split_l1,
        truth_l1_floor,
        points,
        conditional_errors,
        curves,
        wall_seconds,
    })
}

impl Fig78 {
    /// Fig. 7's summary at `epsilon`, if measured.
    pub fn conditional_error(&self, epsilon: f64) -> Option<&ConditionalError> {
        self.conditional_errors.iter().find(|c| c.epsilon == epsilon)
    }

    /// Fig. 8's curve of `epsilon` (`None`: exact Gibbs).
    pub fn curve(&self, epsilon: Option<f64>) -> Option<&JointCurve> {
        self.curves.iter().find(|c| c.epsilon == epsilon)
    }

    /// Fig. 7: empirical against exact conditionals, and their difference.
    pub fn figure_conditionals(&self) -> Figure {
        let exact: Vec<f64> = self.points.iter().map(|p| p.exact).collect();
        let mut scatter = Axes::new()
            .with_title(format!(
                "Fig. 7: conditionals at {} (state, variable) pairs, D = {}, m = {}",
                self.points.len(),
                self.sizes.d,
                self.sizes.batch
            ))
            .with_x_label("true conditional probability")
            .with_y_label("empirical conditional probability")
            .with_legend(Legend::TopLeft)
            .with_series(RefLine::identity().with_color(Color::BLACK).with_label("exact Gibbs"));
        let mut diff = Axes::new()
            .with_title("Empirical − true (error bars: 2 binomial sd)")
            .with_x_label("true conditional probability")
            .with_y_label("empirical − true")
            .with_legend(Legend::TopRight)
            .with_series(RefLine::horizontal(0.0).with_color(Color::BLACK));
        for (e, eps) in EPSILONS.iter().enumerate() {
            let reps = self.conditional_errors.get(e).map_or(self.sizes.reps, |c| c.reps);
            let sd: Vec<f64> =
                exact.iter().map(|p| 2.0 * (p * (1.0 - p) / reps as f64).sqrt()).collect();
            let emp: Vec<f64> = self.points.iter().map(|p| p.empirical[e]).collect();
            let err: Vec<f64> = emp.iter().zip(&exact).map(|(a, b)| a - b).collect();
            scatter.push(Line::new(&exact, &emp).with_label(format!("ε = {eps}")));
            diff.push(
                Scatter::new(&exact, &err).with_y_errors(&sd).with_label(format!("ε = {eps}")),
            );
        }
        Figure::new().with_columns(2).with_panel(scatter).with_panel(diff)
    }

    /// Fig. 8: average L1 error of 5-variable marginals against factor evaluations.
    pub fn figure_joint(&self) -> Figure {
        let mut ax = Axes::new()
            .with_title(format!(
                "Fig. 8: MRF D = {}, {} random 5-variable subsets, {} chains per method",
                self.sizes.d, self.sizes.subsets, self.sizes.chains
            ))
            .with_log_x()
            .with_log_y()
            .with_x_range(
                self.sizes.budget as f64 / 10f64.powf(DECADES + 1.0),
                self.sizes.budget as f64 * 1.5,
            )
            .with_x_label("factor evaluations per chain")
            .with_y_label("average L1 error of the 5-variable marginals")
            .with_legend(Legend::BottomLeft);
        for c in &self.curves {
            let line = Line::new(&c.evals, &c.l1).with_label(c.label());
            ax.push(if c.epsilon.is_none() {
                line.with_color(Color::BLACK).with_width(2.5)
            } else {
                line
            });
        }
        ax.push(
            RefLine::horizontal(self.truth_l1_floor)
                .with_color(Color::GREY)
                .with_label("error of the truth itself (est.)"),
        );
        Figure::new().with_panel(ax)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tallmc_models::mrf::empirical_marginal;

    #[test]
    fn subset_counts_match_empirical_marginal() {
        let mut rng = setup_rng(3);
        let draws: Vec<Vec<f64>> = (0..200).map(|_| random_state(9, &mut rng)).collect();
        let subsets = random_subsets(9, 7, &mut rng);
        let mut counts = SubsetCounts::new(&subsets);
        draws.iter().for_each(|x| counts.add(x));
        let m = counts.marginals();
        for (k, s) in subsets.iter().enumerate() {
            let mut sorted = s.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), SUBSET_SIZE, "distinct variables");
            let e = empirical_marginal(draws.iter().map(|x| x.as_slice()), s).unwrap();
            assert_eq!(&m[k * CELLS..(k + 1) * CELLS], e.as_slice());
        }
        assert_eq!(counts.mean_l1(&m), 0.0);
    }
}
