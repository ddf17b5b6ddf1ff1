//! §4.1 and Supp. F of Pakman et al. (2017): the bias–cost trade-off of the band multiple k and
//! the minibatch size n, on the §7.1 posterior (d = 20, N = 1000).
//!
//! **Runs.** SBPS at k ∈ [`KS`] with n = 100, and at n ∈ [`NS`] with k = 3 (the k = 3, n = 100
//! run is shared), 2 chains each, started at the mode ŵ, warmup [`WARMUP_EVALS`] per-datum
//! evaluations per chain, then a budget per chain of 3·10⁴ epochs (quick) / 5·10⁵ (full) for
//! the k = 3, n = 100 run whose accuracy is the claim and 5,000 / 1.25·10⁵ epochs for the others
//! (equal cost, not equal trajectory time: a lower k or n buys more time per epoch). An epoch is
//! N = 1000 per-datum gradients; SBPS's minibatch evaluates a term and a gradient per datum, so
//! the driver's evaluation budget is 2N per epoch.
//!
//! **Measured** against the full-data HMC reference of [`Logistic`]: per
//! coordinate the mean error in posterior sds, e_j = (m_j − m_j^ref)/s_j^ref, its standard error
//! se_j = √(MCSE_j² + MCSE_ref,j²)/s_j^ref (batch-means MCSE of the time average), and the sd
//! ratio s_j/s_j^ref; the bound-violation rate (violations per second-stage proposal); cost
//! (epochs per unit time, proposals per velocity change) and ESS per epoch (smallest over
//! coordinates). The violation rate is set against P(Z > k), what it would be if the
//! regression's Gaussian model held.

use serde_json::{Value, json};
use tallmc_models::synthetic::SBPS_N;
use tallmc_samplers::continuous::{Budget, ContinuousRunConfig};
use tallmc_samplers::{Sbps, SbpsConfig};

use super::pdmp::{PdmpRun, RunOptions, run_pdmp};
use super::{Claim, Logistic, Part, Problems, chain_seed};
use crate::figure::{Axes, Figure, Legend, Line, Marker, RefLine};
use crate::report::{Report, fmt_sig};
use crate::{Context, Result};

/// Band multiples of the k sweep (n = 100).
pub const KS: [f64; 5] = [0.5, 1.0, 2.0, 3.0, 5.0];
/// Minibatch sizes of the n sweep (k = 3).
pub const NS: [usize; 4] = [10, 30, 100, 300];
/// Warmup per chain, per-datum evaluations.
pub const WARMUP_EVALS: u64 = 2_000_000;
/// Tolerance of the k = 3, n = 100 claim, in posterior sds.
pub const MEAN_TOLERANCE: f64 = 0.1;
/// Multiples of the standard error allowed by the statistical criteria.
pub const Z: f64 = 4.0;

/// One SBPS setting and what it measured.
#[derive(Debug, Clone)]
pub struct Setting {
    /// Band multiple k.
    pub k: f64,
    /// Minibatch size n.
    pub batch: usize,
    /// Mean error per coordinate, in posterior sds.
    pub err: Vec<f64>,
    /// Its standard error (SBPS and reference MCSE combined), in posterior sds.
    pub se: Vec<f64>,
    /// Sd ratio per coordinate.
    pub sd_ratio: Vec<f64>,
    /// Violations per second-stage proposal.
    pub violation_rate: f64,
    /// Second-stage proposals (all chains).
    pub proposals: u64,
    /// Epochs (N gradient evaluations) per unit of trajectory time.
    pub epochs_per_time: f64,
    /// Second-stage proposals per velocity change.
    pub proposals_per_event: f64,
    /// Smallest ESS over coordinates per epoch of sampling.
    pub min_ess_per_epoch: f64,
    /// Sampled trajectory time (all chains).
    pub time: f64,
    /// Sampling epochs (gradient evaluations / N, all chains).
    pub epochs: f64,
}

