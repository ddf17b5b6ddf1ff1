//! HMC-ECS on the GLM families at n = 10⁶: probit, Poisson and negative binomial (NB2) against
//! logistic regression, the baseline, each run through `tallmc_run::run` as the command and the
//! Python package run it (`SamplerSettings::HmcEcs` with the library's defaults: m tuned for
//! V[ℓ̂] ≤ 1 at the mode, at least 100; G = 100 blocks; order-2 control variates at the mode;
//! εL = 1.2; dual averaging to 0.8), one chain started at the mode, one thread.
//!
//! **Data** (synthetic, in memory, built before anything is timed, fixed seed): the same
//! n × 10 covariates for every family, x_ij ~ N(0, 1) with AR(1) correlation 0.3 across j, and
//! an intercept added by the model (d = 11; NB2 adds log φ: 12). Responses:
//!
//! | family | response |
//! |---|---|
//! | logistic | y ~ Bernoulli(σ(η)), η = −0.4 + xᵀβ_b |
//! | probit | y ~ Bernoulli(Φ(η)), η = −0.25 + 0.6 xᵀβ_b |
//! | Poisson | y ~ Poisson(e^η), η = 0.5 + 0.3 xᵀβ_b |
//! | NB2 | y ~ Poisson(e^η G), G ~ Gamma(φ, 1/φ), φ = 2 (so Var y = μ + μ²/φ) |
//!
//! with β_b = (0.8, −0.6, 0.5, −0.4, 0.3, −0.25, 0.2, −0.15, 0.1, −0.05).
//!
//! **Measures**, per family, from the run's summary (`RunResult::summary`: the sampling phase's
//! wall seconds, the mean subsample size per iteration) and its draws: the subsample size m, the
//! data fraction per iteration m/n, leapfrog steps per iteration, seconds per iteration and per
//! leapfrog step, and the bulk ESS per second of the slowest parameter — each time **as a ratio
//! to logistic regression measured in the same run** (the target: per-iteration time
//! within 1.5× of logistic's, data fraction below 1 %). The set-up (mode by Newton, the
//! control variates, the tuning of m) is reported apart.
//!
//! Run: `cargo bench -p tallmc-run --bench family_ecs [-- --n 1000000] [-- --quick]`, or
//! `cargo xtask bench --only family_ecs`; `TALLMC_BENCH_N` sets n too (`--n` wins). Options:
//! `--warmup W` (default 1,000), `--draws D` (100,000: m is at its floor of 100 on these data, so
//! an iteration takes tens of µs), `--chains C` (1; run one after the other, each on the one
//! thread), `--repeat R` (3 rounds over the families, interleaved; each family's fastest round
//! is kept), `--families logistic,probit,poisson,nb2`, `--out FILE` (also write the table as
//! markdown); `--quick`: n = 10⁵, 500 warmup, 20,000 draws, one round. See `docs/benchmarks.md`.

#![allow(clippy::print_stdout, clippy::print_stderr, missing_docs)]

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use rand::RngExt;
use rand_distr::{Distribution, Gamma, Poisson, StandardNormal};
use tallmc_models::Dataset;
use tallmc_models::synthetic::data_rng;
use tallmc_run::spec::{Execution, HmcEcsSettings, InitChoice};
use tallmc_run::{CountSpec, DataSpec, ModelSpec, RunSpec, SamplerSettings};

/// Seed of the data.
const DATA_SEED: u64 = 1;
/// Seed of the chains.
const CHAIN_SEED: u64 = 1;
/// Tag of the data streams (`data_rng(seed, tag, stream)`).
const TAG: u64 = u64::from_le_bytes(*b"fam-ecs\0");
/// Covariates (the model adds an intercept).
const P: usize = 10;
/// AR(1) correlation of the covariates.
const RHO: f64 = 0.3;
/// Slopes of the binary families (scaled for probit and the counts).
const BETA: [f64; P] = [0.8, -0.6, 0.5, -0.4, 0.3, -0.25, 0.2, -0.15, 0.1, -0.05];
/// NB2's dispersion φ.
const PHI: f64 = 2.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Logistic,
    Probit,
    Poisson,
    Nb2,
}

impl Family {
    const ALL: [Family; 4] = [Family::Logistic, Family::Probit, Family::Poisson, Family::Nb2];

