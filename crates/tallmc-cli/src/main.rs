//! The `tallmc` command.
//!
//! ```text
//! tallmc sample hmc --model logistic --data higgs.bin --chains 4 \
//!                   --warmup 1000 --draws 1000 --seed 1 --out runs/higgs
//! ```
//!
//! The sampler is a subcommand (`tallmc sample --help` lists them); each takes the common flags
//! (model, data, chains, output, …) and only its own (`tallmc sample hmc --help`), so a flag of
//! another sampler is a usage error (exit status 2).
//!
//! Writes `chain_1.csv … chain_C.csv` in CmdStan's CSV layout (readable by
//! `arviz.from_cmdstan`) and `summary.json` (per parameter: mean, sd, 5/50/95% quantiles, bulk
//! and tail ESS, R-hat; totals: per-datum evaluations and wall time; warnings). At the end it
//! prints a short report on stderr: the worst parameters (mean, sd, bulk ESS, R-hat),
//! divergences, data use, cost, wall time and warnings. Every bad value is a one-line error on
//! stderr and exit status 1.
//!
//! Ctrl-C (SIGINT), SIGTERM (what a batch scheduler sends) and SIGHUP (a closed terminal) end
//! every chain after its current iteration: the CSV files stay complete, summary.json is
//! written (marked `"interrupted": true`), the report is printed and the exit status is 130. A
//! second signal exits at once, the output files ended at their last whole row with a footer
//! comment. The continuous-time samplers stop the same way, each chain
//! after its current trajectory segment (grid draws, skeleton and summary.json stay readable).
//!
//! `tallmc repeat runs/a/summary.json --out runs/b` runs the run recorded in a summary.json
//! again: the same draws, bit for bit, on the same data file and platform.
//!
//! `tallmc convert shards/ --out data.bin` streams Parquet (a file or a directory of shards),
//! CSV or `.npy` data into the binary format in bounded memory.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use tallmc_cli::{Invocation, InvocationError, Outcome};

fn main() -> ExitCode {
    // Internal errors should still be one line, without a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = tallmc_cli::panic_message(info.payload());
        let _ = writeln!(std::io::stderr(), "tallmc: internal error: {}", msg.replace('\n', " "));
    }));
    let invocation = Invocation::parse_from_env();
    if let Some(done) = invocation.run_convert() {
        return match done {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                let msg = tallmc_cli::error_message(&e);
                let _ = writeln!(std::io::stderr(), "tallmc: error: {msg}");
                ExitCode::FAILURE
            }
        };
    }
    let (mut spec, _) = match invocation.spec() {
        Ok(spec) => spec,
        Err(InvocationError::Usage(e)) => e.exit(),
        Err(InvocationError::Invalid(msg)) => {
            let _ = writeln!(std::io::stderr(), "tallmc: error: {msg}");
            return ExitCode::FAILURE;
        }
    };
    // Recorded with an absolute path, so that `tallmc repeat` works from any directory.
    spec.data = spec.data.absolute();
    install_stop_handler();
    match tallmc_run::run(&spec, None, &STOP, None).map(|r| r.outcome) {
        Ok(Outcome::Finished) => ExitCode::SUCCESS,
        // 128 + SIGINT, as a shell reports a process ended by Ctrl-C.
        Ok(Outcome::Interrupted) => ExitCode::from(130),
        Err(e) => {
            let msg = tallmc_cli::error_message(&e);
            let _ = writeln!(std::io::stderr(), "tallmc: error: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// Raised by the first Ctrl-C; the driver ends every chain after its current iteration (or
/// trajectory segment).
static STOP: AtomicBool = AtomicBool::new(false);

/// Ctrl-C, SIGTERM and SIGHUP raise [`STOP`]; a second one exits at once (status 130), after
/// the output files are ended at their last whole row with a footer.
fn install_stop_handler() {
    let installed = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            // Quit now, leaving files of whole rows that end with a footer saying so.
            tallmc_run::abandon_open_files();
            std::process::exit(130);
        }
        let _ = writeln!(
            std::io::stderr(),
            "tallmc: interrupted: finishing the current iterations (Ctrl-C again to quit now)"
        );
    });
    if let Err(e) = installed {
        let _ = writeln!(std::io::stderr(), "tallmc: warning: Ctrl-C will not stop cleanly: {e}");
    }
}