impl Setting {
    fn measure<T>(k: f64, batch: usize, run: &PdmpRun<T>, p: &Logistic) -> Self {
        let r = &p.reference;
        let n = tallmc_core::Terms::num_terms(&p.model);
        let s = &run.summaries;
        let t = run.totals();
        let epochs = run.epochs(n);
        Self {
            k,
            batch,
            err: s.iter().enumerate().map(|(j, x)| (x.mean - r.mean[j]) / r.sd[j]).collect(),
            se: s.iter().enumerate().map(|(j, x)| x.mcse_mean.hypot(r.mcse[j]) / r.sd[j]).collect(),
            sd_ratio: s.iter().enumerate().map(|(j, x)| x.sd / r.sd[j]).collect(),
            violation_rate: t.violation_rate(),
            proposals: t.proposals,
            epochs_per_time: run.epochs_per_time(n),
            proposals_per_event: t.proposals as f64 / t.events().max(1) as f64,
            min_ess_per_epoch: s.iter().map(|x| x.ess).fold(f64::INFINITY, f64::min) / epochs,
            time: run.time(),
            epochs,
        }
    }

    /// max_j |e_j|.
    pub fn max_abs_err(&self) -> f64 {
        self.err.iter().map(|e| e.abs()).fold(0.0, f64::max)
    }

    /// √(mean_j e_j²).
    pub fn rms_err(&self) -> f64 {
        (self.err.iter().map(|e| e * e).sum::<f64>() / self.err.len() as f64).sqrt()
    }

    /// max_j se_j (a bound on the standard error of the RMS error and of the max).
    pub fn max_se(&self) -> f64 {
        self.se.iter().copied().fold(0.0, f64::max)
    }

    /// max_j (|e_j| − [`Z`] se_j): the largest error not explained by Monte Carlo noise.
    pub fn excess(&self) -> f64 {
        self.err
            .iter()
            .zip(&self.se)
            .map(|(e, s)| e.abs() - Z * s)
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// (min, max) of the sd ratios.
    pub fn sd_ratio_range(&self) -> (f64, f64) {
        self.sd_ratio.iter().fold((f64::INFINITY, 0.0), |(a, b), &r| (a.min(r), b.max(r)))
    }

    /// P(Z > k): the violation rate if the regression's Gaussian model held.
    pub fn gaussian_tail(&self) -> f64 {
        1.0 - normal_cdf(self.k)
    }

    fn summary(&self) -> Value {
        let (lo, hi) = self.sd_ratio_range();
        json!({
            "k": self.k, "n": self.batch,
            "max_abs_mean_error_sd": self.max_abs_err(), "rms_mean_error_sd": self.rms_err(),
            "max_se_sd": self.max_se(), "excess_over_4se": self.excess(),
            "sd_ratio": {"min": lo, "max": hi},
            "violation_rate": self.violation_rate, "gaussian_tail": self.gaussian_tail(),
            "proposals": self.proposals, "proposals_per_event": self.proposals_per_event,
            "epochs_per_time": self.epochs_per_time, "min_ess_per_epoch": self.min_ess_per_epoch,
            "time": self.time, "epochs": self.epochs,
        })
    }
}

/// The standard normal CDF Φ(x) = erfc(−x/√2)/2.
fn normal_cdf(x: f64) -> f64 {
    0.5 * statrs::function::erf::erfc(-x / std::f64::consts::SQRT_2)
}

/// The trade-off.
#[derive(Debug)]
pub struct Tradeoff {
    /// Every setting: the k sweep (n = 100) in [`KS`] order, then n ∈ [`NS`] \ {100} (k = 3).
    pub runs: Vec<Setting>,
    /// Epochs per chain: the k = 3, n = 100 run, the others.
    pub budgets: (u64, u64),
}

impl Tradeoff {
    /// Runs every setting.
    pub fn compute(ctx: &Context<'_>, problems: &Problems<'_>) -> Result<Self> {
        let p = problems.logistic()?;
        let budgets = (ctx.mode.pick(30_000, 500_000), ctx.mode.pick(5_000, 125_000));
        let evals = |epochs: u64| 2 * epochs * SBPS_N as u64;
        let mut plan: Vec<(f64, usize)> = KS.iter().map(|&k| (k, 100)).collect();
        plan.extend(NS.iter().filter(|&&n| n != 100).map(|&n| (3.0, n)));
        let mut runs = Vec::with_capacity(plan.len());
        for (i, &(k, n)) in plan.iter().enumerate() {
            let main = k == 3.0 && n == 100;
            let config = ContinuousRunConfig {
                warmup: Budget::Evaluations(WARMUP_EVALS),
                sampling: Budget::Evaluations(evals(if main { budgets.0 } else { budgets.1 })),
                num_chains: 2,
                seed: chain_seed(ctx.seed, 30 + i as u64),
                ..ContinuousRunConfig::default()
            };
            let sbps = SbpsConfig { batch: n, k, ..SbpsConfig::default() };
            let run = run_pdmp(
                &p.model,
                config,
                std::slice::from_ref(&p.laplace.mode),
                &Sbps::new(sbps)?,
                &RunOptions::default(),
                ctx.reporter,
                &format!("sbps trade-off k = {k}, n = {n}"),
            )?;
            runs.push(Setting::measure(k, n, &run, p));
        }
        Ok(Self { runs, budgets })
    }

