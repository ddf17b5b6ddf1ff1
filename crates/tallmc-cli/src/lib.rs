//! The `tallmc` command as a library: the binary (`src/main.rs`) and the Python package
//! (`crates/tallmc-py`) both run sampling through [`Invocation`], so that they share the
//! command's flags, defaults, validation, outputs and draws (same seed, same bits).
//!
//! ```no_run
//! use std::sync::atomic::AtomicBool;
//!
//! let stop = AtomicBool::new(false);
//! let run = tallmc_cli::Invocation::try_parse_from([
//!     "tallmc", "sample", "nuts", "--model", "logistic", "--data", "higgs.bin", "--out", "runs/h",
//! ])?;
//! run.run(None, &stop)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod args;
mod convert;

use std::ffi::OsString;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::Parser;
use tallmc_models::Dataset;
pub use tallmc_run::{Outcome, RunProgress, RunSpec, error_message, panic_message};

/// A usage error of the command line (clap's): `to_string()` is what the command prints.
pub type UsageError = clap::Error;

/// A flag of one sampler subcommand, as `tallmc sample <SAMPLER> --help` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flag {
    /// The long name, without the dashes (`subsample`, `step-size`).
    pub name: String,
    /// Its help text.
    pub help: String,
    /// Its default value, if it has one.
    pub default: Option<String>,
    /// Whether it takes a value (else it is a switch).
    pub takes_value: bool,
    /// The values it accepts, when they are a fixed list.
    pub choices: Vec<String>,
}

/// The samplers' subcommand names (`nuts`, `hmc-ecs`, …), in `tallmc sample --help`'s order.
pub fn sampler_names() -> Vec<String> {
    use clap::CommandFactory;
    let cli = args::Cli::command();
    cli.find_subcommand("sample")
        .map(|s| s.get_subcommands().map(|c| c.get_name().to_string()).collect())
        .unwrap_or_default()
}

/// Every flag of `tallmc sample <sampler>` (common ones included), or `None` for an unknown
/// sampler: what the Python package builds its sampler settings from, so that they have the
/// command's names and defaults.
pub fn sampler_flags(sampler: &str) -> Option<Vec<Flag>> {
    use clap::CommandFactory;
    let cli = args::Cli::command();
    let sub = cli.find_subcommand("sample")?.find_subcommand(sampler)?;
    let flags = sub
        .get_arguments()
        .filter_map(|a| {
            let name = a.get_long()?.to_string();
            let takes_value = a.get_action().takes_values();
            Some(Flag {
                name,
                help: a.get_help().map(|h| h.to_string()).unwrap_or_default(),
                default: a.get_default_values().first().map(|v| v.to_string_lossy().into_owned()),
                takes_value,
                choices: a
                    .get_possible_values()
                    .iter()
                    .filter(|v| !v.is_hide_set())
                    .map(|v| v.get_name().to_string())
                    .collect(),
            })
        })
        .collect();
    Some(flags)
}

/// A parsed `tallmc` command line, ready to run.
#[derive(Debug)]
pub struct Invocation {
    cli: args::Cli,
    observer: Option<Arc<RunProgress>>,
}

/// Why a command line does not make a run.
#[derive(Debug)]
pub enum InvocationError {
    /// A usage error (a missing or unknown flag): clap's message, exit status 2.
    Usage(UsageError),
    /// A value that is wrong or does not apply: one line, exit status 1.
    Invalid(String),
}

impl std::fmt::Display for InvocationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Usage(e) => e.fmt(f),
            Self::Invalid(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for InvocationError {}

impl Invocation {
    /// Parses the process's arguments; on a usage error prints clap's message and exits with
    /// status 2 (`--help` and `--version` print and exit 0).
    pub fn parse_from_env() -> Self {
        Self { cli: args::Cli::parse(), observer: None }
    }

    /// Parses `argv` (its first item is the program name), returning clap's error — whose
    /// `to_string()` is the message the command would print — on a usage error.
    pub fn try_parse_from<I, T>(argv: I) -> Result<Self, UsageError>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        args::Cli::try_parse_from(argv).map(|cli| Self { cli, observer: None })
    }

    /// Also publishes the run's progress (setup message, iterations done and their total) to
    /// `progress`, which another thread may read while the run goes on; the terminal bar is
    /// drawn or not as `--no-progress` says.
    pub fn observe(mut self, progress: Arc<RunProgress>) -> Self {
        self.observer = Some(progress);
        self
    }

    /// The run the command line describes: `tallmc sample`'s flags, or the run recorded in
    /// `tallmc repeat`'s summary.json with the new output directory.
    pub fn spec(self) -> Result<(RunSpec, Option<Arc<RunProgress>>), InvocationError> {
        let spec = match self.cli.command {
            args::Command::Sample(a) => a.spec(),
            args::Command::Repeat(a) => a.spec(),
            args::Command::Convert(_) => Err(args::SpecError::Invalid(
                "`tallmc convert` converts data; it is not a run".to_string(),
            )),
        };
        match spec {
            Ok(spec) => Ok((spec, self.observer)),
            Err(args::SpecError::Usage(e)) => Err(InvocationError::Usage(e)),
            Err(args::SpecError::Invalid(m)) => Err(InvocationError::Invalid(m)),
        }
    }

    /// Runs `tallmc convert` when that is the command (printing its one-line report on
    /// stderr, and a progress bar when stderr is a terminal); `None` for the other commands.
    pub fn run_convert(&self) -> Option<anyhow::Result<()>> {
        match &self.cli.command {
            args::Command::Convert(a) => Some(convert::run(a)),
            _ => None,
        }
    }

    /// Runs the command. With `data`, the model is built on it instead of the `--data` file
    /// (whose text then only labels the outputs): how the Python package passes NumPy arrays
    /// without copying them. `stop`, once raised, ends every chain after its current
    /// iteration ([`Outcome::Interrupted`]).
    pub fn run(self, data: Option<Dataset>, stop: &AtomicBool) -> anyhow::Result<Outcome> {
        let (mut spec, observer) = self.spec().map_err(|e| match e {
            InvocationError::Usage(e) => anyhow::anyhow!(e.to_string()),
            InvocationError::Invalid(m) => anyhow::anyhow!(m),
        })?;
        spec.data = match data {
            Some(_) => tallmc_run::DataSpec::Arrays { label: spec.data.label() },
            None => spec.data.absolute(),
        };
        Ok(tallmc_run::run(&spec, data, stop, observer)?.outcome)
    }
}