    fn name(self) -> &'static str {
        match self {
            Family::Logistic => "logistic",
            Family::Probit => "probit",
            Family::Poisson => "poisson",
            Family::Nb2 => "nb2",
        }
    }

    fn model(self) -> ModelSpec {
        match self {
            Family::Logistic => ModelSpec::logistic(),
            Family::Probit => ModelSpec::Probit(Default::default()),
            Family::Poisson => ModelSpec::Poisson(CountSpec::default()),
            Family::Nb2 => ModelSpec::NegativeBinomial(CountSpec::default()),
        }
    }

    /// (intercept, slope scale) of η.
    fn predictor(self) -> (f64, f64) {
        match self {
            Family::Logistic => (-0.4, 1.0),
            Family::Probit => (-0.25, 0.6),
            Family::Poisson | Family::Nb2 => (0.5, 0.3),
        }
    }
}

#[derive(Debug, Clone)]
struct Options {
    n: usize,
    warmup: usize,
    draws: usize,
    chains: usize,
    /// Rounds over the families (interleaved); each family's fastest round is reported.
    repeat: usize,
    families: Vec<Family>,
    out: Option<PathBuf>,
}

impl Options {
    fn parse() -> Result<Self, String> {
        let env_n = match std::env::var("TALLMC_BENCH_N") {
            Ok(v) => {
                Some(v.replace('_', "").parse().map_err(|e| format!("TALLMC_BENCH_N {v}: {e}"))?)
            }
            Err(_) => None,
        };
        let mut o = Self {
            n: env_n.unwrap_or(1_000_000),
            warmup: 1_000,
            draws: 100_000,
            chains: 1,
            repeat: 3,
            families: Family::ALL.to_vec(),
            out: None,
        };
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            let mut value = |name: &str| -> Result<String, String> {
                args.next().ok_or(format!("{name} needs a value"))
            };
            let number = |name: &str, v: String| -> Result<usize, String> {
                v.replace('_', "").parse().map_err(|e| format!("{name} {v}: {e}"))
            };
            match a.as_str() {
                "--bench" => {}
                "--quick" => {
                    o.n = 100_000;
                    o.warmup = 500;
                    o.draws = 20_000;
                    o.repeat = 1;
                }
                "--n" => o.n = number("--n", value("--n")?)?,
                "--warmup" => o.warmup = number("--warmup", value("--warmup")?)?,
                "--draws" => o.draws = number("--draws", value("--draws")?)?,
                "--chains" => o.chains = number("--chains", value("--chains")?)?,
                "--repeat" => o.repeat = number("--repeat", value("--repeat")?)?,
                "--families" => {
                    let list = value("--families")?;
                    o.families = list
                        .split(',')
                        .map(|f| {
                            Family::ALL.into_iter().find(|k| k.name() == f).ok_or(format!(
                                "--families: unknown family {f}; expected logistic, probit, \
                                 poisson, nb2"
                            ))
                        })
                        .collect::<Result<_, _>>()?;
                }
                "--out" => o.out = Some(value("--out")?.into()),
                other => {
                    return Err(format!(
                        "unknown argument {other}; expected --n N, --quick, --warmup W, \
                         --draws D, --chains C, --repeat R, --families LIST, --out FILE"
                    ));
                }
            }
        }
        if o.n < 1_000 || o.n > u32::MAX as usize {
            return Err(format!("--n {}: expected 1,000 ≤ n ≤ {}", o.n, u32::MAX));
        }
        if o.draws < 4 || o.chains == 0 || o.repeat == 0 {
            return Err("--draws: at least 4; --chains and --repeat: at least 1".into());
        }
        Ok(o)
    }
}

/// The covariates (row-major, n × P) and, per family, its response.
fn covariates(n: usize) -> Vec<f64> {
    let mut rng = data_rng(DATA_SEED, TAG, 0);
    let scale = (1.0 - RHO * RHO).sqrt();
    let mut x = Vec::with_capacity(n * P);
    for _ in 0..n {
        let mut prev: f64 = StandardNormal.sample(&mut rng);
        x.push(prev);
        for _ in 1..P {
            let e: f64 = StandardNormal.sample(&mut rng);
            prev = RHO * prev + scale * e;
            x.push(prev);
        }
    }
    x
}

fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

