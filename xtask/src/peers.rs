//! `cargo xtask bench --peers`: tallmc against the NumPyro / BlackJAX / pdmp-jax peer scripts of
//! `bench/peers/`, on the same binary data file, in one run.
//!
//! Steps: Python virtual environments with pinned packages — `target/peers/venv` from
//! `bench/peers/requirements.txt` (NumPyro, BlackJAX) and `target/peers/venv-pdmp` from
//! `bench/peers/requirements-pdmp.txt` (pdmp-jax, which pins jax < 0.5), each made only when a
//! selected comparison needs it; the peer scripts copied to `target/peers/work/` (they read and
//! write beside themselves); the higgs-like data written there by `gen_data.py` (or reused when
//! the `.bin` matches the sha256 of its JSON sidecar); every selected peer run; every selected
//! tallmc run through the release CLI binary on the same `.bin`; a table of ESS per second and
//! ESS per 1,000 per-datum gradient evaluations with tallmc/peer ratios (and, for the full-data
//! PDMPs, events per second, full-data gradients per event and ESS per second), also written to
//! `target/peers/report.{md,json}`.
//!
//! The comparisons are the entries of [`COMPARISONS`]: adding a tallmc method is one entry.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use anyhow::{Context as _, Result, anyhow, bail};
use clap::Args;
use serde_json::{Value, json};

/// Options of `cargo xtask bench --peers`.
#[derive(Debug, Args)]
pub struct PeerArgs {
    /// Number of observations of the higgs-like data set (d = 29).
    #[arg(long, default_value_t = 100_000)]
    pub n: usize,
    /// Seed of the data set (gen_data.py --seed).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Seed of the samplers (tallmc --seed, run_numpyro.py --rng).
    #[arg(long, default_value_t = 1)]
    pub rng: u64,
    /// Comparisons to run, comma-separated (default: every one whose tallmc side exists).
    /// Known: hmc, hmc-diag, nuts, sgld, hmc-ecs, hmc-ecs-tuned, hmc-ecs-nuts, sghmc (NumPyro /
    /// BlackJAX), zigzag, bps (pdmp-jax).
    /// A pending one (none at present) runs the peer side only.
    #[arg(long, value_delimiter = ',')]
    pub methods: Vec<String>,
    /// Warmup iterations of full-data HMC / NUTS.
    #[arg(long, default_value_t = 500)]
    pub warmup: usize,
    /// Draws of full-data HMC / NUTS (one chain).
    #[arg(long, default_value_t = 1000)]
    pub draws: usize,
    /// Burn-in steps of SGLD (both sides).
    #[arg(long, default_value_t = 1000)]
    pub sg_burnin: usize,
    /// Draws (= steps) of SGLD (both sides).
    #[arg(long, default_value_t = 50_000)]
    pub sg_steps: usize,
    /// Length of each step-size scan run of SGLD (both sides; the first fifth is burn-in).
    #[arg(long, default_value_t = 10_000)]
    pub scan_steps: usize,
    /// Draws (= trajectories) of SG-HMC (both sides).
    #[arg(long, default_value_t = 5000)]
    pub sghmc_steps: usize,
    /// Minibatch size of SGLD and SG-HMC (both sides).
    #[arg(long, default_value_t = 1300)]
    pub batch: usize,
    /// Timed runs of each side of the HMC, NUTS, SGLD and SG-HMC comparisons (after any
    /// step-size scan): the report keeps each side's fastest sampling phase and lists all. The
    /// runs repeat one seed, so they draw the same chain; on a shared machine the fastest is the
    /// least disturbed.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub repeat: u32,
    /// Events of the sampling phase of the full-data PDMPs (`zigzag`, `bps`; both sides: the
    /// peer's --events, tallmc's --events). pdmp-jax makes ≈ 10–20 events/s at n = 10⁵.
    #[arg(long, default_value_t = 2000)]
    pub pdmp_events: u64,
    /// Warmup events of the full-data PDMPs (the peer's --warmup-events; tallmc warms up for the
    /// same share of the peer's trajectory time). [default: --pdmp-events / 10]
    #[arg(long)]
    pub pdmp_warmup_events: Option<u64>,
    /// Grid draws of the full-data PDMPs' trajectory on both sides (the peer's --samples; tallmc's
    /// grid draws are thinned to as many, evenly spaced).
    #[arg(long, default_value_t = 1000)]
    pub pdmp_samples: usize,
    /// Reuse target/peers/venv and target/peers/venv-pdmp as they are (no pip install).
    #[arg(long)]
    pub skip_install: bool,
    /// Python used to create the virtual environment.
    #[arg(long, default_value = "python3")]
    pub python: String,
    /// Pin every timed process to this CPU with taskset (one core for both sides).
    #[arg(long, default_value_t = 0)]
    pub cpu: usize,
    /// Do not pin processes to one CPU.
    #[arg(long)]
    pub no_pin: bool,
}

/// Settings shared by every entry of the table (the parsed options).
type Settings = PeerArgs;

/// Which peer script (and virtual environment) a peer run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PeerScript {
    /// `run_numpyro.py` in `target/peers/venv` (NumPyro, BlackJAX).
    Numpyro,
    /// `run_pdmpjax.py` in `target/peers/venv-pdmp` (pdmp-jax pins jax < 0.5).
    PdmpJax,
}

/// A peer run of `run_numpyro.py` or `run_pdmpjax.py`.
struct PeerSide {
    /// Shown in the table.
    label: &'static str,
    /// Tag of the run (`runs/<tag>.json`); runs with equal tags are run once.
    tag: fn(&Settings) -> String,
    /// Arguments after `SCRIPT --n N --seed S --rng R --tag TAG --outdir DIR`.
    args: fn(&Settings) -> Vec<String>,
    /// The script.
    script: PeerScript,
    /// Run the peer once per value of a flag and keep the run with the best ESS per second
    /// (the peer at its best setting); `None`: one run.
    scan: Option<PeerScan>,
}

/// A peer-side scan: `flag` set to each of `values` in turn (tags get `_{flag}{value}`).
#[derive(Clone, Copy)]
struct PeerScan {
    flag: &'static str,
    values: &'static [usize],
}

/// The tallmc side of a comparison.
enum TallmcSide {
    /// Run through `tallmc sample`.
    Cli {
        /// Shown in the table.
        label: &'static str,
        /// Arguments after `tallmc sample --model logistic --data BIN --chains 1 --threads 1
        /// --init mode --seed R --out DIR` (plus `--step-size H` when `scan` is set).
        args: fn(&Settings) -> Vec<String>,
        /// A step-size scan as the peer does it (its grid in tallmc's units, and the flag).
        scan: Option<fn(&Settings) -> Vec<f64>>,
        /// Arguments that depend on the scanned step size (besides `--step-size H`).
        per_step: Option<fn(f64) -> Vec<String>>,
    },
    /// A full-data PDMP through `tallmc sample SAMPLER`, run twice: with
    /// `--rate-bound envelope` (the peer's algorithm) and `--rate-bound model`; events budget,
    /// warmup, grid and (BPS) refresh rate set from the peer run (see [`run_tallmc_pdmp`]).
    Pdmp {
        /// Shown in the table (the rate bound is appended).
        label: &'static str,
        /// `zigzag` or `bps`.
        sampler: &'static str,
    },
    /// Not written yet: listed as pending in the report (every current comparison has its
    /// tallmc side; the variant stays for the next ones).
    #[allow(dead_code)]
    Pending {
        /// Shown in the table.
        label: &'static str,
        /// The CLI call it will be (for the report).
        planned: &'static str,
    },
}

/// One row pair of the table: a tallmc method against a peer method.
struct Comparison {
    key: &'static str,
    tallmc: TallmcSide,
    peer: PeerSide,
    /// Setting-by-setting correspondence, written to the report.
    settings: &'static [&'static str],
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| (*x).to_string()).collect()
}

/// The command-line arguments `fixed`, then `flag value` for each of `values`.
fn cli(fixed: &[&str], values: &[(&str, &dyn std::fmt::Display)]) -> Vec<String> {
    let mut a = s(fixed);
    for (flag, value) in values {
        a.push((*flag).to_string());
        a.push(value.to_string());
    }
    a
}

/// A NumPyro run: `fixed`, then the shared warmup and draws (`--warmup W --samples D`).
fn numpyro_args(c: &Settings, fixed: &[&str]) -> Vec<String> {
    cli(fixed, &[("--warmup", &c.warmup), ("--samples", &c.draws)])
}

const NUTS: PeerSide = PeerSide {
    label: "NumPyro NUTS, full data, diag mass adapted",
    tag: |c| format!("nuts_n{}", c.n),
    args: |c| numpyro_args(c, &["--method", "nuts"]),
    script: PeerScript::Numpyro,
    scan: None,
};

/// A full-data tallmc run of `sampler` (`hmc` or `nuts`) with `metric`, the shared warmup and
/// draws, step size by dual averaging to 0.8.
fn full_data_args(c: &Settings, sampler: &str, metric: &str) -> Vec<String> {
    cli(
        &[sampler, "--target-accept", "0.8", "--metric", metric],
        &[("--warmup", &c.warmup), ("--draws", &c.draws)],
    )
}

/// A stochastic-gradient tallmc run: `fixed`, then the shared minibatch size and burn-in, and
/// `draws` steps (one draw per step).
fn sg_tallmc_args(c: &Settings, fixed: &[&str], draws: usize) -> Vec<String> {
    cli(fixed, &[("--batch", &c.batch), ("--warmup", &c.sg_burnin), ("--draws", &draws)])
}

/// The matching peer run: `fixed`, the same minibatch size and burn-in, the method's own steps
/// flag, and the length of each step-size scan run.
fn sg_peer_args(c: &Settings, fixed: &[&str], steps: (&str, usize)) -> Vec<String> {
    cli(
        fixed,
        &[
            ("--batch", &c.batch),
            ("--burnin", &c.sg_burnin),
            (steps.0, &steps.1),
            ("--scan-steps", &c.scan_steps),
        ],
    )
}

