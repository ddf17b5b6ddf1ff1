//! A model of the user's own through `tallmc_run::run_custom`: two independent normal means
//! written by hand against the core traits, sampled by NUTS and HMC-ECS and checked against the
//! closed-form posterior within 4 MCSE; without exact Hessians, second-order control variates
//! are refused and first-order ones run; the bound-based samplers refuse the model.

use std::sync::atomic::AtomicBool;

use tallmc_core::{LogPrior, LogPriorHessian, ParameterNames, TermGradients, TermHessians, Terms};
use tallmc_run::spec::{ConfidenceSettings, HmcEcsSettings, NutsSettings};
use tallmc_run::{CustomModel, DataSpec, ModelSpec, RunSpec, SamplerSettings, run_custom};

/// Row i observes y_i ~ N(μ_{i mod 2}, σ²) (σ known): θ = (μ₀, μ₁), prior N(0, s²) each.
struct TwoMeans {
    y: Vec<f64>,
    sigma: f64,
    prior_sd: f64,
    exact_hessians: bool,
}

impl TwoMeans {
    fn new(n: usize, exact_hessians: bool) -> Self {
        // A fixed LCG-driven Box–Muller: means 1 and −2, σ = 3.
        let mut state: u64 = 7;
        let mut uniform = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let y = (0..n)
            .map(|i| {
                let (u, v) = (uniform(), uniform());
                let z = (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos();
                [1.0, -2.0][i % 2] + 3.0 * z
            })
            .collect();
        Self { y, sigma: 3.0, prior_sd: 10.0, exact_hessians }
    }

    /// The closed-form posterior (mean, sd) of μ_j.
    fn posterior(&self, j: usize) -> (f64, f64) {
        let ys: Vec<f64> = self.y.iter().skip(j).step_by(2).copied().collect();
        let precision = ys.len() as f64 / self.sigma.powi(2) + 1.0 / self.prior_sd.powi(2);
        let mean = ys.iter().sum::<f64>() / self.sigma.powi(2) / precision;
        (mean, precision.sqrt().recip())
    }

    fn residual(&self, theta: &[f64], i: u32) -> (usize, f64) {
        let j = i as usize % 2;
        (j, self.y[i as usize] - theta[j])
    }
}

impl Terms for TwoMeans {
    fn dim(&self) -> usize {
        2
    }
    fn num_terms(&self) -> usize {
        self.y.len()
    }
    fn log_terms(&self, theta: &[f64], indices: &[u32], out: &mut [f64]) {
        let w = 1.0 / (self.sigma * self.sigma);
        for (o, &i) in out.iter_mut().zip(indices) {
            let (_, r) = self.residual(theta, i);
            *o = -0.5 * r * r * w;
        }
    }
}

impl TermGradients for TwoMeans {
    fn log_terms_grad_sum(
        &self, theta: &[f64], indices: &[u32], out: &mut [f64], grad_sum: &mut [f64],
    ) -> f64 {
        let mut grads = vec![0.0; 2 * indices.len()];
        self.log_terms_grads(theta, indices, out, &mut grads);
        for g in grads.chunks_exact(2) {
            grad_sum[0] += g[0];
            grad_sum[1] += g[1];
        }
        out[..indices.len()].iter().sum()
    }
    fn log_terms_grads(&self, theta: &[f64], indices: &[u32], out: &mut [f64], grads: &mut [f64]) {
        self.log_terms(theta, indices, out);
        let w = 1.0 / (self.sigma * self.sigma);
        for (g, &i) in grads.chunks_exact_mut(2).zip(indices) {
            let (j, r) = self.residual(theta, i);
            g.fill(0.0);
            g[j] = r * w;
        }
    }
    fn sum_log_terms_grad_range(
        &self, theta: &[f64], start: u32, end: u32, grad_sum: &mut [f64],
    ) -> f64 {
        let idx: Vec<u32> = (start..end).collect();
        let mut out = vec![0.0; idx.len()];
        self.log_terms_grad_sum(theta, &idx, &mut out, grad_sum)
    }
}

impl TermHessians for TwoMeans {
    fn hessian_vector_products(&self, _theta: &[f64], indices: &[u32], v: &[f64], out: &mut [f64]) {
        let w = 1.0 / (self.sigma * self.sigma);
        for (o, &i) in out.chunks_exact_mut(2).zip(indices) {
            let j = i as usize % 2;
            o.fill(0.0);
            o[j] = -w * v[j];
        }
    }
    fn sum_hessian(&self, _theta: &[f64], indices: &[u32], hess: &mut [f64]) {
        let w = 1.0 / (self.sigma * self.sigma);
        for &i in indices {
            let j = i as usize % 2;
            hess[j * 2 + j] -= w;
        }
    }
}

impl LogPrior for TwoMeans {
    fn log_prior(&self, theta: &[f64]) -> f64 {
        theta.iter().map(|t| -0.5 * (t / self.prior_sd).powi(2)).sum()
    }
    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        for (g, t) in grad.iter_mut().zip(theta) {
            *g -= t / (self.prior_sd * self.prior_sd);
        }
        self.log_prior(theta)
    }
}

