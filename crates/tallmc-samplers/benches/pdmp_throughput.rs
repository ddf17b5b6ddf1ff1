//! The subsampling PDMP kernels against perturbed HMC-ECS on the higgs-like logistic regression
//! (d = 29, `tallmc_models::synthetic::higgs_like`, prior N(0, 10² I)), single thread, one run:
//!
//! * **ZZ-CV** — Zig-Zag with control variates at the mode ([`ZigZagSubsampling`] with
//!   [`ControlVariates::rank_one`]), exact;
//! * **ZZ-Taylor** — the same Zig-Zag with Taylor control variates of order two, data drawn in
//!   proportion to their remainder bounds, in the coordinates whitened by the Laplace
//!   approximation ([`TaylorControlVariates`]), exact; its grid Δ is 1 in whitened
//!   coordinates (one posterior sd of travel, as the median sd is for the others), and its
//!   set-up pass (made once, before the chain) is timed and counted as its `init`;
//! * **SBPS** — the Stochastic Bouncy Particle Sampler, k = 3, minibatch n = 100, refresh
//!   0.05/Δ, N(0, I) velocities, first band horizon Δ (the CLI's `sample sbps` defaults),
//!   approximate;
//! * the baseline **HMC-ECS** — perturbed, with the CLI's default tuning (`sample hmc-ecs`:
//!   m tuned for V[ℓ̂] ≤ 1 at θ*, G = 100 blocks, order-2 control variates at the mode,
//!   εL = 1.2, dual averaging to 0.8, re-centring during warmup), 1,000 warmup iterations.
//!
//! Every chain starts at the posterior mode (Newton, timed once as the shared set-up). The PDMPs
//! are discretized on the CLI's default grid Δ = the median Laplace posterior sd (coordinates
//! move at speed ~1, so Δ is about one posterior width of travel): D grid draws x(kΔ),
//! k = 1..D, after a warmup of W·Δ. ESS = bulk ESS (`tallmc_diagnostics::ess_bulk`) of the grid
//! draws (HMC-ECS: of its draws), min over the 29 coordinates.
//!
//! Reported, for the sampling phase only: events (velocity changes) per second, per-datum
//! gradient evaluations per effective sample (and all per-datum evaluations: terms, gradients,
//! Hessians), seconds per effective sample, each **as a ratio to HMC-ECS measured in the same
//! run on the same data** (for events/s: to HMC-ECS's iterations/s). Set-up — the kernels'
//! `init` (ZZ-CV: the control-variate pass; HMC-ECS: control variates and the tuning of m) — is
//! reported separately, with its evaluations (the set-up pass is reported with a kernel's first
//! step, so these include that one step).
//!
//! Run: `cargo bench -p tallmc-samplers --bench pdmp_throughput [-- --n 100000] [-- --quick]`
//! (default n = 10⁶; `--quick` is n = 10⁵ with shorter runs); see `docs/benchmarks.md`. Fixed
//! seeds; data built (on all cores) outside the timed parts; everything timed runs in a
//! one-thread rayon pool.

#![allow(clippy::print_stdout, clippy::print_stderr, missing_docs)]

/// `writeln!` into the report string (writing to a `String` cannot fail).
macro_rules! w {
    ($m:expr, $($t:tt)*) => {{
        let _ = writeln!($m, $($t)*);
    }};
}

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use tallmc_core::rng::chain_rng;
use tallmc_core::{
    Chain, EvalCounts, EventTotals, Kernel, PdmpChain, PdmpKernel, StepStats, Terms, WhiteningFrame,
};
use tallmc_estimators::RankOne;
use tallmc_models::{DesignOptions, LogisticRegression, synthetic};
use tallmc_samplers::{
    BandConfig, ControlVariates, HmcEcs, HmcEcsConfig, NewtonOptions, Sbps, SbpsConfig,
    TaylorControlVariates, VelocityDistribution, ZigZagSubsampling, laplace_approximation,
};

/// Seed of the data (`higgs_like(n, DATA_SEED)`).
const DATA_SEED: u64 = 1;
/// Master seed of the chains (chain 0's stream of each kernel).
const CHAIN_SEED: u64 = 1;

