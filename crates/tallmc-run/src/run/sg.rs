//! `tallmc sample sgld | sghmc | sgnht`: the stochastic-gradient kernels, with or without
//! Taylor control variates around the posterior mode (`--cv`, `--cv-order`).

use anyhow::{Context, Result, bail};
use tallmc_core::EvalCounts;
use tallmc_estimators::{ControlVariate, ControlVariateGradient, CvOrder};
use tallmc_integrators::Metric;
use tallmc_samplers::{ChainOutput, Laplace};
use tallmc_samplers::{
    Driver, MinibatchScope, SgHmc, SgHmcConfig, Sgld, SgldConfig, Sgnht, SgnhtConfig, Thermostat,
};

use super::ecs::WithEngine;
use super::outputs::{AnyTuning, Outputs, Sinks, run_kernel};
use crate::spec::{MinibatchChoice, SamplerKind, SamplerSettings, ThermostatChoice};

/// The validated settings of a stochastic-gradient run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SgSettings {
    kind: SamplerKind,
    step_size: f64,
    batch: usize,
    num_steps: usize,
    cv: Option<CvOrder>,
    thermostat: Thermostat,
    precondition: bool,
    minibatch: MinibatchScope,
}

impl SgSettings {
    /// Settings of a stochastic-gradient sampler, checked against N.
    pub(crate) fn new(sampler: &SamplerSettings, n: usize) -> Result<Self> {
        let (sg, num_steps, thermostat, precondition, minibatch) = match sampler {
            SamplerSettings::Sgld(s) => {
                (&s.sg, 1, ThermostatChoice::Scalar, s.precondition, MinibatchChoice::PerStep)
            }
            SamplerSettings::Sghmc(s) => {
                (&s.sg, s.num_steps, ThermostatChoice::Scalar, s.precondition, s.minibatch)
            }
            SamplerSettings::Sgnht(s) => {
                (&s.sg, s.num_steps, s.thermostat, false, MinibatchChoice::PerStep)
            }
            other => bail!("{} is not a stochastic-gradient sampler", other.name()),
        };
        // SG-HMC's "per trajectory" minibatch is the library's per-step scope (one minibatch
        // per kernel step, i.e. per trajectory); "per step" is a fresh one per gradient.
        let minibatch = match minibatch {
            MinibatchChoice::PerTrajectory => MinibatchScope::PerStep,
            MinibatchChoice::PerStep => MinibatchScope::PerGradient,
        };
        let s = Self {
            kind: sampler.kind(),
            step_size: sg.step_size,
            batch: sg.batch_for(n)?,
            num_steps,
            cv: sg.control_variates(),
            thermostat: match thermostat {
                ThermostatChoice::Scalar => Thermostat::Scalar,
                ThermostatChoice::ElementWise => Thermostat::ElementWise,
            },
            precondition,
            minibatch,
        };
        // Validate the kernel settings now, before the mode search.
        match s.kind {
            SamplerKind::Sgld => drop(Sgld::new(s.sgld(None))?),
            SamplerKind::Sghmc => drop(SgHmc::new(s.sghmc(None))?),
            _ => drop(Sgnht::new(s.sgnht())?),
        }
        Ok(s)
    }

    /// The fixed step size h.
    pub(crate) fn step_size(&self) -> f64 {
        self.step_size
    }

    fn sgld(&self, metric: Option<&Metric>) -> SgldConfig {
        SgldConfig {
            step_size: self.step_size,
            batch: self.batch,
            preconditioner: metric.cloned(),
            ..SgldConfig::default()
        }
    }

    fn sghmc(&self, metric: Option<&Metric>) -> SgHmcConfig {
        SgHmcConfig {
            step_size: self.step_size,
            num_steps: self.num_steps,
            batch: self.batch,
            minibatch: self.minibatch,
            metric: metric.cloned(),
            ..SgHmcConfig::default()
        }
    }

    fn sgnht(&self) -> SgnhtConfig {
        SgnhtConfig {
            step_size: self.step_size,
            num_steps: self.num_steps,
            batch: self.batch,
            thermostat: self.thermostat,
            ..SgnhtConfig::default()
        }
    }

