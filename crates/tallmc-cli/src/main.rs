//! The `tallmc` command.
//!
//! ```text
//! tallmc sample --model logistic --data higgs.bin --sampler hmc --chains 4 \
//!               --warmup 1000 --draws 1000 --seed 1 --out runs/higgs
//! ```
//!
//! Writes `chain_1.csv … chain_C.csv` in CmdStan's CSV layout (readable by
//! `arviz.from_cmdstan`) and `summary.json` (per parameter: mean, sd, 5/50/95% quantiles, bulk
//! and tail ESS, R-hat; totals: per-datum evaluations and wall time). Every bad input is a
//! one-line error on stderr and exit status 1.

mod args;
mod ecs;
mod pdmp;
mod run;
mod sg;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Internal errors should still be one line, without a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let _ = writeln!(std::io::stderr(), "tallmc: internal error: {}", msg.replace('\n', " "));
    }));
    let cli = args::Cli::parse();
    let result = match &cli.command {
        args::Command::Sample(a) => run::sample(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The error and the causes that add something (many messages already quote theirs).
            let mut msg = String::new();
            for cause in e.chain() {
                let text = cause.to_string();
                if !msg.contains(&text) {
                    if !msg.is_empty() {
                        msg.push_str(": ");
                    }
                    msg.push_str(&text);
                }
            }
            let msg = msg.replace('\n', " ");
            let _ = writeln!(std::io::stderr(), "tallmc: error: {msg}");
            ExitCode::FAILURE
        }
    }
}