/// Settings of one benchmark run.
#[derive(Debug, Clone)]
struct Options {
    n: usize,
    /// PDMP warmup, in grid steps Δ.
    pdmp_warmup: usize,
    /// PDMP grid draws.
    pdmp_draws: usize,
    /// HMC-ECS warmup iterations (the CLI's default 1,000).
    ecs_warmup: usize,
    /// HMC-ECS draws.
    ecs_draws: usize,
    /// Also write the report (markdown) here.
    out: Option<PathBuf>,
    /// The PDMP kernels to run (HMC-ECS, the baseline, always runs).
    pdmps: Vec<String>,
}

/// Every PDMP kernel of the benchmark, in report order.
const PDMPS: [&str; 3] = ["zz-cv", "zz-taylor", "sbps"];

impl Options {
    fn parse() -> Result<Self, String> {
        let mut o = Self {
            n: 1_000_000,
            pdmp_warmup: 100,
            pdmp_draws: 2_000,
            ecs_warmup: 1_000,
            ecs_draws: 5_000,
            out: None,
            pdmps: PDMPS.iter().map(|s| s.to_string()).collect(),
        };
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            let mut value = |name: &str| -> Result<usize, String> {
                let v = args.next().ok_or(format!("{name} needs a value"))?;
                v.replace('_', "").parse().map_err(|e| format!("{name} {v}: {e}"))
            };
            match a.as_str() {
                "--bench" => {}
                "--quick" => {
                    o.n = 100_000;
                    o.pdmp_draws = 1_000;
                    o.ecs_draws = 2_000;
                }
                "--n" => o.n = value("--n")?,
                "--draws" => o.pdmp_draws = value("--draws")?,
                "--warmup" => o.pdmp_warmup = value("--warmup")?,
                "--ecs-draws" => o.ecs_draws = value("--ecs-draws")?,
                "--ecs-warmup" => o.ecs_warmup = value("--ecs-warmup")?,
                "--out" => o.out = Some(args.next().ok_or("--out needs a path")?.into()),
                "--pdmps" => {
                    let list = args.next().ok_or("--pdmps needs a list")?;
                    o.pdmps = list.split(',').map(|s| s.trim().to_string()).collect();
                    if let Some(bad) = o.pdmps.iter().find(|p| !PDMPS.contains(&p.as_str())) {
                        return Err(format!(
                            "--pdmps: unknown kernel {bad}; expected some of {PDMPS:?}"
                        ));
                    }
                }
                other => {
                    return Err(format!(
                        "unknown argument {other}; expected --n N, --quick, --draws D, \
                         --warmup W, --ecs-draws D, --ecs-warmup W, --out FILE, --pdmps zz-cv,zz-taylor,sbps"
                    ));
                }
            }
        }
        if o.pdmp_draws < 4 || o.ecs_draws < 4 {
            return Err("--draws and --ecs-draws: at least 4 (for the ESS)".into());
        }
        Ok(o)
    }
}

/// What one method did.
#[derive(Debug, Clone)]
struct Row {
    name: String,
    /// `init`: seconds and evaluations (with the first step's).
    setup_s: f64,
    setup_evals: EvalCounts,
    warmup_s: f64,
    warmup_evals: EvalCounts,
    sampling_s: f64,
    sampling_evals: EvalCounts,
    /// Velocity changes (PDMPs) or iterations (HMC-ECS).
    events: u64,
    /// Thinning proposals (PDMPs) or leapfrog steps (HMC-ECS).
    proposals: u64,
    violations: u64,
    draws: usize,
    /// Per-coordinate draws (column-major).
    columns: Vec<Vec<f64>>,
    ess_min: f64,
    ess_median: f64,
    /// Trajectory time of sampling (PDMPs).
    time: f64,
    notes: String,
}

impl Row {
    fn finish_ess(&mut self) {
        let mut ess: Vec<f64> = self
            .columns
            .iter()
            .map(|c| tallmc_diagnostics::ess_bulk(&[c.as_slice()]).unwrap_or(f64::NAN))
            .collect();
        ess.sort_by(f64::total_cmp);
        self.ess_min = ess[0];
        self.ess_median = ess[ess.len() / 2];
    }

    fn means(&self) -> Vec<f64> {
        self.columns.iter().map(|c| c.iter().sum::<f64>() / c.len() as f64).collect()
    }

