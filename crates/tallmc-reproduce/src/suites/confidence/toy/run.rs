//! Running Fig. 4's samplers, the decision audits and the exactness check.

use serde::Serialize;
use tallmc_bounds::{
    AusterityConfig, AusterityTest, BoundKind, ConfidenceConfig, ConfidenceTest, ExactTest,
};
use tallmc_diagnostics::Summary;
use tallmc_models::Gaussian;
use tallmc_samplers::sink::MemorySink;
use tallmc_samplers::{
    ChainOutput, MinibatchMh, NewtonOptions, RandomWalkConfig, RandomWalkMetropolis,
    RandomWalkProposal, RandomWalkProposalConfig, RunConfig, laplace_approximation,
};

use super::super::bounds_error;
use super::*;
use crate::audit::{AuditCounts, Audited};
use crate::chains::{Chains, mean_stat, run_config};
use crate::{Context, Result};

fn walk(covariance: &[f64]) -> tallmc_core::Result<RandomWalkProposal> {
    RandomWalkProposal::new(RandomWalkProposalConfig {
        covariance: Some(covariance.to_vec()),
        adapt_scale: true,
        target_accept: Some(TARGET_ACCEPT),
        ..Default::default()
    })
}

fn austerity(first_batch: usize) -> tallmc_core::Result<AusterityTest> {
    AusterityTest::new(
        AusterityConfig::new(AUSTERITY_EPSILON, AUSTERITY_BATCH).with_first_batch(first_batch),
    )
    .map_err(bounds_error)
}

fn confidence(delta: f64) -> tallmc_core::Result<ConfidenceTest> {
    ConfidenceTest::new(ConfidenceConfig::new(BoundKind::EmpiricalBernsteinSerfling, delta))
        .map_err(bounds_error)
}

/// Runs Fig. 4's samplers and the exactness check.
pub fn compute(ctx: &Context<'_>) -> Result<Toy> {
    let chains = 4;
    let warmup = ctx.mode.pick(300, 2000);
    let draws = ctx.mode.pick(1500, 20_000);
    let mut problems = Vec::new();
    let mut exactness = Vec::new();
    let mut audits = Vec::new();
    let audit_draws = ctx.mode.pick(250, 2000);
    for (k, data) in ToyData::ALL.into_iter().enumerate() {
        let seed = toy_seed(ctx.seed, k);
        let config = run_config(warmup, draws, chains, seed);
        ctx.reporter.note(&format!("confidence: Fig. 4 toy, {} (n = {TOY_N})", data.label()));
        let model = data.model()?;
        let truth = ClosedForm::from_data(model.data().y())?;
        let start = [truth.y_mean, truth.sample_sd.ln()];
        let laplace = laplace_approximation(&model, &start, NewtonOptions::default())?;
        let inits = laplace.dispersed_positions(chains, 2.0, seed)?;
        let cov = laplace.covariance.clone();
        let problem = Chains { model: &model, inits: &inits, reporter: ctx.reporter };
        let mut runs = Vec::new();
        for method in Method::ALL {
            let label = format!("Fig. 4 {}: {}", data.key(), method.label());
            let run = match method {
                Method::ExactMh => {
                    let cfg = RandomWalkConfig {
                        proposal_covariance: Some(cov.clone()),
                        target_accept: Some(TARGET_ACCEPT),
                        ..Default::default()
                    };
                    summarize_chains(
                        method,
                        problem.run(config, &RandomWalkMetropolis::new(cfg)?, &label)?,
                        |t| t.scale,
                    )?
                }
                Method::Confidence => summarize_chains(
                    method,
                    problem.run(
                        config,
                        &MinibatchMh::new(confidence(CONFIDENCE_DELTA)?, walk(&cov)?)
                            .with_term_bounds(),
                        &label,
                    )?,
                    |t| t.proposal.scale,
                )?,
                Method::AusterityT2 | Method::AusterityT500 => {
                    let first = if method == Method::AusterityT2 { 2 } else { AUSTERITY_BATCH };
                    let factor =
                        if data == ToyData::Lognormal { AUSTERITY_DRAWS_FACTOR } else { 1 };
                    let config = RunConfig { num_draws: draws * factor, ..config };
                    summarize_chains(
                        method,
                        problem.run(
                            config,
                            &MinibatchMh::new(austerity(first)?, walk(&cov)?),
                            &label,
                        )?,
                        |t| t.proposal.scale,
                    )?
                }
            };
            runs.push(run);
        }
        exactness.push(exactness_check(&model, data, &inits, &cov, seed, ctx)?);
        audits.extend(audit_decisions(&model, data, &inits, &cov, seed, audit_draws, ctx)?);
        problems.push(ToyProblem { data, truth, y_range: model.response_range(), runs });
    }
    Ok(Toy { chains, warmup, draws, problems, exactness, audits, audit_draws })
}

/// [`summarize_run`] over all the draws (one call per method: their stats and tuning types
/// differ; `scale` reads the random walk's adapted scale from the tuning).
fn summarize_chains<S: Serialize, T>(
    method: Method, out: Vec<ChainOutput<MemorySink<S>, T>>, scale: impl Fn(&T) -> f64,
) -> Result<MethodRun> {
    let total = out.iter().map(|c| c.sink.num_draws()).sum();
    summarize_run(method, &out, total, scale)
}