    /// Lines for the CSV comments.
    pub(crate) fn comments(&self) -> Vec<(String, String)> {
        let mut c = vec![
            ("step_size".to_string(), self.step_size.to_string()),
            ("batch".to_string(), self.batch.to_string()),
            (
                "control_variates".to_string(),
                self.cv.map_or("none".to_string(), |k| {
                    format!("Taylor order {} at the posterior mode", k.number())
                }),
            ),
        ];
        if self.kind != SamplerKind::Sgld {
            c.push(("num_steps".to_string(), self.num_steps.to_string()));
        }
        if self.kind == SamplerKind::Sgnht {
            c.push(("thermostat".to_string(), format!("{:?}", self.thermostat).to_lowercase()));
        }
        if self.precondition {
            c.push((
                "preconditioner".to_string(),
                "Laplace covariance at the posterior mode".to_string(),
            ));
        }
        c
    }
}

/// Runs the stochastic-gradient kernel of `s`; returns the chains and the evaluations spent
/// building the control variates (one full pass at the mode), which count as setup.
pub(crate) fn run_stochastic_gradient<M: WithEngine>(
    model: &M, s: &SgSettings, mode: &[f64], laplace_covariance: &[f64], driver: &Driver<'_>,
    inits: &[Vec<f64>], sinks: Vec<Sinks>,
) -> Result<(Outputs, EvalCounts)> {
    let metric = if s.precondition {
        Some(Metric::dense(laplace_covariance.to_vec(), mode.len())?)
    } else {
        None
    };
    let (sgld, sghmc) = (s.sgld(metric.as_ref()), s.sghmc(metric.as_ref()));
    let Some(order) = s.cv else {
        let outputs = match s.kind {
            SamplerKind::Sgld => run_kernel(driver, model, inits, &Sgld::new(sgld)?, sinks)?,
            SamplerKind::Sghmc => run_kernel(driver, model, inits, &SgHmc::new(sghmc)?, sinks)?,
            _ => run_kernel(driver, model, inits, &Sgnht::new(s.sgnht())?, sinks)?,
        };
        return Ok((outputs, EvalCounts::ZERO));
    };
    super::ecs::check_cv_order(model, order)?;
    let (cv, setup) = ControlVariate::new_on_all_cores(model, mode, order)
        .context("cannot build the control variates at the posterior mode")?;
    let engine = model.engine(1, s.batch);
    let estimator = ControlVariateGradient::new(model, cv, engine, s.batch)?;
    let outputs = match s.kind {
        SamplerKind::Sgld => {
            run_kernel(driver, model, inits, &Sgld::with_estimator(sgld, estimator)?, sinks)?
        }
        SamplerKind::Sghmc => {
            run_kernel(driver, model, inits, &SgHmc::with_estimator(sghmc, estimator)?, sinks)?
        }
        _ => {
            run_kernel(driver, model, inits, &Sgnht::with_estimator(s.sgnht(), estimator)?, sinks)?
        }
    };
    Ok((outputs, setup))
}

/// A stochastic-gradient step whose θ leaves the finite numbers stops the run with
/// `SamplerError::NonFiniteDraw` (told by `explain_non_finite`). A divergence that left θ
/// finite (a non-finite gradient or momentum inside an SG-HMC trajectory, a thermostat
/// overflow) also means the step size `h` is far too large for the posterior's curvature: the
/// run is an error, naming the coordinate that ran away (the one farthest from the mode in
/// Laplace sds at the chain's last draw) and the flag to change. The CSV files are complete up
/// to there.
pub(crate) fn check_sg_stayed_finite(
    h: f64, names: &[String], laplace: &Laplace, inits: &[Vec<f64>],
    outputs: &[ChainOutput<Sinks, AnyTuning>],
) -> Result<()> {
    let d = names.len();
    let Some(o) = outputs.iter().find(|o| o.report.divergences + o.report.warmup_divergences > 0)
    else {
        return Ok(());
    };
    let k = o.report.chain + 1;
    let draws = &o.sink.0.draws;
    let last = if draws.len() >= d { &draws[draws.len() - d..] } else { &inits[k - 1][..] };
    let distance = |j: usize| {
        let sd = laplace.covariance[j * d + j].sqrt();
        if last[j].is_finite() { ((last[j] - laplace.mode[j]) / sd).abs() } else { f64::INFINITY }
    };
    let j = (0..d).max_by(|&a, &b| distance(a).total_cmp(&distance(b))).unwrap_or(0);
    let far = distance(j);
    let far = if far.is_finite() {
        format!(", {far:.1e} posterior sds from the mode")
    } else {
        String::new()
    };
    bail!(
        "chain {k} left the finite numbers: {} of its steps made θ or its gradient non-finite \
         ({} = {:.4e} at its last draw{far}); try a smaller --step-size than {h} (chain_{k}.csv \
         keeps the draws; no summary.json was written)",
        o.report.divergences + o.report.warmup_divergences,
        names[j],
        last[j],
    )
}
