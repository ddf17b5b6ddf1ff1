//! summary.json of a discrete-time run (and the report printed at its end): per-parameter
//! summaries, evaluation totals, wall times, warnings, the adapted tuning, and the run itself.

use std::path::Path;

use anyhow::{Context as _, Result};
use serde::Serialize;
use tallmc_core::EvalCounts;
use tallmc_diagnostics::{Draws, Summary, summarize};
use tallmc_samplers::{ChainOutput, Laplace};

use super::context::{EvalTotals, Outcome, RunHeader, Setup, WallSeconds};
use super::ecs::{SignCorrectedSummary, sign_corrected_summary};
use super::outputs::{AnyTuning, Sinks, chain_path};
use super::report::{self, RunFacts};
use crate::spec::{InnerChoice, RunSpec, SamplerSettings};

#[derive(Serialize)]
struct Totals {
    /// Newton's method for the mode, the Laplace approximation and (with --cv) the control
    /// variates.
    evals_setup: EvalTotals,
    evals_warmup: EvalTotals,
    evals_sampling: EvalTotals,
    evals: EvalTotals,
    evals_per_draw: f64,
    data_fraction_per_iteration: f64,
    /// The most rows one iteration read, over all chains' draws (a Poisson minibatch's
    /// largest; N for full-data kernels).
    max_rows_per_iteration: u64,
    divergences: usize,
    mean_accept_stat: f64,
    wall_seconds: WallSeconds,
}

#[derive(Serialize)]
struct SummaryFile<'a> {
    #[serde(flatten)]
    run: RunHeader<'a>,
    warmup: usize,
    draws: usize,
    seed: u64,
    /// Ctrl-C ended the chains early: `draws_per_chain` says how many draws each made.
    interrupted: bool,
    draws_per_chain: Vec<usize>,
    /// The run report's warnings (R-hat, ESS, divergences, data use), one sentence each.
    warnings: Vec<String>,
    /// Plain summaries of the draws. For signed HMC-ECS these describe the chain's target
    /// π̃ ∝ |L̂_B|, not the posterior: use `sign_corrected`.
    parameters: &'a [Summary],
    /// Signed HMC-ECS: the sign-corrected (exact) posterior means, sds and MCSEs, and τ̂.
    #[serde(skip_serializing_if = "Option::is_none")]
    sign_corrected: Option<SignCorrectedSummary>,
    totals: Totals,
    laplace_mode: &'a [f64],
    /// The mean test of minibatch samplers and its settings (ε, δ, …), empty otherwise.
    test: std::collections::BTreeMap<String, String>,
    adaptation: Vec<Vec<String>>,
    /// Per chain: the kernel's adapted tuning, typed (step size, metric, scale, …).
    tuning: Vec<serde_json::Value>,
}

/// What the discrete-time summary needs besides the chains.
pub(crate) struct SummaryInput<'a> {
    pub(crate) spec: &'a RunSpec,
    pub(crate) n: usize,
    pub(crate) names: &'a [String],
    pub(crate) laplace: &'a Laplace,
    pub(crate) setup: &'a Setup,
    /// The mean test's settings (minibatch MH), empty otherwise.
    pub(crate) test: &'a [(String, String)],
    /// Signed HMC-ECS: summarize with the signs.
    pub(crate) signed: bool,
}