    /// The k = 3, n = 100 setting.
    pub fn main(&self) -> &Setting {
        self.runs.iter().find(|s| s.k == 3.0 && s.batch == 100).unwrap_or(&self.runs[0])
    }

    /// The n = 100 settings by increasing k.
    pub fn by_k(&self) -> Vec<&Setting> {
        let mut v: Vec<&Setting> = self.runs.iter().filter(|s| s.batch == 100).collect();
        v.sort_by(|a, b| a.k.total_cmp(&b.k));
        v
    }

    /// The k = 3 settings by increasing n.
    pub fn by_n(&self) -> Vec<&Setting> {
        let mut v: Vec<&Setting> = self.runs.iter().filter(|s| s.k == 3.0).collect();
        v.sort_by_key(|s| s.batch);
        v
    }

    fn setting(&self, k: f64, n: usize) -> Option<&Setting> {
        self.runs.iter().find(|s| s.k == k && s.batch == n)
    }
}

fn list(
    v: &[&Setting], label: impl Fn(&Setting) -> String, value: impl Fn(&Setting) -> String,
) -> String {
    v.iter().map(|s| format!("{} {}", label(s), value(s))).collect::<Vec<_>>().join(", ")
}

impl Part for Tradeoff {
    fn key(&self) -> &'static str {
        "tradeoff_k_n"
    }

    fn summary(&self) -> Value {
        json!({
            "problem": "sbps_logistic d = 20, N = 1000, prior N(0, 10^2 I); reference full-data HMC",
            "budget_epochs_per_chain": {"k3_n100": self.budgets.0, "others": self.budgets.1},
            "warmup_evals_per_chain": WARMUP_EVALS, "chains": 2,
            "runs": self.runs.iter().map(Setting::summary).collect::<Vec<_>>(),
        })
    }