    fn sds(&self) -> Vec<f64> {
        self.columns
            .iter()
            .map(|c| {
                let m = c.iter().sum::<f64>() / c.len() as f64;
                (c.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (c.len() - 1) as f64).sqrt()
            })
            .collect()
    }
}

/// Runs perturbed HMC-ECS as `tallmc sample hmc-ecs --init mode` does.
fn run_hmc_ecs(model: &LogisticRegression, mode: &[f64], o: &Options) -> Result<Row, String> {
    let err = |e: tallmc_core::Error| format!("HMC-ECS: {e}");
    let config = HmcEcsConfig { center: Some(mode.to_vec()), ..HmcEcsConfig::default() };
    let kernel = HmcEcs::with_engine(config, RankOne::with_lanes(1, 1)).map_err(err)?;
    let mut rng = chain_rng(CHAIN_SEED, 0);
    let t = Instant::now();
    let mut chain = kernel.build_chain(model, mode, &mut rng).map_err(err)?;
    let setup_s = t.elapsed().as_secs_f64();
    let mut setup_evals = EvalCounts::ZERO;
    let mut warmup_evals = EvalCounts::ZERO;
    let t = Instant::now();
    Chain::<LogisticRegression>::begin_warmup(&mut chain, o.ecs_warmup);
    for i in 0..o.ecs_warmup {
        let s = chain.step(model, &mut rng).map_err(err)?;
        if i == 0 {
            setup_evals = s.evals();
        } else {
            warmup_evals += s.evals();
        }
        chain.adapt(model, &s, &mut rng).map_err(err)?;
    }
    Chain::<LogisticRegression>::end_warmup(&mut chain);
    let warmup_s = t.elapsed().as_secs_f64();
    let d = model.dim();
    let mut columns = vec![Vec::with_capacity(o.ecs_draws); d];
    let (mut evals, mut leapfrog, mut divergent) = (EvalCounts::ZERO, 0u64, 0u64);
    let t = Instant::now();
    for _ in 0..o.ecs_draws {
        let s = chain.step(model, &mut rng).map_err(err)?;
        evals += s.evals();
        leapfrog += s.n_leapfrog as u64;
        divergent += u64::from(s.divergent);
        for (c, x) in columns.iter_mut().zip(Chain::<LogisticRegression>::position(&chain)) {
            c.push(*x);
        }
    }
    let sampling_s = t.elapsed().as_secs_f64();
    let tuning = Chain::<LogisticRegression>::tuning(&chain);
    let mut row = Row {
        name: "hmc-ecs".into(),
        setup_s,
        setup_evals,
        warmup_s,
        warmup_evals,
        sampling_s,
        sampling_evals: evals,
        events: o.ecs_draws as u64,
        proposals: leapfrog,
        violations: divergent,
        draws: o.ecs_draws,
        columns,
        ess_min: f64::NAN,
        ess_median: f64::NAN,
        time: f64::NAN,
        notes: format!(
            "Subsample size m = {}; Step size = {}; Re-centrings of theta* during warmup = {}",
            tuning.estimator.subsample_size, tuning.step_size, tuning.recenterings
        ),
    };
    row.finish_ess();
    Ok(row)
}