/// BlackJAX's SGLD step is θ + ε∇ + √(2ε)·z and tallmc's θ + (h/2)∇ + √h·z: h = 2ε. The peer's
/// grid for un-preconditioned runs is {0.01, 0.03, 0.1, 0.3, 1}/n in ε.
/// `hmc-ecs EXTRA… --trajectory-length 1.2 --target-accept 0.8 --warmup W --draws D`.
fn ecs_tallmc_args(c: &Settings, extra: &[&str]) -> Vec<String> {
    let mut a = s(&["hmc-ecs"]);
    a.extend(s(extra));
    a.extend(s(&["--trajectory-length", "1.2", "--target-accept", "0.8"]));
    a.extend(["--warmup".into(), c.warmup.to_string(), "--draws".into(), c.draws.to_string()]);
    a
}

/// The matching NumPyro HMCECS run:
/// `--method hmcecs EXTRA… --m 1300 --blocks 100 --warmup W --samples D`.
fn ecs_peer_args(c: &Settings, extra: &[&str]) -> Vec<String> {
    let mut fixed = vec!["--method", "hmcecs"];
    fixed.extend_from_slice(extra);
    fixed.extend_from_slice(&["--m", "1300", "--blocks", "100"]);
    numpyro_args(c, &fixed)
}

fn sgld_grid(c: &Settings) -> Vec<f64> {
    [0.01, 0.03, 0.1, 0.3, 1.0].iter().map(|g| 2.0 * g / c.n as f64).collect()
}

/// The peer's SG-HMC grid {0.0125, …, 0.2}: BlackJAX 1.7's `sghmc` step is θ += η p,
/// p ← (1 − αη) p + η ∇log π̂ + √(2αη)·z with p₀ ~ N(0, I) in whitened coordinates, which is
/// tallmc's SG-HMC step with ε = η and mass matrix M = Σ⁻¹ (the Laplace preconditioning), so the
/// grid is scanned as ε = η (see the `sghmc` settings).
fn sghmc_grid(_: &Settings) -> Vec<f64> {
    vec![0.0125, 0.025, 0.05, 0.1, 0.2]
}

/// The peer's steps per trajectory for ε = η: L = max(1, round(1.2/η)), trajectory length 1.2.
fn sghmc_steps(h: f64) -> Vec<String> {
    let l = (1.2 / h).round().max(1.0) as usize;
    vec!["--num-steps".to_string(), l.to_string()]
}

/// Every comparison `--peers` knows. Adding a tallmc method is one entry here.
const COMPARISONS: &[Comparison] = &[
    Comparison {
        key: "hmc",
        tallmc: TallmcSide::Cli {
            label: "tallmc HMC, full data, Laplace metric (CLI default)",
            args: |c| full_data_args(c, "hmc", "laplace"),
            scan: None,
            per_step: None,
        },
        peer: NUTS,
        settings: &[
            "chains: 1 ↔ 1",
            "warmup / draws: --warmup W --draws D ↔ --warmup W --samples D",
            "start: --init mode (Newton mode) ↔ MAP by Newton",
            "step size: dual averaging to 0.8 ↔ dual averaging to 0.8",
            "metric: dense Laplace covariance at the mode, fixed ↔ diagonal, adapted in windows",
            "trajectory: fixed length π/2 (jittered) ↔ NUTS, max tree depth 10 (two algorithms: see `nuts` for NUTS on both sides)",
        ],
    },
    Comparison {
        key: "nuts",
        tallmc: TallmcSide::Cli {
            label: "tallmc NUTS, full data, diag metric adapted",
            args: |c| full_data_args(c, "nuts", "diag"),
            scan: None,
            per_step: None,
        },
        peer: NUTS,
        settings: &[
            "the same algorithm on both sides: multinomial NUTS, max tree depth 10, diagonal metric adapted in Stan's windows, step size by dual averaging to 0.8",
            "chains 1 ↔ 1; warmup / draws --warmup W --draws D ↔ --warmup W --samples D; start --init mode ↔ MAP by Newton",
        ],
    },
    Comparison {
        key: "hmc-diag",
        tallmc: TallmcSide::Cli {
            label: "tallmc HMC, full data, diag metric adapted",
            args: |c| full_data_args(c, "hmc", "diag"),
            scan: None,
            per_step: None,
        },
        peer: NUTS,
        settings: &[
            "as `hmc`, but the metric is diagonal and adapted in Stan's windows (closest to NumPyro)",
        ],
    },
    Comparison {
        key: "sgld",
        tallmc: TallmcSide::Cli {
            label: "tallmc SGLD + control variate (order 1 at the mode), no preconditioning",
            args: |c| sg_tallmc_args(c, &["sgld", "--cv", "--cv-order", "1"], c.sg_steps),
            scan: Some(sgld_grid),
            per_step: None,
        },
        peer: PeerSide {
            label: "BlackJAX SGLD + control variate, no preconditioning",
            tag: |c| format!("sgld_plain_n{}", c.n),
            args: |c| {
                sg_peer_args(c, &["--method", "sgld", "--precond", "0"], ("--sg-steps", c.sg_steps))
            },
            script: PeerScript::Numpyro,
            scan: None,
        },
        settings: &[
            "chains: 1 ↔ 1; start: mode ↔ MAP",
            "burn-in / draws: --warmup B --draws S ↔ --burnin B --sg-steps S (one draw per step)",
            "minibatch: b without replacement per step ↔ b with replacement per step",
            "gradient: control variate at the mode, Σ∇ℓ_i(θ*) + (N/b)Σ[∇ℓ_i(θ) − ∇ℓ_i(θ*)] (∇ℓ_i(θ*) cached per point after its first use) ↔ the same centred at the MAP (2 minibatch gradients per step)",
            "coordinates: θ ↔ θ (--precond 0)",
            "step size: h = 2ε (tallmc θ + (h/2)∇ + √h z, BlackJAX θ + ε∇ + √(2ε) z); both picked by the peer's scan: \
             grid {0.01,0.03,0.1,0.3,1}/n in ε, runs of --scan-steps steps, first fifth dropped, score = mean |mean − MAP|/sd_L + mean |sd/sd_L − 1| against the Laplace approximation",
        ],
    },
    Comparison {
        key: "hmc-ecs",
        tallmc: TallmcSide::Cli {
            label: "tallmc HMC-ECS perturbed, m = 1300, G = 100, εL = 1.2",
            args: |c| ecs_tallmc_args(c, &["--subsample", "1300", "--blocks", "100"]),
            scan: None,
            per_step: None,
        },
        peer: PeerSide {
            label: "NumPyro HMCECS, m = 1300, G = 100, εL = 1.2",
            tag: |c| format!("hmcecs_n{}", c.n),
            args: |c| ecs_peer_args(c, &[]),
            script: PeerScript::Numpyro,
            scan: None,
        },
        settings: &[
            "chains: 1 ↔ 1; start: mode ↔ MAP; warmup / draws: --warmup W --draws D ↔ --warmup W --samples D",
            "subsample: m = 1300 with replacement in G = 100 blocks, one block refreshed per iteration ↔ the same",
            "likelihood: perturbed difference estimator exp(ℓ̂ − σ̂²/2), 2nd-order Taylor control variates ↔ the same (HMCECS.taylor_proxy, degree 2)",
            "expansion point θ*: the mode (Newton on the full data), fixed ↔ the MAP, fixed",
            "mass matrix: inverse Hessian at θ* (dense) ↔ the Laplace covariance at the MAP (dense), fixed",
            "trajectory: εL = 1.2, ε by dual averaging to 0.8 ↔ the same",
        ],
    },
    Comparison {
        key: "hmc-ecs-tuned",
        tallmc: TallmcSide::Cli {
            label: "tallmc HMC-ECS perturbed, m tuned (V[ℓ̂] ≤ 1 at the mode, ≥ 100), G = min(100, m), εL = 1.2",
            args: |c| ecs_tallmc_args(c, &[]),
            scan: None,
            per_step: None,
        },
        peer: PeerSide {
            label: "NumPyro HMCECS at its best m of {100, 300, 1300}, G = 100, εL = 1.2",
            tag: |c| format!("hmcecs_scan_n{}", c.n),
            args: |c| ecs_peer_args(c, &[]),
            script: PeerScript::Numpyro,
            scan: Some(PeerScan { flag: "--m", values: &[100, 300, 1300] }),
        },
        settings: &[
            "chains: 1 ↔ 1; start: mode ↔ MAP; warmup / draws: --warmup W --draws D ↔ --warmup W --samples D",
            "subsample: tallmc's own m (the smallest with V[ℓ̂] ≤ 1 at Laplace draws, at least 100; G = min(100, m)) ↔ each m of {100, 300, 1300} with G = 100, the run with the highest ESS/s kept",
            "likelihood, θ*, mass matrix, trajectory: as in the hmc-ecs row",
        ],
    },
    Comparison {
        key: "hmc-ecs-nuts",
        tallmc: TallmcSide::Cli {
            label: "tallmc HMC-ECS perturbed, NUTS θ-step, m = 1300, G = 100",
            args: |c| {
                ecs_tallmc_args(c, &["--inner", "nuts", "--subsample", "1300", "--blocks", "100"])
            },
            scan: None,
            per_step: None,
        },
        peer: PeerSide {
            label: "NumPyro HMCECS with a NUTS inner kernel, m = 1300, G = 100",
            tag: |c| format!("hmcecs_nuts_n{}", c.n),
            args: |c| ecs_peer_args(c, &["--ecs-inner", "nuts"]),
            script: PeerScript::Numpyro,
            scan: None,
        },
        settings: &[
            "chains: 1 ↔ 1; start: mode ↔ MAP; warmup / draws: --warmup W --draws D ↔ --warmup W --samples D",
            "subsample: m = 1300 in G = 100 blocks ↔ the same",
            "θ-step: NUTS (multinomial, generalized U-turn, max depth 10), ε by dual averaging to 0.8 ↔ NumPyro's NUTS inner kernel, the same defaults",
            "likelihood, θ*, mass matrix: as in the hmc-ecs row",
        ],
    },
    Comparison {
        key: "sghmc",
        tallmc: TallmcSide::Cli {
            label: "tallmc SG-HMC + control variate (order 1), Laplace-preconditioned",
            args: |c| {
                sg_tallmc_args(
                    c,
                    &[
                        "sghmc",
                        "--cv",
                        "--cv-order",
                        "1",
                        "--precondition",
                        "--minibatch",
                        "per-trajectory",
                    ],
                    c.sghmc_steps,
                )
            },
            scan: Some(sghmc_grid),
            per_step: Some(sghmc_steps),
        },
        peer: PeerSide {
            label: "BlackJAX SG-HMC + control variate, preconditioned",
            tag: |c| format!("sghmc_n{}", c.n),
            args: |c| sg_peer_args(c, &["--method", "sghmc"], ("--sghmc-steps", c.sghmc_steps)),
            script: PeerScript::Numpyro,
            scan: None,
        },
        settings: &[
            "chains: 1 ↔ 1; start: mode ↔ MAP; minibatch b without ↔ with replacement, one per trajectory on both sides (`--minibatch per-trajectory` ↔ BlackJAX's `sghmc` step, which takes one minibatch for its L integration steps)",
            "gradient: control variate at the mode ↔ at the MAP (tallmc evaluates ∇ℓ_i(θ*) once per trajectory, the peer at every step)",
            "coordinates: inverse mass matrix = Laplace covariance ↔ whitened by the Laplace Cholesky factor",
            "step: BlackJAX 1.7's sghmc step θ += η p, p ← (1 − αη) p + η∇ + √(2αη) z with p₀ ~ N(0, I) in whitened coordinates is tallmc's with ε = η and M = Σ⁻¹, so the peer's grid {0.0125,…,0.2} is scanned as ε = η, with the peer's L = round(1.2/η) steps per trajectory (the same trajectory length 1.2 and the same gradients per draw)",
            "order within a step: tallmc moves θ, then takes the gradient at the new θ ↔ BlackJAX takes the gradient, then moves θ (both first order)",
            "friction: tallmc C = I in θ coordinates (the HMC-ECS paper's), which is C = Σ (eigenvalues ~1e-5) in whitened ones ↔ BlackJAX α = 0.01 in whitened coordinates: both nearly frictionless over a trajectory of length 1.2",
        ],
    },
    pdmp_comparison(
        "zigzag",
        "tallmc Zig-Zag, full data",
        "pdmp-jax ZigZag, full data, automatic grid bound",
        |c| format!("pdmpjax_zigzag_n{}", c.n),
        |c| pdmp_peer_args(c, "zigzag"),
    ),
    pdmp_comparison(
        "bps",
        "tallmc BPS, full data",
        "pdmp-jax BouncyParticle, full data, automatic grid bound",
        |c| format!("pdmpjax_bps_n{}", c.n),
        |c| pdmp_peer_args(c, "bps"),
    ),
];