    fn claims(&self) -> Vec<Claim> {
        let m = self.main();
        let worst = m
            .err
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
            .map_or(0, |x| x.0);
        let by_k = self.by_k();
        let rms_k = list(&by_k, |s| format!("k = {}:", s.k), |s| fmt_sig(s.rms_err(), 2));
        // Error grows as k falls: no significant decrease from one k to the next smaller, and a
        // significant increase from k = 3 to the smallest k.
        let mut monotone = true;
        for w in by_k.windows(2) {
            let (small, big) = (w[0], w[1]);
            monotone &= small.rms_err() > big.rms_err() - Z * small.max_se().hypot(big.max_se());
        }
        let smallest = by_k[0];
        let grows = smallest.rms_err() > m.rms_err() + Z * smallest.max_se().hypot(m.max_se());
        let viol = list(
            &by_k,
            |s| format!("k = {}:", s.k),
            |s| {
                format!(
                    "{} (P(Z > k) = {})",
                    fmt_sig(s.violation_rate, 2),
                    fmt_sig(s.gaussian_tail(), 2)
                )
            },
        );
        let viol_decreasing = by_k.windows(2).all(|w| w[0].violation_rate > w[1].violation_rate);
        let by_n = self.by_n();
        let err_n = list(
            &by_n,
            |s| format!("n = {}:", s.batch),
            |s| {
                format!(
                    "max |e| {} (violations {})",
                    fmt_sig(s.max_abs_err(), 2),
                    fmt_sig(s.violation_rate, 2)
                )
            },
        );
        let (n30, n300) = (self.setting(3.0, 30), self.setting(3.0, 300));
        let clt = match (n30, n300) {
            (Some(a), Some(b)) => {
                a.max_abs_err() - Z * a.max_se() > m.max_abs_err() + Z * m.max_se()
                    && b.excess() < MEAN_TOLERANCE
            }
            _ => false,
        };
        let insensitive =
            by_n.iter().filter(|s| s.batch >= 30).all(|s| s.excess() < MEAN_TOLERANCE);
        vec![
            Claim::new(
                "k3_n100_means_within_0.1_sd",
                "§7.1, Supp. F: with k = 3, n = 100 SBPS is accurate on the d = 20 logistic regression (read as: every posterior mean within 0.1 posterior sd)",
                format!(
                    "max |mean − reference| = {} sd (coordinate {}), largest standard error {} sd; sd ratios {}–{}; violation rate {}",
                    fmt_sig(m.max_abs_err(), 2),
                    worst + 1,
                    fmt_sig(m.max_se(), 2),
                    fmt_sig(m.sd_ratio_range().0, 3),
                    fmt_sig(m.sd_ratio_range().1, 3),
                    fmt_sig(m.violation_rate, 2)
                ),
                format!(
                    "max_j (|e_j| − {Z} se_j) < {MEAN_TOLERANCE}: measured {}",
                    fmt_sig(m.excess(), 2)
                ),
                m.excess() < MEAN_TOLERANCE,
            ),
            Claim::new(
                "error_grows_as_k_falls",
                "§4.1: k trades bias for cost — lower k, fewer proposals, more bias",
                format!(
                    "RMS mean error (sds) {rms_k}; epochs per unit time {}",
                    list(&by_k, |s| format!("k = {}:", s.k), |s| fmt_sig(s.epochs_per_time, 3))
                ),
                format!(
                    "no step down in k lowers the RMS error by more than {Z} se, and k = {} exceeds k = 3 by more than {Z} se",
                    smallest.k
                ),
                monotone && grows,
            ),
            Claim::new(
                "violation_rate_tracks_k",
                "§4.1: the bound-violation rate is the bias diagnostic; it rises as k falls",
                format!("violation rate {viol}"),
                "strictly decreasing in k",
                viol_decreasing,
            ),
            Claim::new(
                "n_large_enough_for_clt",
                "Supp. F, §7.1: n should be small but large enough for the CLT behind the band's Gaussian noise model; n = 100 worked well",
                err_n.clone(),
                format!(
                    "n = 30 worse than n = 100 by more than {Z} se of each, and n = 300 within {MEAN_TOLERANCE} sd (max_j(|e_j| − {Z} se_j))"
                ),
                clt,
            ),
            Claim::new(
                "results_insensitive_to_n",
                "§7.1: the results were not sensitively dependent on n",
                err_n,
                format!("every n ≥ 30 within {MEAN_TOLERANCE} sd (max_j(|e_j| − {Z} se_j))"),
                insensitive,
            ),
        ]
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        let panels =
            |sweep: &[&Setting], x: &dyn Fn(&Setting) -> f64, xlabel: &str, log_x: bool| {
                let xs: Vec<f64> = sweep.iter().map(|s| x(s)).collect();
                let pick =
                    |f: &dyn Fn(&Setting) -> f64| sweep.iter().map(|s| f(s)).collect::<Vec<f64>>();
                let mut err = Axes::new()
                    .with_title(format!("Posterior mean error against {xlabel}"))
                    .with_x_label(xlabel)
                    .with_y_label("error in posterior sds")
                    .with_log_y()
                    .with_legend(Legend::TopRight)
                    .with_series(
                        Line::new(&xs, &pick(&|s| s.max_abs_err()))
                            .with_marker(Marker::Circle)
                            .with_y_errors(&pick(&|s| s.max_se()))
                            .with_label("max_j |e_j|"),
                    )
                    .with_series(
                        Line::new(&xs, &pick(&|s| s.rms_err()))
                            .with_marker(Marker::Square)
                            .with_label("RMS_j e_j"),
                    )
                    .with_series(RefLine::horizontal(MEAN_TOLERANCE).with_label("0.1 sd"));
                let mut viol = Axes::new()
                    .with_title(format!("Bound-violation rate against {xlabel}"))
                    .with_x_label(xlabel)
                    .with_y_label("violations per proposal")
                    .with_log_y()
                    .with_series(
                        Line::new(&xs, &pick(&|s| s.violation_rate))
                            .with_marker(Marker::Circle)
                            .with_label("measured"),
                    )
                    .with_series(
                        Line::new(&xs, &pick(&|s| s.gaussian_tail()))
                            .with_dashes()
                            .with_label("P(Z > k)"),
                    );
                let mut sd = Axes::new()
                    .with_title(format!("Posterior sd ratio against {xlabel}"))
                    .with_x_label(xlabel)
                    .with_y_label("sd / reference sd")
                    .with_log_y()
                    .with_series(
                        Line::new(&xs, &pick(&|s| s.sd_ratio_range().1))
                            .with_marker(Marker::Triangle)
                            .with_label("largest"),
                    )
                    .with_series(
                        Line::new(&xs, &pick(&|s| s.sd_ratio_range().0))
                            .with_marker(Marker::Diamond)
                            .with_label("smallest"),
                    )
                    .with_series(RefLine::horizontal(1.0));
                if log_x {
                    err = err.with_log_x();
                    viol = viol.with_log_x();
                    sd = sd.with_log_x();
                }
                [err, viol, sd]
            };
        let mut fig = Figure::new()
            .with_title("SBPS on the §7.1 logistic regression (d = 20, N = 1000): bias and violations against k (n = 100) and n (k = 3)")
            .with_columns(3);
        for a in panels(&self.by_k(), &|s| s.k, "k", false) {
            fig.push(a);
        }
        for a in panels(&self.by_n(), &|s| s.batch as f64, "n", true) {
            fig.push(a);
        }
        vec![("tradeoff_k_n.svg", fig)]
    }