fn responses(family: Family, x: &[f64]) -> Result<Vec<f64>, String> {
    let stream = 1 + Family::ALL.iter().position(|&f| f == family).unwrap_or(0) as u64;
    let mut rng = data_rng(DATA_SEED, TAG, stream);
    let (b0, s) = family.predictor();
    let gamma = Gamma::new(PHI, 1.0 / PHI).map_err(|e| e.to_string())?;
    x.chunks_exact(P)
        .map(|row| {
            let eta = b0 + s * row.iter().zip(BETA).map(|(a, b)| a * b).sum::<f64>();
            let u: f64 = rng.random();
            Ok(match family {
                Family::Logistic => f64::from(u8::from(u < 1.0 / (1.0 + (-eta).exp()))),
                Family::Probit => f64::from(u8::from(u < normal_cdf(eta))),
                Family::Poisson | Family::Nb2 => {
                    let g = if family == Family::Nb2 { gamma.sample(&mut rng) } else { 1.0 };
                    let mean = eta.exp() * g;
                    if mean <= 0.0 {
                        0.0
                    } else {
                        Poisson::new(mean).map_err(|e| e.to_string())?.sample(&mut rng)
                    }
                }
            })
        })
        .collect()
}

/// What one family's run measured.
#[derive(Debug, Clone)]
struct Row {
    family: Family,
    d: usize,
    y_mean: f64,
    setup_s: f64,
    warmup_s: f64,
    sampling_s: f64,
    draws: usize,
    m: f64,
    data_fraction: f64,
    leapfrog: f64,
    step_size: f64,
    /// Per-datum evaluations (terms + gradients + Hessians) per iteration, sampling phase.
    evals_per_iteration: f64,
    ess_min: f64,
    worst: String,
}

impl Row {
    fn per_iteration(&self) -> f64 {
        self.sampling_s / self.draws as f64
    }

    fn per_leapfrog(&self) -> f64 {
        self.sampling_s / (self.leapfrog * self.draws as f64)
    }

    fn ess_per_s(&self) -> f64 {
        self.ess_min / self.sampling_s
    }
}

fn number(v: &serde_json::Value, path: &[&str]) -> Result<f64, String> {
    let mut at = v;
    for k in path {
        at = &at[*k];
    }
    at.as_f64().ok_or(format!("summary: no number at {}", path.join(".")))
}

fn run_family(family: Family, x: &[f64], o: &Options) -> Result<Row, String> {
    let y = responses(family, x)?;
    let y_mean = y.iter().sum::<f64>() / y.len() as f64;
    let names = (1..=P).map(|j| format!("x{j}")).collect();
    let data = Dataset::new(x.to_vec(), y, names).map_err(|e| e.to_string())?;
    let label = format!("family_ecs synthetic {} (n = {}, seed {DATA_SEED})", family.name(), o.n);
    let mut spec = RunSpec::new(
        family.model(),
        DataSpec::Arrays { label },
        SamplerSettings::HmcEcs(HmcEcsSettings::default()),
    );
    spec.chains = o.chains;
    spec.warmup = o.warmup;
    spec.draws = o.draws;
    spec.seed = CHAIN_SEED;
    spec.init = InitChoice::Mode;
    spec.execution = Execution { threads: Some(1), progress: false, report: false };
    let t = Instant::now();
    let result = tallmc_run::run(&spec, Some(data), &AtomicBool::new(false), None)
        .map_err(|e| format!("{}: {}", family.name(), tallmc_run::error_message(&e)))?;
    let total = t.elapsed().as_secs_f64();
    let s = &result.summary;
    let wall = ["totals", "wall_seconds"];
    let warmup_s = number(s, &[wall[0], wall[1], "warmup_max_over_chains"])?;
    let sampling_s = number(s, &[wall[0], wall[1], "sampling_max_over_chains"])?;
    let setup_s = number(s, &[wall[0], wall[1], "setup"])?;
    let data_fraction = number(s, &["totals", "data_fraction_per_iteration"])?;
    let evals_per_iteration = number(s, &["totals", "evals_per_draw"])?;
    // Leapfrog steps and step size: means over every chain's draws.
    let column_mean = |prefix: &str| -> Result<f64, String> {
        let (mut sum, mut count) = (0.0, 0usize);
        for c in &result.chains {
            let k = c.stat_columns.iter().position(|n| n.starts_with(prefix)).ok_or(format!(
                "no stat column {prefix}… (columns: {})",
                c.stat_columns.join(", ")
            ))?;
            let w = c.stat_columns.len();
            for row in c.stats.chunks_exact(w) {
                sum += row[k];
                count += 1;
            }
        }
        Ok(sum / count.max(1) as f64)
    };
    let leapfrog = column_mean("n_leapfrog")?;
    let step_size = column_mean("stepsize")?;
    let params = s["parameters"].as_array().ok_or("summary: no parameters")?;
    let (mut ess_min, mut worst) = (f64::INFINITY, String::new());
    for p in params {
        let e = p["ess_bulk"].as_f64().unwrap_or(f64::NAN);
        if e < ess_min || e.is_nan() {
            ess_min = e;
            worst = p["name"].as_str().unwrap_or("?").to_string();
        }
    }
    // Chains run one after the other on the one thread: the per-chain phases are the longest
    // chain's; per-iteration figures use all chains' draws.
    let chains = result.chains.len().max(1);
    let row = Row {
        family,
        d: params.len(),
        y_mean,
        setup_s,
        warmup_s,
        sampling_s: sampling_s * chains as f64,
        draws: o.draws * chains,
        m: data_fraction * o.n as f64,
        data_fraction,
        leapfrog,
        step_size,
        evals_per_iteration,
        ess_min,
        worst,
    };
    eprintln!(
        "{}: {:.1} s in all (set-up {:.1} s, warmup {:.1} s, sampling {:.1} s), m = {:.0}, \
         {:.2} µs per iteration",
        family.name(),
        total,
        row.setup_s,
        row.warmup_s,
        sampling_s,
        row.m,
        1e6 * row.per_iteration()
    );
    Ok(row)
}