/// A full-data PDMP comparison: tallmc's `sampler` (= `key`) against pdmp-jax's, with the
/// settings of [`PDMP_SETTINGS`].
const fn pdmp_comparison(
    key: &'static str, tallmc_label: &'static str, peer_label: &'static str,
    tag: fn(&Settings) -> String, args: fn(&Settings) -> Vec<String>,
) -> Comparison {
    Comparison {
        key,
        tallmc: TallmcSide::Pdmp { label: tallmc_label, sampler: key },
        peer: PeerSide { label: peer_label, tag, args, script: PeerScript::PdmpJax, scan: None },
        settings: PDMP_SETTINGS,
    }
}

/// The correspondence of the full-data PDMP comparisons (`zigzag`, `bps`).
const PDMP_SETTINGS: &[&str] = &[
    "chains: 1 ↔ 1; start: the mode (Newton, --init mode) ↔ the MAP (Newton); initial velocity: random ↔ random",
    "events: --events E ↔ --events E (velocity changes: flips, bounces, refreshments); warmup: the same share of the trajectory time as the peer's --warmup-events (tallmc's warmup is a trajectory time) ↔ --warmup-events",
    "bound: --rate-bound envelope = the automatic piecewise bound of Andral & Kamatani 2024 (since issue 29: one interval per band, a line from the rate and its time derivative at the band's start — one new full-data gradient and one Hessian-vector product per band — rising with the larger of the tangent and chord slopes, +1 % margin, the horizon chosen so the tangents hold 3 expected events) ↔ pdmp-jax's grid bound (grid_size 10, adaptive tmax): the like-for-like algorithm; --rate-bound model = affine bounds from logistic regression's curvature bound K = XᵀX/4 (one full-data gradient per proposal, no Hessian-vector products), what tallmc offers on top",
    "BPS: velocities N(0, I) on both sides; refresh rate R = 1/Δ_L on both (--refresh-rate R ↔ --refresh R), Δ_L = the median Laplace posterior sd (tallmc's default rate)",
    "discretization: S grid draws evenly spaced over the sampling trajectory on both sides (the peer's sample_from_skeleton(S) at t_k = kT/S; tallmc's grid draws at Δ = T_peer/(4S), thinned to S evenly spaced draws)",
    "evaluations: full-data gradients and Hessian-vector products per event, tallmc: per-datum evaluations / n from summary.json ↔ counted from pdmp-jax's per-event counters (run_pdmpjax.py count_evaluations)",
    "ESS: arviz bulk ESS of the S draws on both sides (ess_csv.py on tallmc's thinned CSV)",
];

/// How many tallmc grid draws per peer draw are made before thinning to the peer's count.
const PDMP_OVERSAMPLE: usize = 4;

/// `run_pdmpjax.py` arguments of a full-data PDMP comparison (the BPS refresh rate is added at
/// run time, from the Laplace approximation).
fn pdmp_peer_args(c: &Settings, method: &str) -> Vec<String> {
    vec![
        "--method".into(),
        method.into(),
        "--events".into(),
        c.pdmp_events.to_string(),
        "--warmup-events".into(),
        pdmp_warmup_events(c).to_string(),
        "--samples".into(),
        c.pdmp_samples.to_string(),
        "--grid-size".into(),
        "10".into(),
    ]
}

fn pdmp_warmup_events(c: &Settings) -> u64 {
    c.pdmp_warmup_events.unwrap_or(c.pdmp_events / 10)
}

/// Data sets whose sha256 is published in bench/peers/UPSTREAM_README.md (numpy PCG64).
const KNOWN_SHA256: &[(usize, u64, &str)] = &[
    (1_000, 1, "70dde2fc8020d817fa326029ec6b4c36e7cc9d9aaa7170c0b956722c95cd67da"),
    (100_000, 1, "5a6b9144963a0ff09f277a20a817a3849fdfb013dbe1634fb2fa440ed2e3b715"),
    (1_000_000, 1, "9052202cee1e77ba72fb92b045d16c402cebf65b8b9808ba40d07040b9836fb4"),
];

/// The packages the peer scripts import (their pinned versions are recorded in the report).
const PEER_PACKAGES: &[&str] =
    &["jax", "jaxlib", "numpyro", "blackjax", "arviz", "numpy", "scipy", "optax"];

/// The packages of pdmp-jax's environment that the report records.
const PDMP_PACKAGES: &[&str] = &["pdmp-jax", "jax", "jaxlib", "arviz", "numpy", "scipy"];

/// Environment for every timed process: one thread, one JAX device.
const ONE_THREAD_ENV: &[(&str, &str)] = &[
    ("XLA_FLAGS", "--xla_force_host_platform_device_count=1 --xla_cpu_multi_thread_eigen=false"),
    ("OMP_NUM_THREADS", "1"),
    ("OPENBLAS_NUM_THREADS", "1"),
    ("MKL_NUM_THREADS", "1"),
    ("JAX_PLATFORMS", "cpu"),
    ("RAYON_NUM_THREADS", "1"),
];

struct Paths {
    root: PathBuf,
    base: PathBuf,
    /// The Python of the data, hashing and ESS scripts (numpy + arviz): the NumPyro
    /// environment's when it is made, else pdmp-jax's (the same numpy and arviz pins).
    venv_python: PathBuf,
    /// `target/peers/venv/bin/python`.
    numpyro_python: PathBuf,
    /// `target/peers/venv-pdmp/bin/python`.
    pdmp_python: PathBuf,
    work: PathBuf,
    runs: PathBuf,
}

