//! `tallmc sample sgld | sghmc | sgnht`: the stochastic-gradient kernels, with or without
//! Taylor control variates around the posterior mode (`--cv`, `--cv-order`).

use anyhow::{Context, Result, bail};
use tallmc_core::EvalCounts;
use tallmc_estimators::{ControlVariate, ControlVariateGradient, CvOrder};
use tallmc_integrators::Metric;
use tallmc_samplers::sink::{ColumnMemorySink, CsvSink, Tee};
use tallmc_samplers::{
    Driver, MinibatchScope, SgHmc, SgHmcConfig, Sgld, SgldConfig, Sgnht, SgnhtConfig, Thermostat,
};

use crate::args::{MinibatchArg, Sampler, SamplerKind, ThermostatArg};
use crate::ecs::WithEngine;
use crate::outputs::{Outputs, run_kernel};

/// Default minibatch size: min(500, N).
pub(crate) const DEFAULT_BATCH: usize = 500;

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
    pub(crate) fn new(sampler: &Sampler, n: usize) -> Result<Self> {
        let (a, num_steps, thermostat, precondition) = match sampler {
            Sampler::Sgld(a) => (&a.sg, 1, ThermostatArg::Scalar, a.precondition),
            Sampler::Sghmc(a) => (&a.sg, a.num_steps, ThermostatArg::Scalar, a.precondition),
            Sampler::Sgnht(a) => (&a.sg, a.num_steps, a.thermostat, false),
            other => bail!("{} is not a stochastic-gradient sampler", other.kind().name()),
        };
        let minibatch = match sampler {
            Sampler::Sghmc(a) if a.minibatch == MinibatchArg::PerTrajectory => {
                MinibatchScope::PerStep
            }
            _ => MinibatchScope::PerGradient,
        };
        let batch = a.batch.unwrap_or(n.min(DEFAULT_BATCH));
        if batch == 0 || batch > n {
            bail!("--batch {batch}: expected 1 ≤ m ≤ N = {n}");
        }
        let cv = if a.cv { Some(CvOrder::from_number(a.cv_order)?) } else { None };
        let thermostat = match thermostat {
            ThermostatArg::Scalar => Thermostat::Scalar,
            ThermostatArg::ElementWise => Thermostat::ElementWise,
        };
        let s = Self {
            kind: sampler.kind(),
            step_size: a.step_size,
            batch,
            num_steps,
            cv,
            thermostat,
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
    inits: &[Vec<f64>], sinks: Vec<Tee<ColumnMemorySink, CsvSink>>,
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