impl LogPriorHessian for TwoMeans {
    fn add_log_prior_hessian(&self, _theta: &[f64], hess: &mut [f64]) {
        hess[0] -= 1.0 / (self.prior_sd * self.prior_sd);
        hess[3] -= 1.0 / (self.prior_sd * self.prior_sd);
    }
}

impl ParameterNames for TwoMeans {
    fn parameter_names(&self) -> Vec<String> {
        vec!["mu_a".into(), "mu_b".into()]
    }
}

impl CustomModel for TwoMeans {
    fn exact_hessians(&self) -> bool {
        self.exact_hessians
    }
}

fn spec(sampler: SamplerSettings) -> RunSpec {
    let model = ModelSpec::Custom { label: "two means".into() };
    let mut spec = RunSpec::new(model, DataSpec::Arrays { label: "y".into() }, sampler);
    (spec.chains, spec.warmup, spec.draws) = (4, 500, 1000);
    spec.seed = tallmc_testkit::seed(3);
    (spec.execution.progress, spec.execution.report) = (false, false);
    spec
}

fn matches_closed_form(model: &TwoMeans, sampler: SamplerSettings) {
    let result = run_custom(&spec(sampler), model, &AtomicBool::new(false), None).unwrap();
    assert_eq!(result.parameter_names, ["mu_a", "mu_b"]);
    for (j, p) in result.summary["parameters"].as_array().unwrap().iter().enumerate() {
        let (mean, sd) = model.posterior(j);
        let got = |k: &str| p[k].as_f64().unwrap();
        let (m, s) = (got("mean"), got("sd"));
        assert!((m - mean).abs() < 4.0 * got("mcse_mean"), "μ_{j}: {m} vs {mean}");
        assert!((s - sd).abs() < 4.0 * got("mcse_sd"), "sd of μ_{j}: {s} vs {sd}");
    }
}

#[test]
fn nuts_and_hmc_ecs_sample_the_closed_form_posterior() {
    let model = TwoMeans::new(20_000, true);
    matches_closed_form(&model, SamplerSettings::Nuts(NutsSettings::default()));
    matches_closed_form(&model, SamplerSettings::HmcEcs(HmcEcsSettings::default()));
}

#[test]
fn without_exact_hessians_second_order_control_variates_are_refused() {
    let model = TwoMeans::new(20_000, false);
    let e = run_custom(
        &spec(SamplerSettings::HmcEcs(HmcEcsSettings::default())),
        &model,
        &AtomicBool::new(false),
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("--cv-order 2") && e.contains("Hessians"), "{e}");
    let mut first = HmcEcsSettings::default();
    first.ecs.cv_order = 1;
    matches_closed_form(&model, SamplerSettings::HmcEcs(first));
}

#[test]
fn bound_based_samplers_and_other_models_are_refused() {
    let model = TwoMeans::new(200, true);
    let confidence = SamplerSettings::Confidence(ConfidenceSettings::default());
    let e = run_custom(&spec(confidence), &model, &AtomicBool::new(false), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("bound"), "{e}");
    let mut logistic = spec(SamplerSettings::Nuts(NutsSettings::default()));
    logistic.model = ModelSpec::logistic();
    let e = run_custom(&logistic, &model, &AtomicBool::new(false), None).unwrap_err().to_string();
    assert!(e.contains("ModelSpec::Custom"), "{e}");
    // The spec of a custom run cannot be run without the model.
    let e = tallmc_run::run(
        &spec(SamplerSettings::Nuts(NutsSettings::default())),
        None,
        &AtomicBool::new(false),
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("defined in code"), "{e}");
}