/// Runs `cargo xtask bench --peers`.
pub fn run(root: &Path, c: &PeerArgs) -> Result<()> {
    let started = Instant::now();
    let selected = select(&c.methods)?;
    let base = root.join("target/peers");
    let work = base.join("work");
    let needs_numpyro = selected.iter().any(|s| s.peer.script == PeerScript::Numpyro);
    let needs_pdmp = selected.iter().any(|s| s.peer.script == PeerScript::PdmpJax);
    let numpyro_python = base.join("venv/bin/python");
    let pdmp_python = base.join("venv-pdmp/bin/python");
    let p = Paths {
        root: root.to_path_buf(),
        venv_python: if needs_numpyro { numpyro_python.clone() } else { pdmp_python.clone() },
        numpyro_python,
        pdmp_python,
        runs: base.join(format!("runs/n{}_seed{}", c.n, c.seed)),
        base,
        work,
    };
    std::fs::create_dir_all(&p.runs)
        .with_context(|| format!("cannot create {}", p.runs.display()))?;
    let pin = pin_prefix(c)?;

    // Each environment only when a selected comparison needs it (no packages listed otherwise).
    let environment = |needed: bool, what: &str, dir: &str, requirements: &str, packages| {
        if !needed {
            return Ok(BTreeMap::new());
        }
        println!("== peers: Python environment ({what})");
        let venv = Venv {
            dir: p.base.join(dir),
            requirements: p.root.join("bench/peers").join(requirements),
            packages,
        };
        ensure_venv(&p, c, &venv)
    };
    let versions =
        environment(needs_numpyro, "NumPyro, BlackJAX", "venv", "requirements.txt", PEER_PACKAGES)?;
    let pdmp_versions =
        environment(needs_pdmp, "pdmp-jax", "venv-pdmp", "requirements-pdmp.txt", PDMP_PACKAGES)?;
    copy_scripts(&p)?;

    println!("== peers: data");
    let (bin, header) = ensure_data(&p, c, &pin)?;
    let laplace = if needs_pdmp { Some(laplace_of(&bin)?) } else { None };

    // Peer runs (each tag once), then the tallmc runs on the same file.
    let mut peer_results: BTreeMap<String, Value> = BTreeMap::new();
    for cmp in &selected {
        let tag = (cmp.peer.tag)(c);
        if peer_results.contains_key(&tag) {
            continue;
        }
        println!("== peers: {} ({})", cmp.peer.label, tag);
        let r = match cmp.peer.script {
            PeerScript::Numpyro => match cmp.peer.scan {
                Some(scan) => run_peer_scan(&p, c, &pin, &cmp.peer, &tag, scan)?,
                None => {
                    fastest_of(c.repeat, "sampling_s", || run_peer(&p, c, &pin, &cmp.peer, &tag))?
                }
            },
            PeerScript::PdmpJax => {
                let l = laplace.as_ref().context("Laplace approximation")?;
                run_pdmpjax(&p, c, &pin, cmp, &tag, l)?
            }
        };
        peer_results.insert(tag, r);
    }

    let tallmc_bin = build_cli(&p)?;
    let mut rows = Vec::new();
    let mut pdmp_rows = Vec::new();
    let mut pending = Vec::new();
    for cmp in &selected {
        let peer = &peer_results[&(cmp.peer.tag)(c)];
        if let TallmcSide::Pdmp { label, sampler } = &cmp.tallmc {
            let l = laplace.as_ref().context("Laplace approximation")?;
            let peer_row = pdmp_peer_row(cmp, peer)?;
            let mut sides = Vec::new();
            for bound in ["envelope", "model"] {
                println!("== tallmc: {label}, --rate-bound {bound}");
                let t =
                    run_tallmc_pdmp(&p, c, &pin, &tallmc_bin, &bin, cmp, sampler, bound, peer, l)?;
                sides.push(pdmp_tallmc_row(
                    &format!("{label}, --rate-bound {bound}"),
                    bound,
                    &t,
                    l,
                )?);
            }
            pdmp_rows.push(pdmp_pair(cmp, sides, peer_row));
            continue;
        }
        let peer_row = peer_row(cmp, peer)?;
        match &cmp.tallmc {
            TallmcSide::Pending { label, planned } => {
                pending.push(json!({"key": cmp.key, "tallmc": label, "planned": planned,
                                    "peer": peer_row}));
            }
            TallmcSide::Cli { label, args, scan, per_step } => {
                println!("== tallmc: {label}");
                let scanned = match scan {
                    Some(grid) => {
                        Some(scan_step_size(&p, c, &pin, &tallmc_bin, &bin, cmp, grid(c), peer)?)
                    }
                    None => None,
                };
                let mut a = args(c);
                if let Some((h, _)) = &scanned {
                    a.extend(step_args(*h, *per_step));
                }
                let t = fastest_of(c.repeat, "sampling_s", || {
                    let mut t = run_tallmc(&p, c, &pin, &tallmc_bin, &bin, cmp.key, &a)?;
                    t["sampling_s"] =
                        t["totals"]["wall_seconds"]["sampling_max_over_chains"].clone();
                    Ok(t)
                })?;
                let mut tallmc_row = tallmc_row(label, &t)?;
                tallmc_row["sampling_s_repeats"] = t["sampling_s_repeats"].clone();
                if let Some((h, scan)) = scanned {
                    tallmc_row["step_size"] = json!(h);
                    tallmc_row["step_size_scan"] = scan;
                }
                rows.push(pair(cmp, tallmc_row, peer_row));
            }
            TallmcSide::Pdmp { .. } => unreachable!("handled above"),
        }
    }

    let report = json!({
        "date": today(),
        "n": c.n, "d": header["d"], "data_seed": c.seed, "sampler_seed": c.rng,
        "data": bin.display().to_string(), "data_sha256": header["sha256"],
        "machine": machine(c),
        "python_packages": versions,
        "python_packages_pdmp": pdmp_versions,
        "settings": {
            "hmc_nuts": {"chains": 1, "warmup": c.warmup, "draws": c.draws},
            "sgld": {"chains": 1, "burnin": c.sg_burnin, "draws": c.sg_steps, "batch": c.batch,
                     "scan_steps": c.scan_steps},
            "sghmc": {"chains": 1, "burnin": c.sg_burnin, "draws": c.sghmc_steps, "batch": c.batch,
                      "scan_steps": c.scan_steps},
            "pdmp": {"chains": 1, "events": c.pdmp_events, "warmup_events": pdmp_warmup_events(c),
                     "samples": c.pdmp_samples, "peer_grid_size": 10,
                     "tallmc_envelope": "one interval per band, 3 expected events per band",
                     "laplace_median_sd": laplace.as_ref().map(|l| l.median_sd),
                     "bps_refresh_rate": laplace.as_ref().map(|l| 1.0 / l.median_sd)},
        },
        "timing": "sampling phase only (after warmup); peers: wall time minus JAX tracing/compilation; \
                   tallmc: wall time of the sampling loop (data loading, Newton and warmup excluded); \
                   with --repeat K, the fastest of K runs of each side (all under sampling_s_repeats)",
        "repeat": c.repeat,
        "ess": "min over the 29 coordinates of arviz bulk ESS, computed by arviz on both sides",
        "evaluations": "per-datum gradient evaluations ∇ℓ_i in the sampling phase",
        "comparisons": rows,
        "pdmp_comparisons": pdmp_rows,
        "pending": pending,
        "total_seconds": started.elapsed().as_secs_f64(),
    });
    let md = markdown(&report);
    println!("\n{md}");
    let json_path = p.base.join("report.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&report)? + "\n")
        .with_context(|| format!("cannot write {}", json_path.display()))?;
    let md_path = p.base.join("report.md");
    std::fs::write(&md_path, &md).with_context(|| format!("cannot write {}", md_path.display()))?;
    // A copy beside the runs, so that reports of several n are kept.
    std::fs::write(p.runs.join("report.md"), &md)?;
    std::fs::write(p.runs.join("report.json"), serde_json::to_string_pretty(&report)? + "\n")?;
    println!(
        "wrote {} and {} (copies in {})",
        md_path.display(),
        json_path.display(),
        p.runs.display()
    );
    Ok(())
}

fn select(methods: &[String]) -> Result<Vec<&'static Comparison>> {
    if methods.is_empty() {
        return Ok(COMPARISONS
            .iter()
            .filter(|c| matches!(c.tallmc, TallmcSide::Cli { .. }))
            .collect());
    }
    methods
        .iter()
        .map(|m| {
            COMPARISONS.iter().find(|c| c.key == m.as_str()).ok_or_else(|| {
                let known: Vec<_> = COMPARISONS.iter().map(|c| c.key).collect();
                anyhow!("--methods {m}: unknown comparison; expected one of {}", known.join(", "))
            })
        })
        .collect()
}

fn pin_prefix(c: &PeerArgs) -> Result<Vec<String>> {
    if c.no_pin {
        return Ok(Vec::new());
    }
    let ok = Command::new("taskset").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        bail!(
            "taskset (util-linux) not found: it pins both sides to one CPU; install util-linux \
             or pass --no-pin (then both sides are still run single-threaded)"
        );
    }
    Ok(vec!["taskset".into(), "-c".into(), c.cpu.to_string()])
}

/// Runs a command, with its output saved to `log.{stdout,stderr}`; on failure the error shows
/// the tail of stderr.
fn run_logged(mut cmd: Command, what: &str, log: &Path) -> Result<Output> {
    let out = cmd.output().with_context(|| format!("cannot start {what}: {cmd:?}"))?;
    let _ = std::fs::write(log.with_extension("stdout"), &out.stdout);
    let _ = std::fs::write(log.with_extension("stderr"), &out.stderr);
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().collect();
        let tail = lines[lines.len().saturating_sub(30)..].join("\n");
        bail!(
            "{what} failed ({}); last lines of its stderr (all of it in {}):\n{tail}",
            out.status,
            log.with_extension("stderr").display()
        );
    }
    Ok(out)
}

fn command(pin: &[String], program: &Path) -> Command {
    let mut cmd = if let Some((first, rest)) = pin.split_first() {
        let mut cmd = Command::new(first);
        cmd.args(rest).arg(program);
        cmd
    } else {
        Command::new(program)
    };
    cmd.envs(ONE_THREAD_ENV.iter().copied());
    cmd
}

/// A virtual environment of peer packages.
struct Venv {
    /// Its directory (`target/peers/venv`, `target/peers/venv-pdmp`).
    dir: PathBuf,
    /// The pinned requirements installed into it.
    requirements: PathBuf,
    /// The packages whose versions the report records.
    packages: &'static [&'static str],
}

fn ensure_venv(p: &Paths, c: &PeerArgs, venv: &Venv) -> Result<BTreeMap<String, String>> {
    let requirements = &venv.requirements;
    let python = venv.dir.join("bin/python");
    let name = venv.dir.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    let req_name =
        requirements.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    if !python.exists() {
        if c.skip_install {
            bail!(
                "--skip-install, but there is no virtual environment at {}; run once without it",
                python.display()
            );
        }
        match Command::new(&c.python).arg("--version").output() {
            Ok(o) if o.status.success() => {}
            _ => bail!(
                "`{}` not found or not working: the peers need Python ≥ 3.10 with the venv module; \
                 install it (e.g. apt-get install python3 python3-venv) or pass --python PATH",
                c.python
            ),
        }
        let mut cmd = Command::new(&c.python);
        cmd.args(["-m", "venv"]).arg(&venv.dir);
        run_logged(
            cmd,
            "python3 -m venv (is the venv module installed? python3-venv)",
            &p.base.join(format!("{name}-create")),
        )?;
    }
    if !c.skip_install {
        let mut cmd = Command::new(&python);
        cmd.args(["-m", "pip", "install", "--disable-pip-version-check", "-q", "-r"])
            .arg(requirements);
        run_logged(
            cmd,
            &format!(
                "pip install -r bench/peers/{req_name} into {name} (needs PyPI; --skip-install \
                 reuses the venv)"
            ),
            &p.base.join(format!("{name}-pip-install")),
        )?;
    }
    // Record what is installed.
    let mut cmd = Command::new(&python);
    cmd.args(["-c", "import importlib.metadata as m, json, sys; print(json.dumps({**{p: m.version(p) for p in sys.argv[1:]}, 'python': sys.version.split()[0]}))"])
        .args(venv.packages);
    let out = run_logged(
        cmd,
        "reading the installed package versions",
        &p.base.join(format!("{name}-versions")),
    )?;
    let v: BTreeMap<String, String> = serde_json::from_slice(&out.stdout)?;
    println!("{}", v.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", "));
    Ok(v)
}