/// Runs a PDMP kernel from the mode: warmup of `o.pdmp_warmup`·Δ of trajectory time (the step
/// that crosses it ends warmup), then `o.pdmp_draws` grid draws x(kΔ) on a sampling clock that
/// starts at 0 (the driver's discretization, `GridDraws`).
fn run_pdmp<K>(
    name: &str, model: &LogisticRegression, kernel: K, mode: &[f64], grid: f64, o: &Options,
) -> Result<Row, String>
where
    K: PdmpKernel<LogisticRegression>,
{
    let err = |e: tallmc_core::Error| format!("{name}: {e}");
    let mut rng = chain_rng(CHAIN_SEED, 0);
    let t = Instant::now();
    let mut chain = kernel.build_chain(model, mode, &mut rng).map_err(err)?;
    let setup_s = t.elapsed().as_secs_f64();
    let mut warm = EventTotals::default();
    let mut setup_evals = EvalCounts::ZERO;
    let t = Instant::now();
    chain.begin_warmup();
    let (warmup_time, mut travelled, mut first) = (o.pdmp_warmup as f64 * grid, 0.0, true);
    while travelled < warmup_time {
        let s = chain.step(model, &mut rng).map_err(err)?;
        if first {
            setup_evals = s.evals;
            warm.add(&tallmc_core::SegmentStats { evals: EvalCounts::ZERO, ..s });
            first = false;
        } else {
            warm.add(&s);
        }
        travelled += chain.trajectory().last_segment().duration;
        chain.adapt(model, &s, &mut rng).map_err(err)?;
    }
    chain.end_warmup();
    let warmup_s = t.elapsed().as_secs_f64();
    let d = model.dim();
    let mut columns = vec![Vec::with_capacity(o.pdmp_draws); d];
    let mut samp = EventTotals::default();
    let (mut clock, mut k) = (0.0f64, 0usize);
    let mut x = vec![0.0; d];
    let t = Instant::now();
    while k < o.pdmp_draws {
        let s = chain.step(model, &mut rng).map_err(err)?;
        samp.add(&s);
        let seg = chain.trajectory().last_segment();
        let end = clock + seg.duration;
        // Grid times (k + 1)Δ inside this segment.
        while k < o.pdmp_draws && (k + 1) as f64 * grid <= end {
            seg.position_after((k + 1) as f64 * grid - clock, &mut x);
            for (c, xi) in columns.iter_mut().zip(&x) {
                c.push(*xi);
            }
            k += 1;
        }
        clock = end;
    }
    let sampling_s = t.elapsed().as_secs_f64();
    if samp.divergences > 0 {
        eprintln!("{name}: {} divergences while sampling", samp.divergences);
    }
    let mut row = Row {
        name: name.into(),
        setup_s,
        setup_evals,
        warmup_s,
        warmup_evals: warm.evals,
        sampling_s,
        sampling_evals: samp.evals,
        events: samp.events(),
        proposals: samp.proposals,
        violations: samp.violations,
        draws: o.pdmp_draws,
        columns,
        ess_min: f64::NAN,
        ess_median: f64::NAN,
        time: clock,
        notes: String::new(),
    };
    row.finish_ess();
    Ok(row)
}

fn ratio(a: f64, b: f64) -> String {
    let r = a / b;
    if r >= 100.0 { format!("{r:.0}×") } else { format!("{r:.2}×") }
}

fn sci(x: f64) -> String {
    if x.abs() >= 1e5 { format!("{x:.3e}") } else { format!("{x:.1}") }
}

fn main() {
    let o = match Options::parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("pdmp_throughput: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&o) {
        eprintln!("pdmp_throughput: {e}");
        std::process::exit(1);
    }
}

fn run(o: &Options) -> Result<(), String> {
    let n = o.n;
    let t = Instant::now();
    let sim = synthetic::higgs_like(n, DATA_SEED).map_err(|e| e.to_string())?;
    let model =
        LogisticRegression::new(sim.data, DesignOptions::default(), synthetic::HIGGS_LIKE_PRIOR_SD)
            .map_err(|e| e.to_string())?;
    eprintln!(
        "data: higgs_like({n}, {DATA_SEED}) in {:.1} s (all cores)",
        t.elapsed().as_secs_f64()
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| format!("cannot build a one-thread pool: {e}"))?;
    pool.install(|| run_single_thread(&model, o))
}