    fn report(&self, r: &mut Report) {
        r.section("The k / n trade-off (§4.1, Supp. F)");
        r.paragraph(&format!(
            "SBPS on the §7.1 posterior (d = 20, N = 1000, prior N(0, 10² I)) against full-data \
             HMC. 2 chains per setting from the mode, warmup {WARMUP_EVALS} evaluations per chain, \
             then {} (k = 3, n = 100) or {} (others) epochs per chain. e_j = (mean − reference) \
             / reference sd; se_j combines both MCSEs. Violation rate = violations per second-stage \
             proposal, beside P(Z > k) (its value if the band's Gaussian model held).",
            self.budgets.0, self.budgets.1
        ));
        r.table_of(
            &[
                "k",
                "n",
                "max |e|",
                "RMS e",
                "max se",
                "sd ratio",
                "violation rate",
                "P(Z > k)",
                "proposals / event",
                "epochs / time",
                "min ESS / epoch",
            ],
            self.runs.iter(),
            |s| {
                let (lo, hi) = s.sd_ratio_range();
                vec![
                    fmt_sig(s.k, 2),
                    s.batch.to_string(),
                    fmt_sig(s.max_abs_err(), 2),
                    fmt_sig(s.rms_err(), 2),
                    fmt_sig(s.max_se(), 2),
                    format!("{}–{}", fmt_sig(lo, 3), fmt_sig(hi, 3)),
                    fmt_sig(s.violation_rate, 2),
                    fmt_sig(s.gaussian_tail(), 2),
                    fmt_sig(s.proposals_per_event, 3),
                    fmt_sig(s.epochs_per_time, 3),
                    fmt_sig(s.min_ess_per_epoch, 2),
                ]
            },
        );
        r.image("Bias, violations and sd ratio against k and n", "tradeoff_k_n.svg");
    }
}