fn copy_scripts(p: &Paths) -> Result<()> {
    std::fs::create_dir_all(&p.work)?;
    for f in ["gen_data.py", "peer_common.py", "run_numpyro.py", "ess_csv.py", "run_pdmpjax.py"] {
        let from = p.root.join("bench/peers").join(f);
        std::fs::copy(&from, p.work.join(f))
            .with_context(|| format!("cannot copy {} to {}", from.display(), p.work.display()))?;
    }
    Ok(())
}

fn sha256(p: &Paths, file: &Path) -> Result<String> {
    let mut cmd = Command::new(&p.venv_python);
    cmd.args([
        "-c",
        "import hashlib, sys\nh = hashlib.sha256()\nwith open(sys.argv[1], 'rb') as f:\n    \
         for b in iter(lambda: f.read(1 << 22), b''):\n        h.update(b)\nprint(h.hexdigest())",
    ])
    .arg(file);
    let out = run_logged(cmd, "sha256 of the data", &p.base.join("sha256"))?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn ensure_data(p: &Paths, c: &PeerArgs, pin: &[String]) -> Result<(PathBuf, Value)> {
    let stem = p.work.join(format!("data/higgs_like_n{}_seed{}", c.n, c.seed));
    let (bin, sidecar) = (stem.with_extension("bin"), stem.with_extension("json"));
    if !(bin.exists() && sidecar.exists()) {
        let mut cmd = command(pin, &p.venv_python);
        cmd.current_dir(&p.work).args([
            "gen_data.py",
            "--n",
            &c.n.to_string(),
            "--seed",
            &c.seed.to_string(),
        ]);
        run_logged(cmd, "gen_data.py", &p.runs.join("gen_data"))?;
        println!("generated {}", bin.display());
    } else {
        println!("reusing {} (checking its sha256)", bin.display());
    }
    let header: Value = serde_json::from_str(
        &std::fs::read_to_string(&sidecar)
            .with_context(|| format!("cannot read {}", sidecar.display()))?,
    )
    .with_context(|| format!("{}: not valid JSON", sidecar.display()))?;
    let want = header["sha256"].as_str().unwrap_or_default().to_string();
    let got = sha256(p, &bin)?;
    if got != want {
        bail!(
            "sha256 mismatch: {} hashes to {got}, but its sidecar {} says {want}; the file was \
             changed or truncated. Delete both files to regenerate them.",
            bin.display(),
            sidecar.display()
        );
    }
    if let Some((_, _, known)) = KNOWN_SHA256.iter().find(|(n, s, _)| *n == c.n && *s == c.seed)
        && *known != got
    {
        println!(
            "WARNING: {} has sha256 {got}, not the published {known} (bench/peers/UPSTREAM_README.md): \
             another numpy version draws other numbers; both sides still read the same file",
            bin.display()
        );
    }
    println!("sha256 {got} (matches the sidecar)");
    Ok((bin, header))
}

/// `SCRIPT --n N --seed S --rng R --tag TAG --outdir RUNS`, run in the work folder: the
/// arguments every peer script takes first.
fn peer_script_args<'a>(
    cmd: &'a mut Command, p: &Paths, c: &PeerArgs, script: &str, tag: &str,
) -> &'a mut Command {
    cmd.current_dir(&p.work)
        .args([script, "--n", &c.n.to_string(), "--seed", &c.seed.to_string()])
        .args(["--rng", &c.rng.to_string(), "--tag", tag, "--outdir"])
        .arg(&p.runs)
}

/// Runs a peer script (output logged to `runs/TAG`) and reads the `runs/TAG.json` it writes,
/// with the machine's load average before and after the run added as `load_average`.
fn run_peer_script(p: &Paths, cmd: Command, script: &str, tag: &str) -> Result<Value> {
    let load_before = load_average();
    run_logged(cmd, &format!("peer run {tag} ({script})"), &p.runs.join(tag))?;
    let path = p.runs.join(format!("{tag}.json"));
    let mut v: Value = serde_json::from_str(
        &std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?,
    )?;
    v["load_average"] = json!([load_before, load_average()]);
    Ok(v)
}

/// Runs `run` `times` times (at least once) and returns the result with the smallest number at
/// `key` (seconds), with every run's number under `sampling_s_repeats`.
fn fastest_of(times: u32, key: &str, mut run: impl FnMut() -> Result<Value>) -> Result<Value> {
    let mut best: Option<Value> = None;
    let mut all = Vec::new();
    for _ in 0..times.max(1) {
        let v = run()?;
        let secs = num(&v, key)?;
        all.push(secs);
        if best.as_ref().is_none_or(|b| num(b, key).is_ok_and(|b| secs < b)) {
            best = Some(v);
        }
    }
    let mut v = best.context("no run")?;
    v["sampling_s_repeats"] = json!(all);
    Ok(v)
}

fn run_peer(p: &Paths, c: &PeerArgs, pin: &[String], side: &PeerSide, tag: &str) -> Result<Value> {
    let mut cmd = command(pin, &p.numpyro_python);
    peer_script_args(&mut cmd, p, c, "run_numpyro.py", tag).args((side.args)(c));
    let t = Instant::now();
    let v = run_peer_script(p, cmd, "run_numpyro.py", tag)?;
    println!(
        "{tag}: {:.0} s in all; min bulk ESS {:.0} in {:.2} s of sampling",
        t.elapsed().as_secs_f64(),
        num(&v, "ess_min")?,
        num(&v, "sampling_s")?
    );
    Ok(v)
}

/// The peer once per value of `scan` (tags `{tag}_{flag}{value}`); returns the run with the
/// highest ESS per second of sampling, with every run's value, tag and ESS/s under `scan`.
fn run_peer_scan(
    p: &Paths, c: &PeerArgs, pin: &[String], side: &PeerSide, tag: &str, scan: PeerScan,
) -> Result<Value> {
    let mut best: Option<(f64, Value)> = None;
    let mut tried = Vec::new();
    for &value in scan.values {
        let run_tag = format!("{tag}_{}{value}", scan.flag.trim_start_matches('-'));
        let mut a = (side.args)(c);
        set_flag(&mut a, scan.flag, value.to_string());
        let mut cmd = command(pin, &p.numpyro_python);
        peer_script_args(&mut cmd, p, c, "run_numpyro.py", &run_tag).args(a);
        let v = run_peer_script(p, cmd, "run_numpyro.py", &run_tag)?;
        let ess_per_s = num(&v, "ess_min")? / num(&v, "sampling_s")?;
        println!("{run_tag}: {} = {value}: min bulk ESS per second {ess_per_s:.1}", scan.flag);
        tried.push(json!({"value": value, "tag": run_tag, "ess_per_s": ess_per_s}));
        if best.as_ref().is_none_or(|(b, _)| ess_per_s > *b) {
            best = Some((ess_per_s, v));
        }
    }
    let (_, mut v) = best.context("a peer scan with no values")?;
    v["scan"] = json!({"flag": scan.flag, "runs": tried});
    Ok(v)
}

fn build_cli(p: &Paths) -> Result<PathBuf> {
    println!("== tallmc: cargo build --release -p tallmc-cli");
    let status = Command::new(env!("CARGO"))
        .current_dir(&p.root)
        .args(["build", "--quiet", "--release", "-p", "tallmc-cli"])
        .status()
        .context("cannot run cargo build")?;
    if !status.success() {
        bail!("cargo build --release -p tallmc-cli failed");
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| p.root.join("target"));
    Ok(target.join("release/tallmc"))
}

#[allow(clippy::too_many_arguments)]
fn run_tallmc(
    p: &Paths, c: &PeerArgs, pin: &[String], exe: &Path, bin: &Path, key: &str, args: &[String],
) -> Result<Value> {
    let out = p.runs.join(format!("tallmc_{key}"));
    let mut summary = tallmc_once(p, c, pin, exe, bin, &out, args)?;
    // The same ESS estimator as the peers: arviz on the CSV draws.
    let mut cmd = command(&[], &p.venv_python);
    cmd.current_dir(&p.work).arg("ess_csv.py").arg(out.join("chain_1.csv"));
    let o = run_logged(cmd, "ess_csv.py (arviz ESS of the tallmc draws)", &out.join("ess"))?;
    summary["arviz"] = serde_json::from_slice(&o.stdout)?;
    Ok(summary)
}

#[allow(clippy::too_many_arguments)]
fn tallmc_once(
    p: &Paths, c: &PeerArgs, pin: &[String], exe: &Path, bin: &Path, out: &Path, args: &[String],
) -> Result<Value> {
    let time_file = out.with_extension("time");
    let timed = Path::new("/usr/bin/time").exists();
    let mut cmd = if timed {
        // Whole-process CPU / wall: how much of its core the run got.
        let mut cmd = command(&[], Path::new("/usr/bin/time"));
        cmd.arg("-o").arg(&time_file).args(["-f", "%e %U %S"]).args(pin).arg(exe);
        cmd
    } else {
        command(pin, exe)
    };
    // `tallmc sample <SAMPLER> <flags>`: the sampler is the first of `args`.
    let (sampler, flags) = args.split_first().context("a tallmc run without a sampler")?;
    // The peers fit no intercept; the runs folder is scratch (a repeated run replaces the last).
    cmd.args(["sample", sampler, "--model", "logistic", "--no-intercept", "--overwrite", "--data"])
        .arg(bin)
        .args(["--chains", "1", "--threads", "1", "--init", "mode", "--seed", &c.rng.to_string()])
        .arg("--out")
        .arg(out)
        .args(flags);
    let _ = p;
    let load_before = load_average();
    run_logged(cmd, &format!("tallmc sample ({})", out.display()), &out.with_extension("log"))?;
    let path = out.join("summary.json");
    let mut v: Value = serde_json::from_str(
        &std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?,
    )?;
    v["load_average"] = json!([load_before, load_average()]);
    let times: Vec<f64> = std::fs::read_to_string(&time_file)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    if let [e, u, s] = times[..] {
        v["process_cpu_over_wall"] = json!((u + s) / e);
    }
    Ok(v)
}