fn run_single_thread(model: &LogisticRegression, o: &Options) -> Result<(), String> {
    let mut m = String::new();
    let n = o.n;
    let d = model.dim();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = load.split_whitespace().take(3).collect::<Vec<_>>().join(" ");

    // Shared set-up: the mode and the Laplace approximation (Newton), as the CLI does.
    let t = Instant::now();
    let laplace = laplace_approximation(model, &vec![0.0; d], NewtonOptions::default())
        .map_err(|e| format!("Newton: {e}"))?;
    let newton_s = t.elapsed().as_secs_f64();
    let mode = laplace.mode.clone();
    let laplace_sd = laplace.sds();
    let mut sorted = laplace_sd.clone();
    sorted.sort_by(f64::total_cmp);
    let grid = sorted[d / 2];

    eprintln!("HMC-ECS ...");
    let ecs = run_hmc_ecs(model, &mode, o)?;
    eprintln!("  {:.2} s sampling, min ESS {:.0}", ecs.sampling_s, ecs.ess_min);
    let mut rows = vec![ecs];
    let wanted = |name: &str| o.pdmps.iter().any(|p| p == name);
    if wanted("zz-cv") {
        eprintln!("ZZ-CV ...");
        let zz = ZigZagSubsampling::with_estimator(
            ControlVariates::rank_one(mode.clone()).map_err(|e| e.to_string())?,
        );
        let zzcv = run_pdmp("zz-cv", model, zz, &mode, grid, o)?;
        eprintln!("  {:.2} s sampling, min ESS {:.0}", zzcv.sampling_s, zzcv.ess_min);
        rows.push(zzcv);
    }
    if wanted("zz-taylor") {
        eprintln!("ZZ-Taylor ...");
        let t = Instant::now();
        let frame =
            WhiteningFrame::new(mode.clone(), &laplace.covariance).map_err(|e| e.to_string())?;
        let taylor = TaylorControlVariates::new(model, frame).map_err(|e| e.to_string())?;
        let (taylor_setup_s, taylor_setup) = (t.elapsed().as_secs_f64(), taylor.setup_evals());
        let zz = ZigZagSubsampling::with_estimator(taylor);
        let mut zzt = run_pdmp("zz-taylor", model, zz, &mode, 1.0, o)?;
        zzt.setup_s += taylor_setup_s;
        zzt.setup_evals += taylor_setup;
        zzt.notes = format!(
            "{:.2} proposals per flip; grid Δ = 1 in whitened coordinates",
            zzt.proposals as f64 / zzt.events.max(1) as f64
        );
        eprintln!("  {:.2} s sampling, min ESS {:.0}", zzt.sampling_s, zzt.ess_min);
        rows.push(zzt);
    }
    if wanted("sbps") {
        eprintln!("SBPS ...");
        let config = SbpsConfig {
            batch: 100.min(n),
            k: 3.0,
            refresh_rate: 0.05 / grid,
            band: BandConfig { initial_horizon: grid, ..BandConfig::default() },
            velocity: VelocityDistribution::Gaussian,
            ..SbpsConfig::default()
        };
        let sbps_kernel = Sbps::new(config).map_err(|e| e.to_string())?;
        let mut sbps = run_pdmp("sbps", model, sbps_kernel, &mode, grid, o)?;
        sbps.notes =
            format!("violation rate {:.4}", sbps.violations as f64 / sbps.proposals.max(1) as f64);
        eprintln!("  {:.2} s sampling, min ESS {:.0}", sbps.sampling_s, sbps.ess_min);
        rows.push(sbps);
    }
    let load_after = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load_after = load_after.split_whitespace().take(3).collect::<Vec<_>>().join(" ");

    let tag =
        |m: &str, draws: usize| format!("pdmp_throughput/higgs_like/d={d}/n={n}/{m}/draws={draws}");
    w!(
        m,
        "\n## PDMP kernels vs perturbed HMC-ECS — higgs-like logistic regression, d = {d}, n = {n}\n"
    );
    w!(
        m,
        "Single thread (one-thread rayon pool); data seed {DATA_SEED}, chain seed {CHAIN_SEED}; \
         load average (1/5/15 min) before: {load}, after: {load_after}."
    );
    w!(
        m,
        "Every chain starts at the mode. PDMP grid Δ = median Laplace sd = {grid:.4e}, warmup \
         {}·Δ, {} grid draws (trajectory time {:.4}); HMC-ECS {} warmup + {} draws.\n",
        o.pdmp_warmup,
        o.pdmp_draws,
        o.pdmp_draws as f64 * grid,
        o.ecs_warmup,
        o.ecs_draws
    );
    w!(m, "### Set-up (not in the sampling figures)\n");
    w!(m, "| step | seconds | per-datum evaluations / n (terms + gradients + Hessians) |");
    w!(m, "|---|---:|---|");
    w!(
        m,
        "| mode + Laplace (Newton, {} iterations; shared) | {newton_s:.2} | {:.1} ({} + {} + {}) / n |",
        laplace.iterations,
        laplace.evals.total() as f64 / n as f64,
        laplace.evals.terms,
        laplace.evals.gradients,
        laplace.evals.hessians
    );
    for r in &rows {
        let e = r.setup_evals;
        w!(
            m,
            "| {} init (incl. first step's evaluations) | {:.3} | {:.2} ({} + {} + {}) / n |",
            r.name,
            r.setup_s,
            e.total() as f64 / n as f64,
            e.terms,
            e.gradients,
            e.hessians
        );
    }
    for r in &rows {
        w!(
            m,
            "| {} warmup | {:.3} | {:.2} / n |",
            r.name,
            r.warmup_s,
            r.warmup_evals.total() as f64 / n as f64
        );
    }

    w!(m, "\n### Sampling phase\n");
    w!(
        m,
        "| benchmark | seconds | draws | min ESS (median) | events/s | ×HMC-ECS it/s | grad evals / ESS | ×HMC-ECS | all evals / ESS | ×HMC-ECS | ms / ESS | ×HMC-ECS | evals/s | ×HMC-ECS |"
    );
    w!(m, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let base = &rows[0];
    let grad_per_ess = |r: &Row| r.sampling_evals.gradients as f64 / r.ess_min;
    let all_per_ess = |r: &Row| r.sampling_evals.total() as f64 / r.ess_min;
    let s_per_ess = |r: &Row| r.sampling_s / r.ess_min;
    let evals_per_s = |r: &Row| r.sampling_evals.total() as f64 / r.sampling_s;
    let rate = |r: &Row| r.events as f64 / r.sampling_s;
    for r in &rows {
        w!(
            m,
            "| {} | {:.2} | {} | {:.0} ({:.0}) | {} | {} | {} | {} | {} | {} | {:.3} | {} | {} | {} |",
            tag(&r.name, r.draws),
            r.sampling_s,
            r.draws,
            r.ess_min,
            r.ess_median,
            sci(rate(r)),
            ratio(rate(r), rate(base)),
            sci(grad_per_ess(r)),
            ratio(grad_per_ess(r), grad_per_ess(base)),
            sci(all_per_ess(r)),
            ratio(all_per_ess(r), all_per_ess(base)),
            1e3 * s_per_ess(r),
            ratio(s_per_ess(r), s_per_ess(base)),
            sci(evals_per_s(r)),
            ratio(evals_per_s(r), evals_per_s(base)),
        );
    }

    w!(m, "\n### Per method\n");
    w!(
        m,
        "| method | events (HMC-ECS: iterations) | proposals (HMC-ECS: leapfrog steps) | violations (HMC-ECS: divergences) | evals / event (terms + gradients + Hessians) | trajectory time | max |mean − HMC-ECS mean| / sd_L | sd / sd_L (min–max) | notes |"
    );
    w!(m, "|---|---:|---:|---:|---|---:|---:|---|---|");
    let base_means = rows[0].means();
    for r in &rows {
        let e = r.sampling_evals;
        let ev = r.events as f64;
        let means = r.means();
        let sds = r.sds();
        let mean_err =
            (0..d).map(|j| (means[j] - base_means[j]).abs() / laplace_sd[j]).fold(0.0, f64::max);
        let sd_ratio: Vec<f64> = (0..d).map(|j| sds[j] / laplace_sd[j]).collect();
        let (lo, hi) =
            sd_ratio.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        w!(
            m,
            "| {} | {} | {} | {} | {:.1} ({:.1} + {:.1} + {:.1}) | {} | {:.3} | {lo:.3}–{hi:.3} | {} |",
            r.name,
            r.events,
            r.proposals,
            r.violations,
            e.total() as f64 / ev,
            e.terms as f64 / ev,
            e.gradients as f64 / ev,
            e.hessians as f64 / ev,
            if r.time.is_nan() { "–".to_string() } else { format!("{:.4}", r.time) },
            mean_err,
            r.notes
        );
    }
    w!(
        m,
        "\nRatios are method / HMC-ECS: for events/s and evals/s higher is faster; for evals/ESS \
         and ms/ESS lower is better. ESS of {} HMC-ECS and {} PDMP draws has a relative error of \
         roughly 5–10%.",
        o.ecs_draws,
        o.pdmp_draws
    );
    print!("{m}");
    if let Some(path) = &o.out {
        std::fs::write(path, &m).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
