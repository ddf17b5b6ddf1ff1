//! `cargo xtask`: reproduction suites, benchmarks and reference fixtures.
//!
//! ```text
//! cargo xtask reproduce [SUITE] [--quick|--full] [--seed S]   # default: every suite, quick
//! cargo xtask bench                                           # per-datum evaluation throughput
//! cargo xtask bench --peers [--n N] [--methods hmc,sgld]      # tallmc vs NumPyro / BlackJAX
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
    /// Benchmarks: per-datum evaluation throughput of the models (ratios to a plain dot product);
    /// with --peers, tallmc against the NumPyro / BlackJAX scripts of bench/peers/ on the same
    /// data file (see docs/benchmarks.md).
    Bench {
        /// Compare with the peer scripts (installs Python packages into target/peers/venv).
        #[arg(long)]
        peers: bool,
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
        Cmd::Bench { peers: true, peer } => peers::run(&root, &peer)?,
        Cmd::Bench { peers: false, .. } => {
            let status = Command::new(env!("CARGO"))
                .current_dir(&root)
                .args(["bench", "-p", "tallmc-models", "--bench", "term_throughput"])
                .status()
                .context("cannot run cargo bench")?;
            if !status.success() {
                bail!("cargo bench failed");
            }
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