fn report(rows: &[Row], o: &Options) -> String {
    let mut m = String::new();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = load.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
    let _ = writeln!(
        m,
        "## family_ecs: HMC-ECS per family, n = {}, {} covariates + intercept, {} chain(s) × \
         ({} warmup + {} draws), one thread, fastest of {} round(s), load average {load}\n",
        o.n, P, o.chains, o.warmup, o.draws, o.repeat
    );
    let base = rows.iter().find(|r| r.family == Family::Logistic);
    let ratio = |v: f64, b: Option<f64>| b.map_or("–".to_string(), |b| format!("{:.2}", v / b));
    let _ = writeln!(
        m,
        "| family | d | mean y | m | data % / iter | leapfrog / iter | ε | evals / iter | µs / iter | × logistic \
         | µs / leapfrog | × logistic | min ESS / s (param) | × logistic | set-up s |"
    );
    let _ =
        writeln!(m, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let _ = writeln!(
            m,
            "| {} | {} | {:.3} | {:.0} | {:.3} | {:.1} | {:.3} | {:.0} | {:.2} | {} | {:.1} | {} | {:.1} \
             ({}) | {} | {:.1} |",
            r.family.name(),
            r.d,
            r.y_mean,
            r.m,
            100.0 * r.data_fraction,
            r.leapfrog,
            r.step_size,
            r.evals_per_iteration,
            1e6 * r.per_iteration(),
            ratio(r.per_iteration(), base.map(Row::per_iteration)),
            1e6 * r.per_leapfrog(),
            ratio(r.per_leapfrog(), base.map(Row::per_leapfrog)),
            r.ess_per_s(),
            r.worst,
            ratio(r.ess_per_s(), base.map(Row::ess_per_s)),
            r.setup_s,
        );
    }
    let _ = writeln!(
        m,
        "\nTarget (issue): µs / iter × logistic ≤ 1.5 and data % / iter < 1 for probit, Poisson, \
         NB2."
    );
    for r in rows.iter().filter(|r| r.family != Family::Logistic) {
        let (Some(b), name) = (base, r.family.name()) else { break };
        let x = r.per_iteration() / b.per_iteration();
        let ok = x <= 1.5 && r.data_fraction < 0.01;
        let verdict = if ok { "met" } else { "NOT met" };
        let _ = writeln!(
            m,
            "* {name}: {x:.2}× logistic per iteration, {:.3} % of the data: {verdict}",
            100.0 * r.data_fraction
        );
    }
    m
}

fn main() {
    let o = match Options::parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("family_ecs: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&o) {
        eprintln!("family_ecs: {e}");
        std::process::exit(1);
    }
}

fn run(o: &Options) -> Result<(), String> {
    let t = Instant::now();
    let x = covariates(o.n);
    eprintln!("covariates: {} × {P} in {:.1} s", o.n, t.elapsed().as_secs_f64());
    // Rounds over the families, interleaved so that a change of the machine's load falls on
    // all of them; each family keeps its fastest round (per iteration).
    let mut rows: Vec<Row> = Vec::new();
    for round in 0..o.repeat {
        eprintln!("round {} of {}", round + 1, o.repeat);
        for &family in &o.families {
            let row = run_family(family, &x, o)?;
            match rows.iter_mut().find(|r| r.family == family) {
                Some(r) if r.per_iteration() <= row.per_iteration() => {}
                Some(r) => *r = row,
                None => rows.push(row),
            }
        }
    }
    let text = report(&rows, o);
    println!("{text}");
    if let Some(path) = &o.out {
        std::fs::write(path, &text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}