fn summarize_run<S: Serialize, T>(
    method: Method, out: &[ChainOutput<MemorySink<S>, T>], total_draws: usize,
    scale: impl Fn(&T) -> f64,
) -> Result<MethodRun> {
    let mu: Vec<Vec<f64>> = out.iter().map(|c| c.sink.coordinate(0)).collect();
    let sigma: Vec<Vec<f64>> =
        out.iter().map(|c| c.sink.coordinate(1).into_iter().map(f64::exp).collect()).collect();
    let evals: u64 = out.iter().map(|c| c.report.sampling_evals.total()).sum();
    let data_fraction = match method {
        Method::ExactMh => 1.0,
        _ => mean_stat(out, "data_fraction__"),
    };
    let scale = out.first().map_or(f64::NAN, |c| scale(&c.report.tuning));
    Ok(MethodRun {
        method,
        mu: Summary::from_chains("mu", &mu)?,
        sigma: Summary::from_chains("sigma", &sigma)?,
        accept: out.iter().map(|c| c.report.mean_accept_stat).sum::<f64>() / out.len() as f64,
        data_fraction,
        evals_per_iteration: evals as f64 / total_draws as f64,
        scale,
        sigma_draws: sigma.concat(),
        sampling_seconds: out.iter().map(|c| c.report.sampling_seconds).fold(0.0, f64::max),
    })
}

/// Short chains of each approximate sampler whose test is wrapped in [`Audited`]: after each
/// decision the rest of the population is drawn and the exact decision (same u, same θ′) is
/// computed. The audit's own draws come from the subsample stream, so these chains are valid
/// chains of the same kernel (proposals and u's unchanged), but not the ones of the main runs.
fn audit_decisions(
    model: &Gaussian, data: ToyData, inits: &[Vec<f64>], cov: &[f64], seed: u64, draws: usize,
    ctx: &Context<'_>,
) -> Result<Vec<DecisionAudit>> {
    let config = run_config(AUDIT_WARMUP, draws, 2, seed);
    let problem = Chains { model, inits: &inits[..2], reporter: ctx.reporter };
    let mut out = Vec::new();
    for method in [Method::Confidence, Method::AusterityT2, Method::AusterityT500] {
        let counts = AuditCounts::new();
        let label = format!("audit {}: {}", data.key(), method.label());
        match method {
            Method::Confidence => {
                problem.run(
                    config,
                    &{
                        let test = Audited::new(confidence(CONFIDENCE_DELTA)?, counts.clone());
                        MinibatchMh::new(test, walk(cov)?).with_term_bounds()
                    },
                    &label,
                )?;
            }
            _ => {
                let first = if method == Method::AusterityT2 { 2 } else { AUSTERITY_BATCH };
                problem.run(
                    config,
                    &{
                        let test = Audited::new(austerity(first)?, counts.clone());
                        MinibatchMh::new(test, walk(cov)?)
                    },
                    &label,
                )?;
            }
        }
        out.push(DecisionAudit {
            data,
            method,
            decisions: counts.decisions(),
            wrong_fraction: counts.wrong_fraction(),
            data_fraction: counts.mean_data_fraction(),
        });
    }
    Ok(out)
}

fn bits<S, T>(out: &[ChainOutput<MemorySink<S>, T>]) -> Vec<u64> {
    out.iter()
        .flat_map(|c| c.sink.warmup_draws.iter().chain(&c.sink.draws).map(|v| v.to_bits()))
        .collect()
}

/// Minibatch MH with the exact test, Austerity ε = 0 and the confidence test δ = 1e-300, same
/// seed, same starts: the chains must coincide bit for bit.
fn exactness_check(
    model: &Gaussian, data: ToyData, inits: &[Vec<f64>], cov: &[f64], seed: u64, ctx: &Context<'_>,
) -> Result<Exactness> {
    let (chains, warmup, draws) = (2, 50, ctx.mode.pick(150, 1000));
    let config = RunConfig {
        num_warmup: warmup,
        num_draws: draws,
        num_chains: chains,
        seed,
        save_warmup: true,
    };
    let problem = Chains { model, inits: &inits[..chains], reporter: ctx.reporter };
    let label = |t: &str| format!("exactness {}: {t}", data.key());
    let exact = problem.run(
        config,
        &MinibatchMh::new(ExactTest::new(), walk(cov)?),
        &label("exact test"),
    )?;
    let aust = problem.run(
        config,
        &{
            let test = AusterityTest::new(AusterityConfig::new(0.0, AUSTERITY_BATCH))
                .map_err(bounds_error)?;
            MinibatchMh::new(test, walk(cov)?)
        },
        &label("Austerity ε = 0"),
    )?;
    let conf = problem.run(
        config,
        &MinibatchMh::new(confidence(TINY_DELTA)?, walk(cov)?).with_term_bounds(),
        &label("confidence δ = 1e-300"),
    )?;
    let reference = bits(&exact);
    let used: Vec<f64> = conf.iter().filter_map(|c| c.sink.stat("data_used__")).flatten().collect();
    let early = used.iter().filter(|&&u| (u as usize) < TOY_N).count();
    Ok(Exactness {
        data,
        chains,
        warmup,
        draws,
        austerity_identical: bits(&aust) == reference,
        confidence_identical: bits(&conf) == reference,
        accept: mean_stat(&exact, "accept_stat__"),
        confidence_data_fraction: mean_stat(&conf, "data_fraction__"),
        confidence_early_stops: early as f64 / used.len().max(1) as f64,
    })
}
