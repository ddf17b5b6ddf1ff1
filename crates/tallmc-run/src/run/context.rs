//! What every part of a run shares: the model bound, the set-up's cost, the run's header in
//! summary.json, and how a run ended.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context as _, Result};
use serde::Serialize;
use tallmc_core::{
    EvalCounts, LogPrior, LogPriorHessian, ParameterNames, TermGradients, TermHessians, Terms,
};

use crate::spec::RunSpec;

/// What every model a run builds provides.
pub trait RunModel:
    TermHessians + TermGradients + Terms + LogPrior + LogPriorHessian + ParameterNames + Sync
{
}
impl<M> RunModel for M where
    M: TermHessians + TermGradients + Terms + LogPrior + LogPriorHessian + ParameterNames + Sync
{
}

/// Why a model lacks the bounds some samplers need, for their refusals.
pub(crate) fn unbounded_because(model: &str) -> &'static str {
    match model {
        "linear" | "robust" | "gaussian" => "its terms are unbounded in log σ",
        "negative-binomial" => "its terms are unbounded in log φ, and its score in η",
        "poisson" => "its score y − e^η and curvature −e^η grow without bound",
        "probit" => "its score grows without bound in the tails",
        "gaussian-mean" => "its score (y − μ)/σ² grows without bound in μ",
        "custom" => "a model of your own states no bound",
        _ => "no bound is known for it",
    }
}

/// How a run ended (errors aside).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Every chain made its draws.
    Finished,
    /// The stop flag (Ctrl-C, SIGTERM) ended the chains early; the outputs hold the draws made.
    Interrupted,
}

/// The set-up before sampling: Newton's method, the Laplace approximation and (with control
/// variates) their full-data pass.
pub(crate) struct Setup {
    pub(crate) evals: EvalCounts,
    pub(crate) seconds: f64,
    /// When the run started (before the set-up): the summary's total wall time is measured from
    /// here, since chains beyond the thread count run one after another and the longest chain's
    /// time is then only part of the wait.
    pub(crate) started: Instant,
    /// Warnings found before sampling (the design: constant, collinear or separating
    /// columns), first among the run's warnings.
    pub(crate) warnings: Vec<String>,
}

/// Evaluation counts as summary.json writes them.
#[derive(Serialize)]
pub(crate) struct EvalTotals {
    terms: u64,
    gradients: u64,
    hessians: u64,
    pub(crate) total: u64,
}

impl From<EvalCounts> for EvalTotals {
    fn from(e: EvalCounts) -> Self {
        Self { terms: e.terms, gradients: e.gradients, hessians: e.hessians, total: e.total() }
    }
}

/// Seconds of wall time. The per-chain phases are the longest chain's; `total` is the elapsed
/// time of the whole run (set-up to the last draw), which exceeds set-up + warmup + sampling
/// when there are more chains than threads.
#[derive(Serialize)]
pub(crate) struct WallSeconds {
    pub(crate) setup: f64,
    pub(crate) warmup_max_over_chains: f64,
    pub(crate) sampling_max_over_chains: f64,
    pub(crate) total: f64,
}

/// The first fields of every summary.json: what was run on what, and the run itself (`spec`),
/// from which `tallmc repeat` runs it again.
#[derive(Serialize)]
pub(crate) struct RunHeader<'a> {
    model: &'static str,
    sampler: String,
    data: String,
    n: usize,
    dim: usize,
    chains: usize,
    /// The parameters' names, in θ's order (from the data's columns).
    parameter_names: &'a [String],
    /// The run, as given: `tallmc repeat summary.json` repeats it.
    spec: &'a RunSpec,
}

impl<'a> RunHeader<'a> {
    /// The header of `spec` on N = `n` points with parameters `names`.
    pub(crate) fn new(spec: &'a RunSpec, n: usize, names: &'a [String]) -> Self {
        Self {
            model: spec.model.family(),
            sampler: spec.sampler.name(),
            data: spec.data.label(),
            n,
            dim: names.len(),
            chains: spec.chains,
            parameter_names: names,
            spec,
        }
    }
}

/// Writes `value` as pretty JSON to `path`, whole: to a temporary file beside it, then renamed.
pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value)? + "\n";
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))
}
