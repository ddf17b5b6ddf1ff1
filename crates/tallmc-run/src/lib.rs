//! One run of tallmc as a typed value, and what runs it.
//!
//! A [`RunSpec`] says everything about a run: the model (family, prior, intercept), the data
//! source, the sampler with its validated settings ([`SamplerSettings`]), the chains, warmup,
//! draws and seed, and where the outputs go. The `tallmc` command parses its flags into one,
//! the Python package builds one from keyword arguments, Rust users build one directly (or
//! compose the kernels of `tallmc-samplers` themselves). [`run`] runs it and returns a
//! [`RunResult`] in memory; files (CmdStan CSV per chain, `summary.json`) are written only when
//! the spec names an output directory. `summary.json` records the spec under `"spec"`, so any
//! run can be repeated exactly from it (`tallmc repeat summary.json`).
//!
//! ```no_run
//! use std::sync::atomic::AtomicBool;
//! use tallmc_run::{DataSpec, ModelSpec, RunSpec, SamplerSettings, spec::HmcEcsSettings};
//!
//! let mut spec = RunSpec::new(
//!     ModelSpec::logistic(),
//!     DataSpec::file("higgs.csv"),
//!     SamplerSettings::HmcEcs(HmcEcsSettings { subsample: Some(1000), ..Default::default() }),
//! );
//! spec.seed = 7;
//! let result = tallmc_run::run(&spec, None, &AtomicBool::new(false), None)?;
//! println!("{}", result.summary["parameters"][0]["mean"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod run;
pub mod spec;

pub use run::{
    AnyTuning, ControlVariateSums, CustomModel, MaybeCsv, Outcome, PassKind, RunModel, RunProgress,
    RunResult, ShardSource, ShardedSetup, Sinks, abandon_open_files, run, run_custom,
    run_on_shards, setup_local, setup_on_shards, shard_sums,
};
pub use spec::{
    CountSpec, DataSpec, Execution, Invalid, ModelSpec, OffsetSpec, OutputSpec, RegressionSpec,
    RobustSpec, RunSpec, SamplerSettings,
};

/// One line for an error and the causes that add something (many messages already quote
/// theirs): what the command prints after `tallmc: error: `, and the Python package's message.
pub fn error_message(e: &anyhow::Error) -> String {
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
    msg.replace('\n', " ")
}

/// The text of a panic's payload (what `panic!` was given), or "unknown panic": the command's
/// panic hook and the Python package's `RuntimeError` both report it.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}
