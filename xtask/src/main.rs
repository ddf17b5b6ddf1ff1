//! `cargo xtask`: reproduction suites, benchmarks and reference fixtures.
//!
//! ```text
//! cargo xtask reproduce [SUITE] [--quick|--full] [--seed S]   # default: every suite, quick
//! cargo xtask bench [--quick] [--pdmp-n N] [--only NAME]      # in-repo benchmarks (see docs/benchmarks.md)
//! cargo xtask bench --peers [--n N] [--methods hmc,zigzag]    # tallmc vs NumPyro / BlackJAX / pdmp-jax
//! cargo xtask reference                                       # regenerate the long reference runs
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod peers;
mod progress;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};
use clap::{Parser, Subcommand};
use tallmc_reproduce::{Context, Mode, reference, suites};

#[derive(Debug, Parser)]
#[command(name = "cargo xtask", about = "tallmc project automation")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Run reproduction suites; write `target/reproduce/SUITE/{summary.json, report.md, *.svg}`.
    Reproduce {
        /// Suite to run (default: all of them, in order).
        suite: Option<String>,
        /// Quick sizes: minutes on 2 cores (the default).
        #[arg(long, conflicts_with = "full")]
        quick: bool,
        /// Full sizes, approaching the papers' scale: hours.
        #[arg(long)]
        full: bool,
        /// Master seed of the samplers.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Benchmarks: per-datum evaluation throughput of the models (ratios to a plain dot product)
    /// and the PDMP kernels ZZ-CV and SBPS against HMC-ECS (ratios, n = 10⁶ by default); with
    /// --peers, tallmc against the NumPyro / BlackJAX / pdmp-jax scripts of bench/peers/ on the
    /// same data file (see docs/benchmarks.md).
    Bench {
        /// Compare with the peer scripts (installs Python packages into target/peers/venv and
        /// target/peers/venv-pdmp).
        #[arg(long)]
        peers: bool,
        /// In-repo benchmarks: the PDMP benchmark at n = 10⁵ with shorter runs (about a minute),
        /// and family_ecs at n = 10⁵.
        #[arg(long, conflicts_with = "peers")]
        quick: bool,
        /// In-repo benchmarks: n of the PDMP benchmark (default 10⁶, or 10⁵ with --quick).
        #[arg(long, value_name = "N", conflicts_with = "peers")]
        pdmp_n: Option<usize>,
        /// In-repo benchmarks: run only this one (term_throughput, sg_gradient, pdmp_throughput or
        /// family_ecs).
        #[arg(long, value_name = "NAME", conflicts_with = "peers")]
        only: Option<String>,
        /// Options of --peers.
        #[command(flatten)]
        peer: peers::PeerArgs,
    },
    /// Regenerate the long exact reference runs committed as fixtures (about an hour on 2 cores).
    Reference {
        /// Chains.
        #[arg(long, default_value_t = 4)]
        chains: usize,
        /// Warmup iterations per chain.
        #[arg(long, default_value_t = 50_000)]
        warmup: usize,
        /// Draws per chain.
        #[arg(long, default_value_t = 500_000)]
        draws: usize,
        /// Seed of the chains.
        #[arg(long, default_value_t = 20_261_121)]
        seed: u64,
    },
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").into()
}

/// The in-repo benchmarks: `(crate, bench)`.
const BENCHES: &[(&str, &str)] = &[
    ("tallmc-models", "term_throughput"),
    ("tallmc-models", "sg_gradient"),
    ("tallmc-samplers", "pdmp_throughput"),
    ("tallmc-run", "family_ecs"),
];

/// Runs the in-repo benchmarks (`cargo bench`, release profile); the PDMP report is also
/// written to `target/bench/pdmp_throughput_n{N}.md`, the GLM families' HMC-ECS table to
/// `target/bench/family_ecs.md`.
fn in_repo_benches(
    root: &Path, quick: bool, pdmp_n: Option<usize>, only: Option<&str>,
) -> Result<()> {
    if let Some(name) = only
        && !BENCHES.iter().any(|(_, b)| *b == name)
    {
        let known: Vec<_> = BENCHES.iter().map(|(_, b)| *b).collect();
        bail!("--only {name}: unknown benchmark; expected one of {}", known.join(", "));
    }
    for (krate, bench) in BENCHES {
        if only.is_some_and(|o| o != *bench) {
            continue;
        }
        let mut cmd = Command::new(env!("CARGO"));
        cmd.current_dir(root).args(["bench", "-p", krate, "--bench", bench]);
        // The benchmarks that write a report (under target/bench), with their arguments; a
        // bench's --quick comes first, so that the arguments after it override its sizes.
        let report = match *bench {
            "pdmp_throughput" => {
                let n = pdmp_n.unwrap_or(if quick { 100_000 } else { 1_000_000 });
                Some((vec!["--n".to_string(), n.to_string()], format!("pdmp_throughput_n{n}.md")))
            }
            "family_ecs" => Some((Vec::new(), "family_ecs.md".to_string())),
            _ => None,
        };
        if let Some((args, file)) = report {
            let dir = root.join("target/bench");
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            cmd.arg("--");
            if quick {
                cmd.arg("--quick");
            }
            cmd.args(args).arg("--out").arg(dir.join(file));
        }
        println!("== cargo bench -p {krate} --bench {bench}");
        let status = cmd.status().context("cannot run cargo bench")?;
        if !status.success() {
            bail!("cargo bench -p {krate} --bench {bench} failed");
        }
    }
    Ok(())
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let root = workspace_root();
    match cli.command {
        Cmd::Reproduce { suite, quick: _, full, seed } => {
            let mode = if full { Mode::Full } else { Mode::Quick };
            let names: Vec<&str> = match &suite {
                Some(s) => vec![s.as_str()],
                None => suites::ALL.to_vec(),
            };
            let reporter = progress::Bars::new();
            for name in names {
                let out_dir = root.join("target/reproduce").join(name);
                std::fs::create_dir_all(&out_dir)
                    .with_context(|| format!("cannot create {}", out_dir.display()))?;
                let ctx = Context {
                    mode,
                    seed,
                    out_dir: out_dir.clone(),
                    reporter: &reporter,
                    write_files: true,
                };
                let start = std::time::Instant::now();
                suites::run(name, &ctx)?;
                println!(
                    "{name} ({mode}, seed {seed}): {:.0} s -> {}/{{summary.json, report.md, *.svg}}",
                    start.elapsed().as_secs_f64(),
                    out_dir.display()
                );
            }
        }
        Cmd::Bench { peers: true, peer, .. } => peers::run(&root, &peer)?,
        Cmd::Bench { peers: false, quick, pdmp_n, only, .. } => {
            in_repo_benches(&root, quick, pdmp_n, only.as_deref())?;
        }
        Cmd::Reference { chains, warmup, draws, seed } => {
            let reporter = progress::Bars::new();
            let r = reference::run_higgs_reference(chains, warmup, draws, seed, &reporter)?;
            let path =
                root.join("crates/tallmc-reproduce/fixtures/higgs_am_reference_n100000.json");
            std::fs::write(&path, serde_json::to_string_pretty(&r)? + "\n")
                .with_context(|| format!("cannot write {}", path.display()))?;
            let min_ess = r.ess_bulk.iter().cloned().fold(f64::INFINITY, f64::min);
            let max_rhat = r.rhat.iter().cloned().fold(0.0, f64::max);
            println!(
                "wrote {} (min bulk ESS {min_ess:.0}, max R-hat {max_rhat:.4})",
                path.display()
            );
        }
    }
    Ok(())
}