/// The peer's scan, on tallmc: short runs over the grid, scored against the Laplace
/// approximation (mode and sds from the peer's run on the same file).
#[allow(clippy::too_many_arguments)]
fn scan_step_size(
    p: &Paths, c: &PeerArgs, pin: &[String], exe: &Path, bin: &Path, cmp: &Comparison,
    grid: Vec<f64>, peer: &Value,
) -> Result<(f64, Value)> {
    let map = floats(&peer["map"])?;
    let lsd = floats(&peer["laplace_sd"])?;
    let TallmcSide::Cli { args, per_step, .. } = &cmp.tallmc else { bail!("no tallmc side") };
    // Same method, shorter: the first fifth of the scan run is burn-in. A run of --scan-steps
    // integration steps, as the peer's: for SG-HMC max(200, scan_steps / L) trajectories.
    let base = args(c);
    let mut scan = Vec::new();
    let mut best: Option<(f64, f64)> = None;
    for (i, h) in grid.iter().enumerate() {
        let out = p.runs.join(format!("tallmc_{}_scan{i}", cmp.key));
        let extra = step_args(*h, *per_step);
        let steps_per_draw = extra
            .iter()
            .position(|x| x == "--num-steps")
            .and_then(|k| extra.get(k + 1)?.parse::<usize>().ok())
            .unwrap_or(1);
        let total = if steps_per_draw > 1 {
            (c.scan_steps / steps_per_draw).max(200)
        } else {
            c.scan_steps
        };
        let burn = total / 5;
        let mut with_step = base.clone();
        set_flag(&mut with_step, "--warmup", burn.to_string());
        set_flag(&mut with_step, "--draws", (total - burn).to_string());
        with_step.extend(extra);
        let sm = tallmc_once(p, c, pin, exe, bin, &out, &with_step)?;
        let params = sm["parameters"].as_array().context("summary.json: no parameters")?;
        let (mut me, mut se, mut finite) = (0.0, 0.0, true);
        for (j, q) in params.iter().enumerate() {
            let (m, sd) = (num(q, "mean").unwrap_or(f64::NAN), num(q, "sd").unwrap_or(f64::NAN));
            finite &= m.is_finite() && sd.is_finite();
            me += (m - map[j]).abs() / lsd[j];
            se += (sd / lsd[j] - 1.0).abs();
        }
        let d = params.len() as f64;
        let score = (me + se) / d;
        println!(
            "  scan h = {h:.3e}: score {score:.3} (mean err {:.3}, sd err {:.3})",
            me / d,
            se / d
        );
        scan.push(json!({"step_size": h, "score": if finite { json!(score) } else { Value::Null },
                         "mean_err": me / d, "sd_err": se / d}));
        if finite && best.is_none_or(|(_, b)| score < b) {
            best = Some((*h, score));
        }
    }
    let (h, _) = best.context("every scan run diverged")?;
    println!("  chosen h = {h:.3e}");
    Ok((h, Value::Array(scan)))
}

/// `--step-size H` and the arguments that depend on H.
fn step_args(h: f64, per_step: Option<fn(f64) -> Vec<String>>) -> Vec<String> {
    let mut a = vec!["--step-size".to_string(), format!("{h:e}")];
    a.extend(per_step.map(|f| f(h)).unwrap_or_default());
    a
}

fn set_flag(a: &mut [String], flag: &str, value: String) {
    if let Some(i) = a.iter().position(|x| x == flag) {
        a[i + 1] = value;
    }
}

fn num(v: &Value, key: &str) -> Result<f64> {
    v[key].as_f64().with_context(|| format!("missing number `{key}`"))
}

fn floats(v: &Value) -> Result<Vec<f64>> {
    v.as_array()
        .context("expected an array")?
        .iter()
        .map(|x| x.as_f64().context("expected a number"))
        .collect()
}

fn peer_row(cmp: &Comparison, v: &Value) -> Result<Value> {
    let draws = num(v, "draws")?;
    let secs = num(v, "sampling_s")?;
    let ess = num(v, "ess_min")?;
    let evals_per_draw = num(v, "datapoint_grads_per_draw")?;
    Ok(json!({
        "side": "peer", "label": cmp.peer.label, "tag": v["tag"], "draws": draws,
        "ess_min": ess, "sampling_s": secs, "warmup_s": v["warmup_s"],
        "compile_s": num(v, "warmup_compile_s")? + num(v, "sampling_compile_s")?,
        "ess_per_s": ess / secs,
        "evals_per_draw": evals_per_draw,
        "ess_per_1000_evals": 1000.0 * ess / (evals_per_draw * draws),
        "step_size": v["step_size"], "mean_accept_prob": v["mean_accept_prob"],
        "divergences": v["divergences_sampling"], "command": v["command"],
        "grad_eval_unit": v["grad_eval_unit"],
        "load_average": v["load_average"],
        "cpu_over_wall": num(v, "sampling_cpu_s").ok().zip(num(v, "sampling_wall_s").ok()).map(|(a, b)| a / b),
        "scan": v["scan"],
        "sampling_s_repeats": v["sampling_s_repeats"],
    }))
}

fn tallmc_row(label: &str, v: &Value) -> Result<Value> {
    let t = &v["totals"];
    let draws =
        (v["draws"].as_u64().context("draws")? * v["chains"].as_u64().context("chains")?) as f64;
    let secs = t["wall_seconds"]["sampling_max_over_chains"].as_f64().context("wall_seconds")?;
    let ess = num(&v["arviz"], "ess_min")?;
    let grads = t["evals_sampling"]["gradients"].as_f64().context("evals_sampling")?;
    let own_ess = v["parameters"]
        .as_array()
        .map(|ps| ps.iter().filter_map(|q| q["ess_bulk"].as_f64()).fold(f64::INFINITY, f64::min));
    Ok(json!({
        "side": "tallmc", "label": label, "draws": draws,
        "ess_min": ess, "ess_min_tallmc_diagnostics": own_ess,
        "sampling_s": secs, "warmup_s": t["wall_seconds"]["warmup_max_over_chains"],
        "setup_s": t["wall_seconds"]["setup"],
        "ess_per_s": ess / secs,
        "evals_per_draw": grads / draws,
        "ess_per_1000_evals": 1000.0 * ess / grads,
        "evals_per_draw_all_kinds": t["evals_per_draw"],
        "mean_accept_prob": t["mean_accept_stat"], "divergences": t["divergences"],
        "adaptation": v["adaptation"],
        "load_average": v["load_average"],
        "cpu_over_wall": v["process_cpu_over_wall"],
    }))
}

fn pair(cmp: &Comparison, tallmc: Value, peer: Value) -> Value {
    let ratio = |k: &str| match (tallmc[k].as_f64(), peer[k].as_f64()) {
        (Some(a), Some(b)) if b > 0.0 => json!(a / b),
        _ => Value::Null,
    };
    json!({
        "key": cmp.key,
        "tallmc": tallmc.clone(), "peer": peer.clone(),
        "ratio_ess_per_s": ratio("ess_per_s"),
        "ratio_ess_per_1000_evals": ratio("ess_per_1000_evals"),
        "settings": cmp.settings,
    })
}

fn machine(c: &PeerArgs) -> Value {
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_default();
    json!({
        "cpus": cpus, "cpu_model": model,
        "pinned_cpu": if c.no_pin { Value::Null } else { json!(c.cpu) },
        "threads": "1 on both sides (tallmc --threads 1; XLA one device, Eigen single-threaded)",
        "env": ONE_THREAD_ENV.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
    })
}

/// The 1-minute load average (other processes on the machine slow both sides down).
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

