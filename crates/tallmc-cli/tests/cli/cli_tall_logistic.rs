//! The random-walk minibatch samplers on a logistic regression the size and shape of a real tall
//! data set: 37,591 rows, 21 collinear covariates plus an intercept (22 parameters).
//!
//! Austerity and the confidence sampler start their random walk from the Laplace covariance at
//! scale 2.38/√d and tune only the scale. Learning the shape from warmup draws instead (what
//! they did before) left four chains of 10,000 iterations at R-hat 1.73 and bulk ESS 6 on this
//! kind of data.
//!
//! What a random walk can reach in 20,000 iterations per chain: in d = 22 its ESS is at best
//! about 0.33/d per iteration (Roberts, Gelman & Gilks 1997), so 4 × 18,000 draws give a bulk
//! ESS near 1,000, and split R-hat's own noise at that ESS puts the largest of 22 R-hats near
//! 1.01 (measured with Austerity: 1.014, bulk ESS 644–938; exact MH, ε = 0, 4 × 4,000 draws:
//! ESS per draw 0.013–0.018). The mixing test therefore asks for R-hat < 1.05 and bulk ESS
//! ≥ 400 on every parameter, and posterior means within half an sd of the Laplace mode (a chain
//! stuck away from the mode, as before, fails this).
//!
//! Austerity at its default ε = 0.05 is biased on this design: every posterior sd comes out
//! 1.9–2.1 times the exact one (full-data HMC; at ε = 0 the ratio is 0.93–1.04). The run must
//! say so.

use crate::support;

use crate::support::{stderr, write_collinear_logistic_csv};

const N: usize = 37_591;
const P: usize = 21;

/// Runs `sampler` with `extra` on the data set, written into a fresh temporary directory;
/// expects success and returns the output and summary.json.
fn sample(sampler: &str, extra: &[&str]) -> (std::process::Output, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("tall.csv");
    write_collinear_logistic_csv(&data, N, P);
    let out = dir.path().join(sampler);
    let model = ["--model", "logistic", "--intercept", "--seed", "3"];
    let (o, summary) = support::sample(sampler, &model, &data, &out, extra);
    assert!(o.status.success(), "{}", stderr(&o));
    (o, summary.expect("summary.json"))
}

/// Every one of the P + 1 parameters has R-hat below `max_rhat`, a bulk ESS of at least 400 and
/// a mean within half a posterior sd of the Laplace mode (the posterior of 37,591 rows is close
/// to Gaussian: its mean and mode differ by a small fraction of an sd).
fn assert_mixes(o: &std::process::Output, summary: &serde_json::Value, max_rhat: f64) {
    let params = summary["parameters"].as_array().unwrap();
    assert_eq!(params.len(), P + 1);
    let mode = summary["laplace_mode"].as_array().unwrap();
    for (p, m) in params.iter().zip(mode) {
        let name = p["name"].as_str().unwrap();
        let rhat = p["rhat"].as_f64().unwrap();
        let ess = p["ess_bulk"].as_f64().unwrap();
        let (mean, sd) = (p["mean"].as_f64().unwrap(), p["sd"].as_f64().unwrap());
        assert!(rhat < max_rhat, "{name}: R-hat {rhat}\n{}", stderr(o));
        assert!(ess >= 400.0, "{name}: bulk ESS {ess}\n{}", stderr(o));
        let m = m.as_f64().unwrap();
        assert!((mean - m).abs() < 0.5 * sd, "{name}: mean {mean} vs mode {m} (sd {sd})");
    }
}

#[test]
fn austerity_mixes_within_20000_iterations_and_reports_its_widened_draws() {
    let (o, summary) = sample("austerity", &["--warmup", "2000", "--draws", "18000"]);
    assert_mixes(&o, &summary, 1.05);
    let fraction = summary["totals"]["data_fraction_per_iteration"].as_f64().unwrap();
    assert!(fraction < 0.5, "austerity read {fraction} of the data per iteration");
    let err = stderr(&o);
    assert!(!err.contains("no saving over exact MH"), "{err}");
    // The bias of ε = 0.05 is reported, with the flag that removes it.
    assert!(err.contains("spread far wider than the posterior"), "{err}");
    assert!(err.contains("--epsilon"), "{err}");
}

/// Issue 28's must-show: an exact minibatch kernel reaches R-hat < 1.01 within 20,000
/// iterations per chain reading at most 20 % of the data. SMH of order 2 with pCN proposals
/// around the Laplace approximation does it in 5,000 (measured: R-hat ≤ 1.003, about 11 % of
/// the rows per iteration, bulk ESS in the thousands); with the random walk it needs all
/// 20,000 (R-hat 1.009) at 2.5 %.
#[test]
fn smh_with_pcn_mixes_within_20000_iterations_reading_a_fifth_of_the_data_or_less() {
    let (o, summary) = sample("smh", &["--pcn", "0.5", "--warmup", "1000", "--draws", "4000"]);
    assert_mixes(&o, &summary, 1.01);
    let fraction = summary["totals"]["data_fraction_per_iteration"].as_f64().unwrap();
    assert!(fraction <= 0.2, "smh --pcn read {fraction} of the data per iteration");
}

#[test]
fn the_confidence_sampler_says_when_it_reads_every_datum() {
    // Its concentration bounds scale with the range of ℓ_i(θ′) − ℓ_i(θ), wide on a collinear
    // 22-parameter design: every decision reads all N points, and the run says so.
    let (o, summary) = sample("confidence", &["--warmup", "100", "--draws", "100"]);
    let fraction = summary["totals"]["data_fraction_per_iteration"].as_f64().unwrap();
    assert!(fraction >= 0.9, "{fraction}");
    let err = stderr(&o);
    assert!(err.contains("no saving over exact MH"), "{err}");
    assert!(err.contains("--cv"), "the hint names --cv: {err}");
}
