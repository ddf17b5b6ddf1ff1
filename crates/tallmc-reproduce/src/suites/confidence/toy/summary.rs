//! The JSON summary of Fig. 4 and the exactness check.

use serde_json::{Value, json};

use super::*;
use crate::part::z;

/// The JSON summary of Fig. 4, the decision audits and the exactness check.
pub(super) fn summary(toy: &Toy) -> Value {
    let mut problems = serde_json::Map::new();
    for p in &toy.problems {
        let t = &p.truth;
        let exact = p.run(Method::ExactMh);
        let mut runs = serde_json::Map::new();
        for r in &p.runs {
            let vs_exact = |f: &dyn Fn(&MethodRun) -> (f64, f64)| {
                exact.map_or(f64::NAN, |e| {
                    let (a, sa) = f(r);
                    let (b, sb) = f(e);
                    z(a, sa, b, sb)
                })
            };
            runs.insert(
                    r.method.key().into(),
                    json!({
                        "sigma_mean": r.sigma.mean, "sigma_sd": r.sigma.sd,
                        "sigma_mcse_mean": r.sigma.mcse_mean, "sigma_mcse_sd": r.sigma.mcse_sd,
                        "sigma_relative_bias": r.sigma_relative_bias(t),
                        "sigma_sd_ratio": r.sigma.sd / t.sigma_sd,
                        "z_sigma_mean_vs_closed_form": (r.sigma.mean - t.sigma_mean) / r.sigma.mcse_mean,
                        "z_sigma_sd_vs_closed_form": (r.sigma.sd - t.sigma_sd) / r.sigma.mcse_sd,
                        "z_sigma_mean_vs_exact_mh": vs_exact(&|m| (m.sigma.mean, m.sigma.mcse_mean)),
                        "z_sigma_sd_vs_exact_mh": vs_exact(&|m| (m.sigma.sd, m.sigma.mcse_sd)),
                        "mu_mean": r.mu.mean, "mu_sd": r.mu.sd,
                        "mu_mcse_mean": r.mu.mcse_mean, "mu_mcse_sd": r.mu.mcse_sd,
                        "z_mu_mean_vs_closed_form": (r.mu.mean - t.mu_mean) / r.mu.mcse_mean,
                        "z_mu_sd_vs_closed_form": (r.mu.sd - t.mu_sd) / r.mu.mcse_sd,
                        "z_mu_mean_vs_exact_mh": vs_exact(&|m| (m.mu.mean, m.mu.mcse_mean)),
                        "z_mu_sd_vs_exact_mh": vs_exact(&|m| (m.mu.sd, m.mu.mcse_sd)),
                        "sigma_ess_bulk": r.sigma.ess_bulk, "sigma_rhat": r.sigma.rhat,
                        "accept": r.accept, "scale": r.scale,
                        "data_fraction": r.data_fraction,
                        "evals_per_iteration": r.evals_per_iteration,
                        "evals_relative_to_exact_mh": r.evals_per_iteration / TOY_N as f64,
                        "sampling_seconds": r.sampling_seconds,
                    }),
                );
        }
        problems.insert(
            p.data.key().into(),
            json!({
                "n": t.n, "y_min": p.y_range.0, "y_max": p.y_range.1,
                "closed_form": {
                    "y_mean": t.y_mean, "sample_sd": t.sample_sd,
                    "mu_mean": t.mu_mean, "mu_sd": t.mu_sd,
                    "sigma_mean": t.sigma_mean, "sigma_sd": t.sigma_sd,
                },
                "methods": runs,
            }),
        );
    }
    let mut ex = serde_json::Map::new();
    for e in &toy.exactness {
        ex.insert(e.data.key().into(), serde_json::to_value(e).unwrap_or(Value::Null));
    }
    let mut audits = serde_json::Map::new();
    for a in &toy.audits {
        audits.insert(
                format!("{}_{}", a.data.key(), a.method.key()),
                json!({"decisions": a.decisions, "wrong_fraction": a.wrong_fraction, "data_fraction": a.data_fraction}),
            );
    }
    json!({
        "chains": toy.chains, "warmup": toy.warmup, "draws_per_chain": toy.draws,
        "austerity_draws_factor_lognormal": AUSTERITY_DRAWS_FACTOR,
        "decision_audits": audits,
        "target_accept": TARGET_ACCEPT,
        "austerity": {"epsilon": AUSTERITY_EPSILON, "batch": AUSTERITY_BATCH, "first_batch": [2, AUSTERITY_BATCH]},
        "confidence": {"bound": "empirical-bernstein-serfling", "delta": CONFIDENCE_DELTA, "p": 2.0, "gamma": 2.0, "first_batch": 100},
        "problems": problems,
        "exactness": ex,
    })
}
