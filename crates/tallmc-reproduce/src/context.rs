//! What every suite receives: mode, seed, output directory and a progress reporter.

use std::path::PathBuf;

use serde::Serialize;
use tallmc_samplers::Progress;

/// Problem sizes: `Quick` runs in minutes on 2 cores; `Full` approaches the papers' scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Minutes on 2 cores; its summaries are the insta snapshots in `tests/`.
    Quick,
    /// Close to the papers' scale; hours.
    Full,
}

impl Mode {
    /// Picks the quick or the full value.
    pub fn pick<T>(self, quick: T, full: T) -> T {
        match self {
            Self::Quick => quick,
            Self::Full => full,
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Quick => "quick",
            Self::Full => "full",
        })
    }
}

/// A unit of work with a known number of steps, shown as a progress bar by the xtask.
/// Finishes when dropped.
pub trait Task: Progress + Send + Sync {
    /// Advances by `n` steps (for work that is not a sampler run).
    fn advance(&self, n: u64);
}

/// Creates [`Task`]s.
pub trait Reporter: Sync {
    /// Starts a task named `label` of `total` steps.
    fn task(&self, label: &str, total: u64) -> Box<dyn Task + '_>;
    /// A line of information for the user.
    fn note(&self, message: &str);
}

/// Shows nothing (tests).
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {
    fn update(&self, _chain: usize, _done: usize, _total: usize) {}
}

impl Task for Silent {
    fn advance(&self, _n: u64) {}
}

impl Reporter for Silent {
    fn task(&self, _label: &str, _total: u64) -> Box<dyn Task + '_> {
        Box::new(Silent)
    }
    fn note(&self, _message: &str) {}
}

/// Everything a suite needs to run.
pub struct Context<'a> {
    /// Quick or full.
    pub mode: Mode,
    /// Master seed of the samplers (data sets have their own fixed seeds, documented per suite).
    pub seed: u64,
    /// Where the suite writes its files (`target/reproduce/<suite>`).
    pub out_dir: PathBuf,
    /// Progress reporting.
    pub reporter: &'a dyn Reporter,
    /// Whether to write files (tests only need the summary).
    pub write_files: bool,
}

impl<'a> Context<'a> {
    /// A context that writes nothing and reports nothing, for tests.
    pub fn for_tests(mode: Mode, seed: u64) -> Context<'static> {
        Context { mode, seed, out_dir: PathBuf::new(), reporter: &Silent, write_files: false }
    }
}