/// Writes summary.json (when the run has an output directory) and prints the report (unless
/// told not to); returns how the run ended and the summary.
pub(crate) fn write_summary(
    input: &SummaryInput<'_>, outputs: &[ChainOutput<Sinks, AnyTuning>],
) -> Result<(Outcome, serde_json::Value)> {
    let SummaryInput { spec, n, names, laplace, setup, test, signed } = *input;
    let d = names.len();
    let interrupted = outputs.iter().any(|o| o.report.interrupted);
    let draws_made: Vec<usize> = outputs.iter().map(|o| o.sink.0.num_draws()).collect();
    // An interrupted run's chains stop at different draws: summarize every chain's first
    // min-count draws (ESS and R-hat need 4).
    let common = draws_made.iter().copied().min().unwrap_or(0);
    if let (true, Some(dir)) = (interrupted, &spec.output.dir) {
        // ArviZ (and CmdStan's tools) read a run's chains only when they have equal lengths.
        for k in 0..outputs.len() {
            cut_csv(&chain_path(dir, k), common)?;
        }
    }
    let draws_made = if interrupted { vec![common; outputs.len()] } else { draws_made };
    let parameters = if common >= 4 {
        let chains: Vec<&[f64]> = outputs.iter().map(|o| &o.sink.0.draws[..common * d]).collect();
        summarize(names, &Draws::new(&chains, d)?)?
    } else {
        Vec::new()
    };
    let warmup: EvalCounts = outputs.iter().map(|o| o.report.warmup_evals).sum();
    let sampling: EvalCounts = outputs.iter().map(|o| o.report.sampling_evals).sum();
    let draws_total = draws_made.iter().sum::<usize>().max(1) as f64;
    let max = |f: fn(&ChainOutput<_, _>) -> f64| outputs.iter().map(f).fold(0.0, f64::max);
    let warm_s = max(|o| o.report.warmup_seconds);
    let samp_s = max(|o| o.report.sampling_seconds);
    let data_fraction = outputs.iter().map(|o| o.report.mean_batch_size).sum::<f64>()
        / outputs.len() as f64
        / n as f64;
    let divergences = outputs.iter().map(|o| o.report.divergences).sum();
    let totals = Totals {
        evals_setup: setup.evals.into(),
        evals_warmup: warmup.into(),
        evals_sampling: sampling.into(),
        evals: (setup.evals + warmup + sampling).into(),
        evals_per_draw: sampling.total() as f64 / draws_total,
        data_fraction_per_iteration: data_fraction,
        max_rows_per_iteration: outputs.iter().map(|o| o.report.max_batch_size).max().unwrap_or(0),
        divergences,
        mean_accept_stat: outputs.iter().map(|o| o.report.mean_accept_stat).sum::<f64>()
            / outputs.len() as f64,
        wall_seconds: WallSeconds {
            setup: setup.seconds,
            warmup_max_over_chains: warm_s,
            sampling_max_over_chains: samp_s,
            total: setup.started.elapsed().as_secs_f64(),
        },
    };
    let facts = RunFacts {
        sampler: spec.sampler.kind(),
        sampler_name: spec.sampler.name(),
        n,
        chains: spec.chains,
        draws_asked: spec.draws,
        draws_made: draws_made.clone(),
        parameters: &parameters,
        divergences,
        depth_limit: depth_limit(&spec.sampler)
            .map(|limit| (outputs.iter().map(|o| o.report.length_limit_hits).sum(), limit)),
        data_fraction: data_fraction.is_finite().then_some(data_fraction),
        max_rows: Some(totals.max_rows_per_iteration),
        step_word: "iteration",
        data_unit: "rows",
        evals_total: totals.evals.total,
        evals_per_draw: totals.evals_per_draw,
        wall_seconds: totals.wall_seconds.total,
        interrupted,
        out_dir: spec.output.dir.as_deref(),
    };
    let mut warnings = setup.warnings.clone();
    warnings.extend(report::warnings(&facts));
    let laplace_sd: Vec<f64> = (0..d).map(|j| laplace.covariance[j * d + j].sqrt()).collect();
    warnings.extend(report::too_wide(&facts, &laplace_sd));
    let sign_corrected =
        if signed && !interrupted { Some(sign_corrected_summary(names, outputs)?) } else { None };
    let file = SummaryFile {
        run: RunHeader::new(spec, n, names),
        warmup: spec.warmup,
        draws: spec.draws,
        seed: spec.seed,
        interrupted,
        draws_per_chain: draws_made,
        warnings: warnings.clone(),
        parameters: &parameters,
        sign_corrected,
        totals,
        laplace_mode: &laplace.mode,
        test: test.iter().cloned().collect(),
        adaptation: outputs.iter().map(|o| o.report.tuning.lines.clone()).collect(),
        tuning: outputs.iter().map(|o| o.report.tuning.value.clone()).collect(),
    };
    report::deliver(spec, &file, &facts, &warnings)
}

/// The tree-depth limit of a sampler whose transitions are NUTS trees.
fn depth_limit(sampler: &SamplerSettings) -> Option<usize> {
    match sampler {
        SamplerSettings::Nuts(s) => Some(s.max_depth),
        SamplerSettings::HmcEcs(s) if s.ecs.inner == InnerChoice::Nuts => {
            Some(s.ecs.max_depth.unwrap_or(10))
        }
        SamplerSettings::HmcEcsSigned(s) if s.ecs.inner == InnerChoice::Nuts => {
            Some(s.ecs.max_depth.unwrap_or(10))
        }
        _ => None,
    }
}

/// Keeps the first `keep` draws of a CmdStan CSV file, with every comment line and the header.
fn cut_csv(path: &Path, keep: usize) -> Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut out = String::with_capacity(text.len());
    let (mut header_seen, mut rows) = (false, 0);
    for line in text.lines() {
        let is_row = !line.starts_with('#') && header_seen;
        header_seen |= !line.starts_with('#');
        if is_row {
            rows += 1;
            if rows > keep {
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    let tmp = path.with_extension("csv.tmp");
    std::fs::write(&tmp, out).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))
}