fn today() -> String {
    Command::new("date")
        .arg("+%Y-%m-%d")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// The event columns of the PDMP table, with their significant digits: events, seconds,
/// events/s, full-data gradients, Hessian-vector products and proposals per event, bound
/// violations, trajectory time.
const PDMP_EVENT_COLUMNS: [(&str, usize); 8] = [
    ("events", 0),
    ("sampling_s", 1),
    ("events_per_s", 1),
    ("full_gradients_per_event", 2),
    ("hvps_per_event", 2),
    ("proposals_per_event", 2),
    ("bound_violations", 0),
    ("trajectory_time", 4),
];

/// The cells of one run's row from method to ESS per 1,000 evaluations: label, draws, ESS,
/// seconds, ESS/s, evaluations per draw, ESS per 1,000 evaluations.
fn run_cells(v: &Value) -> String {
    let numbers = [
        ("draws", 0),
        ("ess_min", 0),
        ("sampling_s", 2),
        ("ess_per_s", 1),
        ("evals_per_draw", 0),
        ("ess_per_1000_evals", 5),
    ];
    format!("{} | {}", v["label"].as_str().unwrap_or(""), cells(v, &numbers))
}

/// `v[key]` with `digits` significant digits for each `(key, digits)`, as table cells.
fn cells(v: &Value, columns: &[(&str, usize)]) -> String {
    columns.iter().map(|&(key, digits)| f(&v[key], digits)).collect::<Vec<_>>().join(" | ")
}

fn f(v: &Value, digits: usize) -> String {
    v.as_f64().map_or("–".into(), |x| {
        if x.abs() >= 1e5 { format!("{x:.3e}") } else { format!("{x:.digits$}") }
    })
}

/// The report: one table, then the settings.
/// One line per comparison whose peer side was a scan: every value's ESS/s, and tallmc's
/// subsample size when its adaptation reports one.
fn scan_notes(m: &mut String, r: &Value) {
    for c in r["comparisons"].as_array().into_iter().flatten() {
        let scan = &c["peer"]["scan"];
        let Some(runs) = scan["runs"].as_array() else { continue };
        let tried: Vec<String> = runs
            .iter()
            .map(|x| {
                format!(
                    "{} = {}: {} ESS/s",
                    scan["flag"].as_str().unwrap_or(""),
                    x["value"],
                    f(&x["ess_per_s"], 1)
                )
            })
            .collect();
        let own_m = c["tallmc"]["adaptation"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|chain| chain.as_array().into_iter().flatten())
            .filter_map(Value::as_str)
            .find(|line| line.starts_with("Subsample size"))
            .map(|line| format!("; tallmc's own: {line}"))
            .unwrap_or_default();
        let _ = writeln!(
            m,
            "\n{}: the peer was run at {} and its best kept{own_m}.",
            c["key"].as_str().unwrap_or(""),
            tried.join(", ")
        );
    }
}

fn markdown(r: &Value) -> String {
    let mut m = String::new();
    let _ = writeln!(
        m,
        "# tallmc vs peers — higgs-like logistic regression, n = {}, d = {}\n",
        r["n"], r["d"]
    );
    let _ = writeln!(
        m,
        "Measured {} on this machine ({}; {} CPUs, every run pinned to one CPU, one thread). \
         Data `{}` (sha256 `{}`), read by both sides.\n",
        r["date"].as_str().unwrap_or(""),
        r["machine"]["cpu_model"].as_str().unwrap_or(""),
        r["machine"]["cpus"],
        r["data"].as_str().unwrap_or(""),
        r["data_sha256"].as_str().unwrap_or("")
    );
    let has_main =
        ["comparisons", "pending"].iter().any(|k| r[*k].as_array().is_some_and(|a| !a.is_empty()));
    if has_main {
        let _ = writeln!(
            m,
            "ESS = min over the 29 coordinates of bulk ESS (arviz, both sides). Seconds = sampling \
         phase only: peers minus JAX compilation, tallmc without data loading, Newton or warmup. \
         Evaluations = per-datum gradient evaluations ∇ℓ_i in the sampling phase. Load = the \
         machine's 1-minute load average before–after the run, CPU/wall = the share of its core the \
         run got (peers: sampling phase; tallmc: whole process): other work on the machine slows \
         both sides, so compare within a run.\n"
        );
        let _ = writeln!(
            m,
            "| comparison | side | method | draws | ESS | seconds | ESS/s | evals/draw | ESS per 1,000 evals | tallmc/peer ESS/s | tallmc/peer ESS/1k evals | load | CPU/wall |"
        );
        let _ = writeln!(m, "|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for c in r["comparisons"].as_array().into_iter().flatten() {
            for side in ["tallmc", "peer"] {
                let v = &c[side];
                let (r1, r2) = if side == "tallmc" {
                    (f(&c["ratio_ess_per_s"], 2) + "×", f(&c["ratio_ess_per_1000_evals"], 2) + "×")
                } else {
                    (String::new(), String::new())
                };
                let _ = writeln!(
                    m,
                    "| {} | {side} | {} | {r1} | {r2} | {}–{} | {} |",
                    c["key"].as_str().unwrap_or(""),
                    run_cells(v),
                    f(&v["load_average"][0], 1),
                    f(&v["load_average"][1], 1),
                    f(&v["cpu_over_wall"], 2),
                );
            }
        }
        for c in r["pending"].as_array().into_iter().flatten() {
            let _ = writeln!(
                m,
                "| {} | tallmc | {} — **pending** (`{}`) | | | | | | | | | | |",
                c["key"].as_str().unwrap_or(""),
                c["tallmc"].as_str().unwrap_or(""),
                c["planned"].as_str().unwrap_or("")
            );
            let _ = writeln!(
                m,
                "| {} | peer | {} | | | | |",
                c["key"].as_str().unwrap_or(""),
                run_cells(&c["peer"])
            );
        }
    }
    scan_notes(&mut m, r);
    pdmp_markdown(&mut m, r);
    if has_main {
        let _ = writeln!(m, "\n## Settings, side by side (tallmc ↔ peer)\n");
        for c in r["comparisons"].as_array().into_iter().flatten() {
            let _ = writeln!(m, "**{}**", c["key"].as_str().unwrap_or(""));
            for s in c["settings"].as_array().into_iter().flatten() {
                let _ = writeln!(m, "- {}", s.as_str().unwrap_or(""));
            }
            for side in ["tallmc", "peer"] {
                let v = &c[side];
                if !v["step_size"].is_null() {
                    let _ = writeln!(m, "- {side} step size: {}", v["step_size"]);
                }
                if let Some(all) = v["sampling_s_repeats"].as_array().filter(|a| a.len() > 1) {
                    let secs: Vec<String> =
                        all.iter().filter_map(Value::as_f64).map(|t| format!("{t:.2}")).collect();
                    let _ = writeln!(
                        m,
                        "- {side} sampling seconds of the {} timed runs (the table keeps the fastest): {}",
                        secs.len(),
                        secs.join(", ")
                    );
                }
            }
            if let Some(cmd) = c["peer"]["command"].as_str() {
                let _ = writeln!(m, "- peer command: `{cmd}`");
            }
            let _ = writeln!(m);
        }
    }
    let _ = writeln!(m, "## Environment\n");
    if r["python_packages"].as_object().is_some_and(|o| !o.is_empty()) {
        let _ = writeln!(m, "- Python packages: {}", r["python_packages"]);
    }
    if r["python_packages_pdmp"].as_object().is_some_and(|o| !o.is_empty()) {
        let _ = writeln!(m, "- Python packages (pdmp-jax): {}", r["python_packages_pdmp"]);
    }
    let _ = writeln!(m, "- Environment of every timed process: `{}`", r["machine"]["env"]);
    let _ = writeln!(m, "- Whole run: {:.0} s", r["total_seconds"].as_f64().unwrap_or(0.0));
    m
}

/// The Laplace approximation of the data file's posterior (the mode and the sds), as
/// `tallmc sample --model logistic` finds it: the BPS refresh rate and the accuracy check of
/// the full-data PDMP comparisons use it.
struct LaplaceInfo {
    mode: Vec<f64>,
    sds: Vec<f64>,
    /// Δ_L: the median of `sds` (tallmc's default grid step; 1/Δ_L its default BPS refresh).
    median_sd: f64,
}

fn laplace_of(bin: &Path) -> Result<LaplaceInfo> {
    use tallmc_models::{DesignOptions, LoadOptions, LogisticRegression};
    let data = tallmc_models::load(bin, &LoadOptions::default())
        .with_context(|| format!("cannot load {}", bin.display()))?;
    let model = LogisticRegression::new(data, DesignOptions::default(), 10.0)?;
    let d = tallmc_core::Terms::dim(&model);
    let l = tallmc_samplers::laplace_approximation(
        &model,
        &vec![0.0; d],
        tallmc_samplers::NewtonOptions::default(),
    )
    .context("Newton's method on the peer data")?;
    let sds = l.sds();
    let mut sorted = sds.clone();
    sorted.sort_by(f64::total_cmp);
    let median_sd = sorted[d / 2];
    println!("Laplace approximation: median posterior sd Δ_L = {median_sd:.4e}");
    Ok(LaplaceInfo { mode: l.mode, sds, median_sd })
}

/// `/usr/bin/time -o FILE -f "%e %U %S"` in front of a pinned program, when it exists.
fn timed_command(pin: &[String], program: &Path, time_file: &Path) -> Command {
    if Path::new("/usr/bin/time").exists() {
        let mut cmd = command(&[], Path::new("/usr/bin/time"));
        cmd.arg("-o").arg(time_file).args(["-f", "%e %U %S"]).args(pin).arg(program);
        cmd
    } else {
        command(pin, program)
    }
}

/// CPU / wall of a process timed by [`timed_command`].
fn cpu_over_wall(time_file: &Path) -> Option<f64> {
    let times: Vec<f64> = std::fs::read_to_string(time_file)
        .ok()?
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    match times[..] {
        [e, u, s] if e > 0.0 => Some((u + s) / e),
        _ => None,
    }
}

/// One `run_pdmpjax.py` run in pdmp-jax's environment (BPS with refresh rate 1/Δ_L).
fn run_pdmpjax(
    p: &Paths, c: &PeerArgs, pin: &[String], cmp: &Comparison, tag: &str, laplace: &LaplaceInfo,
) -> Result<Value> {
    let time_file = p.runs.join(format!("{tag}.time"));
    let mut cmd = timed_command(pin, &p.pdmp_python, &time_file);
    peer_script_args(&mut cmd, p, c, "run_pdmpjax.py", tag).args((cmp.peer.args)(c));
    if cmp.key == "bps" {
        cmd.args(["--refresh", &format!("{:e}", 1.0 / laplace.median_sd)]);
    }
    let command_line = format!(
        "python {}",
        cmd.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .skip_while(|a| a != "run_pdmpjax.py")
            .collect::<Vec<_>>()
            .join(" ")
    );
    let t = Instant::now();
    let mut v = run_peer_script(p, cmd, "run_pdmpjax.py", tag)?;
    v["process_cpu_over_wall"] = json!(cpu_over_wall(&time_file));
    v["command"] = json!(command_line);
    println!(
        "{tag}: {:.0} s in all; {:.1} events/s, min bulk ESS {:.0} in {:.2} s of sampling",
        t.elapsed().as_secs_f64(),
        num(&v, "events_per_s")?,
        num(&v, "ess_bulk_min")?,
        num(&v, "sampling_s")?
    );
    Ok(v)
}

/// One tallmc run of a full-data PDMP comparison with rate bound `bound`: the peer's events
/// budget, warmup over the same share of the peer's trajectory time, grid draws at
/// Δ = T_peer/(4S) thinned to S evenly spaced ones, BPS refresh 1/Δ_L; arviz ESS of the S draws.
#[allow(clippy::too_many_arguments)]
fn run_tallmc_pdmp(
    p: &Paths, c: &PeerArgs, pin: &[String], exe: &Path, bin: &Path, cmp: &Comparison,
    sampler: &str, bound: &str, peer: &Value, laplace: &LaplaceInfo,
) -> Result<Value> {
    let t_peer = num(peer, "trajectory_time")?;
    let samples = c.pdmp_samples;
    let fine = PDMP_OVERSAMPLE * samples;
    let grid = t_peer / fine as f64;
    let warmup = ((fine as f64) * pdmp_warmup_events(c) as f64 / c.pdmp_events as f64).round();
    // In θ, as pdmp-jax runs (with the envelope tallmc would otherwise run whitened).
    let mut args = s(&[sampler, "--rate-bound", bound, "--frame", "original"]);
    args.extend([
        "--events".into(),
        c.pdmp_events.to_string(),
        "--grid".into(),
        format!("{grid:e}"),
        "--warmup".into(),
        format!("{warmup:.0}"),
    ]);
    if sampler == "bps" {
        args.extend(["--refresh-rate".into(), format!("{:e}", 1.0 / laplace.median_sd)]);
    }
    let out = p.runs.join(format!("tallmc_{}_{bound}", cmp.key));
    let mut v = tallmc_once(p, c, pin, exe, bin, &out, &args)?;
    // Thin to S evenly spaced grid draws (row j is x((j + 1)Δ); keep rows ≈ (i + 1)·M/S − 1).
    let csv = out.join("chain_1.csv");
    let text =
        std::fs::read_to_string(&csv).with_context(|| format!("cannot read {}", csv.display()))?;
    let mut lines = text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    let header = lines.next().context("tallmc CSV without a header")?;
    let rows: Vec<&str> = lines.collect();
    let m = rows.len();
    let keep = samples.min(m);
    let mut thinned = String::with_capacity(text.len() / PDMP_OVERSAMPLE + header.len());
    thinned.push_str(header);
    thinned.push('\n');
    for i in 0..keep {
        let j = ((i + 1) * m / keep).saturating_sub(1);
        thinned.push_str(rows[j]);
        thinned.push('\n');
    }
    let thinned_path = out.join(format!("chain_1_grid{keep}.csv"));
    std::fs::write(&thinned_path, thinned)
        .with_context(|| format!("cannot write {}", thinned_path.display()))?;
    let mut cmd = command(&[], &p.venv_python);
    cmd.current_dir(&p.work).arg("ess_csv.py").arg(&thinned_path);
    let o = run_logged(cmd, "ess_csv.py (arviz ESS of the tallmc draws)", &out.join("ess"))?;
    v["arviz"] = serde_json::from_slice(&o.stdout)?;
    v["grid_draws_made"] = json!(m);
    v["grid_draws_kept"] = json!(keep);
    v["command_args"] = json!(args.join(" "));
    let events = tallmc_events(&v)?;
    let secs = v["totals"]["wall_seconds"]["sampling_max_over_chains"].as_f64().unwrap_or(f64::NAN);
    println!(
        "tallmc {sampler} --rate-bound {bound}: {events} events in {secs:.2} s ({:.1} events/s), \
         min bulk ESS {:.0} of {keep} draws (of {m} made)",
        events as f64 / secs,
        num(&v["arviz"], "ess_min")?
    );
    Ok(v)
}

/// Velocity changes of a tallmc run: bounces + refreshes + divergences.
fn tallmc_events(v: &Value) -> Result<u64> {
    let e = &v["events"];
    let get = |k: &str| e[k].as_u64().with_context(|| format!("summary.json: events.{k}"));
    Ok(get("bounces")? + get("refreshes")? + get("divergences")?)
}

fn pdmp_peer_row(cmp: &Comparison, v: &Value) -> Result<Value> {
    let events = v["config"]["events"].as_f64().context("config.events")?;
    let secs = num(v, "sampling_s")?;
    let ess = num(v, "ess_bulk_min")?;
    let rejected = num(v, "rejected")?;
    let errors = num(v, "bound_errors")?;
    Ok(json!({
        "side": "peer", "label": cmp.peer.label, "tag": v["tag"],
        "events": events, "sampling_s": secs, "events_per_s": events / secs,
        "full_gradients_per_event": num(v, "gradients_per_event")?,
        "hvps_per_event": num(v, "hvps_per_event")?,
        "proposals_per_event": (events + rejected + errors) / events,
        "bound_violations": errors, "horizon_hits": v["horizon_hits"],
        "trajectory_time": num(v, "trajectory_time")?,
        "draws": v["config"]["samples"],
        "ess_min": ess, "ess_median": v["ess_bulk_median"], "ess_per_s": ess / secs,
        "max_mean_error_laplace_sd": v["max_abs_mean_error_laplace_sd"],
        "compile_s": num(v, "warmup_compile_s")? + num(v, "sampling_compile_s")?,
        "warmup_s": v["warmup_wall_s"],
        "command": v["command"],
        "load_average": v["load_average"],
        "cpu_over_wall": v["process_cpu_over_wall"],
    }))
}

fn pdmp_tallmc_row(label: &str, bound: &str, v: &Value, laplace: &LaplaceInfo) -> Result<Value> {
    let n = v["n"].as_f64().context("summary.json: n")?;
    let t = &v["totals"];
    let events = tallmc_events(v)? as f64;
    let secs = t["wall_seconds"]["sampling_max_over_chains"].as_f64().context("wall_seconds")?;
    let ev = &t["evals_sampling"];
    let per_event =
        |k: &str| ev[k].as_f64().map(|x| x / n / events).with_context(|| format!("evals.{k}"));
    let ess = num(&v["arviz"], "ess_min")?;
    let means = floats(&v["arviz"]["mean"])?;
    let mean_err = means
        .iter()
        .zip(&laplace.mode)
        .zip(&laplace.sds)
        .map(|((m, mode), sd)| (m - mode).abs() / sd)
        .fold(0.0, f64::max);
    let proposals = v["events"]["proposals"].as_f64().context("events.proposals")?;
    Ok(json!({
        "side": "tallmc", "label": label, "rate_bound": bound,
        "events": events, "sampling_s": secs, "events_per_s": events / secs,
        "full_gradients_per_event": per_event("gradients")?,
        "hvps_per_event": per_event("hessians")?,
        "terms_per_event": per_event("terms")?,
        "proposals_per_event": proposals / events,
        "bound_violations": v["events"]["violations"],
        "trajectory_time": v["events"]["trajectory_time_sampling"],
        "draws": v["grid_draws_kept"], "grid_draws_made": v["grid_draws_made"],
        "grid_step": v["grid_step"],
        "ess_min": ess, "ess_median": v["arviz"]["ess_median"], "ess_per_s": ess / secs,
        "ess_min_all_grid_draws_tallmc_diagnostics": v["parameters"].as_array().map(|ps| {
            ps.iter().filter_map(|q| q["ess_bulk"].as_f64()).fold(f64::INFINITY, f64::min)
        }),
        "max_mean_error_laplace_sd": mean_err,
        "setup_s": t["wall_seconds"]["setup"], "warmup_s": t["wall_seconds"]["warmup_max_over_chains"],
        "command_args": v["command_args"],
        "load_average": v["load_average"],
        "cpu_over_wall": v["process_cpu_over_wall"],
    }))
}

fn pdmp_pair(cmp: &Comparison, tallmc: Vec<Value>, peer: Value) -> Value {
    let ratio = |t: &Value, k: &str| match (t[k].as_f64(), peer[k].as_f64()) {
        (Some(a), Some(b)) if b > 0.0 => json!(a / b),
        _ => Value::Null,
    };
    let ratios: Vec<Value> = tallmc
        .iter()
        .map(|t| {
            json!({
                "rate_bound": t["rate_bound"],
                "ratio_events_per_s": ratio(t, "events_per_s"),
                "ratio_ess_per_s": ratio(t, "ess_per_s"),
                "ratio_full_gradients_per_event": ratio(t, "full_gradients_per_event"),
            })
        })
        .collect();
    json!({
        "key": cmp.key, "tallmc": tallmc, "peer": peer, "ratios": ratios,
        "settings": cmp.settings,
    })
}

/// The full-data PDMP table of the report.
fn pdmp_markdown(m: &mut String, r: &Value) {
    let rows = r["pdmp_comparisons"].as_array().cloned().unwrap_or_default();
    if rows.is_empty() {
        return;
    }
    let set = &r["settings"]["pdmp"];
    let _ = writeln!(
        m,
        "\n## Full-data Zig-Zag and BPS vs pdmp-jax\n\n\
         Sampling phase only (peer: minus JAX compilation; tallmc: without loading, Newton and \
         warmup). {} events after {} warmup events on each side; ESS = min (median) over the 29 \
         coordinates of arviz bulk ESS of {} grid draws evenly spaced over the sampling \
         trajectory. Full gradients and HVPs per event = per-datum gradient and Hessian-vector \
         evaluations / n / events (peer: from pdmp-jax's counters). BPS refresh rate {} on both \
         sides (1/Δ_L, Δ_L = median Laplace sd {}). Mean error = max over coordinates of \
         |mean − mode| / Laplace sd.\n",
        set["events"],
        set["warmup_events"],
        set["samples"],
        f(&set["bps_refresh_rate"], 2),
        f(&set["laplace_median_sd"], 6),
    );
    let _ = writeln!(
        m,
        "| comparison | side | method | events | seconds | events/s | full gradients / event | HVPs / event | proposals / event | violations | trajectory time | ESS min (median) | ESS/s | mean error | tallmc/peer events/s | tallmc/peer ESS/s | load | CPU/wall |"
    );
    let _ =
        writeln!(m, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for c in &rows {
        let key = c["key"].as_str().unwrap_or("");
        let tallmc = c["tallmc"].as_array().cloned().unwrap_or_default();
        let ratios = c["ratios"].as_array().cloned().unwrap_or_default();
        let mut sides: Vec<(&str, &Value, Option<&Value>)> =
            tallmc.iter().zip(&ratios).map(|(t, q)| ("tallmc", t, Some(q))).collect();
        sides.push(("peer", &c["peer"], None));
        for (side, v, q) in sides {
            let (r1, r2) = q.map_or((String::new(), String::new()), |q| {
                (f(&q["ratio_events_per_s"], 2) + "×", f(&q["ratio_ess_per_s"], 2) + "×")
            });
            let _ = writeln!(
                m,
                "| {key} | {side} | {} | {} | {} ({}) | {} | {r1} | {r2} | {}–{} | {} |",
                v["label"].as_str().unwrap_or(""),
                cells(v, &PDMP_EVENT_COLUMNS),
                f(&v["ess_min"], 0),
                f(&v["ess_median"], 0),
                cells(v, &[("ess_per_s", 2), ("max_mean_error_laplace_sd", 2)]),
                f(&v["load_average"][0], 1),
                f(&v["load_average"][1], 1),
                f(&v["cpu_over_wall"], 2),
            );
        }
    }
    let _ = writeln!(m, "\n### Settings, side by side (tallmc ↔ pdmp-jax)\n");
    if let Some(c) = rows.first() {
        for s in c["settings"].as_array().into_iter().flatten() {
            let _ = writeln!(m, "- {}", s.as_str().unwrap_or(""));
        }
    }
    for c in &rows {
        if let Some(cmd) = c["peer"]["command"].as_str() {
            let _ = writeln!(m, "- {} peer command: `{cmd}`", c["key"].as_str().unwrap_or(""));
        }
        for t in c["tallmc"].as_array().into_iter().flatten() {
            if let Some(a) = t["command_args"].as_str() {
                let _ = writeln!(
                    m,
                    "- {} tallmc: `tallmc sample --model logistic --data BIN --chains 1 --threads 1 --init mode {a}`",
                    c["key"].as_str().unwrap_or("")
                );
            }
        }
    }
}
