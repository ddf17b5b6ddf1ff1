//! End-to-end tests of the `tallmc` binary.

mod support;

use support::{stderr, tallmc, write_gaussian_csv};

fn draws_of(csv: &str) -> Vec<String> {
    csv.lines().filter(|l| !l.starts_with('#')).map(str::to_string).collect()
}

#[test]
fn gaussian_mean_through_the_cli_matches_the_closed_form() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("y.csv");
    let ys = write_gaussian_csv(&data, 5_000);
    let out = dir.path().join("run");
    for sampler in ["rwm", "adaptive-mh", "hmc"] {
        let o = tallmc(&[
            "sample",
            "--model",
            "gaussian-mean",
            "--sigma",
            "2",
            "--prior-sd",
            "10",
            "--data",
            data.to_str().unwrap(),
            "--sampler",
            sampler,
            "--chains",
            "2",
            "--warmup",
            "500",
            "--draws",
            "2000",
            "--seed",
            "3",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{sampler}: {}", stderr(&o));
        // Closed form: precision 1/10² + n/2², mean (Σy/2²)/precision.
        let precision = 1.0 / 100.0 + ys.len() as f64 / 4.0;
        let mean = ys.iter().sum::<f64>() / 4.0 / precision;
        let sd = precision.sqrt().recip();
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        let p = &summary["parameters"][0];
        assert_eq!(p["name"], "mu");
        let (m, mc) = (p["mean"].as_f64().unwrap(), p["mcse_mean"].as_f64().unwrap());
        let (s, sc) = (p["sd"].as_f64().unwrap(), p["mcse_sd"].as_f64().unwrap());
        assert!((m - mean).abs() < 4.0 * mc, "{sampler}: mean {m} vs {mean} (mcse {mc})");
        assert!((s - sd).abs() < 4.0 * sc, "{sampler}: sd {s} vs {sd} (mcse {sc})");
        for key in ["q5", "q50", "q95", "ess_bulk", "ess_tail", "rhat"] {
            assert!(p[key].is_number(), "{key} missing");
        }
        let totals = &summary["totals"];
        assert!(totals["evals"]["total"].as_u64().unwrap() > 0);
        assert!(totals["wall_seconds"]["total"].as_f64().unwrap() > 0.0);
        assert_eq!(totals["data_fraction_per_iteration"].as_f64().unwrap(), 1.0);
        let csv = std::fs::read_to_string(out.join("chain_2.csv")).unwrap();
        let rows = draws_of(&csv);
        assert!(rows[0].starts_with("lp__,") && rows[0].ends_with(",mu"), "{}", rows[0]);
        assert_eq!(rows.len(), 2001);
    }
}

#[test]
fn same_seed_same_draws() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("y.csv");
    write_gaussian_csv(&data, 500);
    let run = |out: &str| {
        let out = dir.path().join(out);
        let o = tallmc(&[
            "sample",
            "--model",
            "gaussian",
            "--data",
            data.to_str().unwrap(),
            "--sampler",
            "hmc",
            "--chains",
            "2",
            "--warmup",
            "200",
            "--draws",
            "200",
            "--seed",
            "9",
            "--out",
            out.to_str().unwrap(),
            "--threads",
            "1",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        draws_of(&std::fs::read_to_string(out.join("chain_2.csv")).unwrap())
    };
    assert_eq!(run("a"), run("b"));
}

#[test]
fn bad_inputs_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("y.csv");
    write_gaussian_csv(&data, 50);
    let ragged = dir.path().join("ragged.csv");
    std::fs::write(&ragged, "y,x1\n1,2\n0\n").unwrap();
    let nan = dir.path().join("nan.csv");
    std::fs::write(&nan, "y,x1\n1,2\n0,NaN\n").unwrap();
    let d = data.to_str().unwrap();
    let out = dir.path().join("o");
    let o = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--model", "logistic", "--data", "/nonexistent/file.csv", "--sampler", "hmc"],
            "/nonexistent/file.csv",
        ),
        (
            vec!["--model", "logistic", "--data", ragged.to_str().unwrap(), "--sampler", "hmc"],
            "ragged.csv:3",
        ),
        (
            vec!["--model", "logistic", "--data", nan.to_str().unwrap(), "--sampler", "hmc"],
            "nan.csv:3:2 (column `x1`)",
        ),
        (
            vec!["--model", "logistic", "--data", d, "--sampler", "hmc"],
            "add covariates or an intercept",
        ),
        (vec!["--model", "logistic", "--data", d, "--intercept", "--sampler", "hmc"], "0 or 1"),
        (
            vec!["--model", "gaussian", "--data", d, "--sampler", "hmc", "--prior-sd", "1"],
            "--prior-sd",
        ),
        (vec!["--model", "gaussian-mean", "--data", d, "--sampler", "hmc"], "--sigma"),
        (
            vec!["--model", "gaussian-mean", "--data", d, "--sampler", "hmc", "--sigma", "-1"],
            "sigma",
        ),
        (
            vec!["--model", "gaussian", "--data", d, "--sampler", "hmc", "--chains", "0"],
            "--chains 0",
        ),
        (
            vec!["--model", "gaussian", "--data", d, "--sampler", "hmc", "--target-accept", "1.5"],
            "--target-accept 1.5",
        ),
        (vec!["--model", "gaussian", "--data", d, "--sampler", "nuts"], "nuts"),
        (
            vec!["--model", "linear", "--data", d, "--sampler", "hmc", "--prior-sd", "-2"],
            "--prior-sd -2",
        ),
    ];
    for (args, needle) in cases {
        let mut all = vec!["sample"];
        all.extend(args.iter());
        all.extend(["--out", o]);
        let r = tallmc(&all);
        let err = stderr(&r);
        assert!(!r.status.success(), "{all:?} should fail");
        assert!(err.contains(needle), "{all:?}: stderr {err:?} should mention {needle:?}");
        assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{all:?}: {err}");
        if needle != "nuts" {
            assert_eq!(err.trim_end().lines().count(), 1, "{all:?}: not one line: {err}");
        }
    }
}

#[test]
fn help_documents_every_flag() {
    let o = tallmc(&["sample", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    for flag in [
        "--model",
        "--data",
        "--intercept",
        "--standardize",
        "--prior-sd",
        "--sigma",
        "--sampler",
        "--chains",
        "--warmup",
        "--draws",
        "--seed",
        "--out",
        "logistic",
        "gaussian-mean",
        "adaptive-mh",
    ] {
        assert!(help.contains(flag), "--help does not mention {flag}");
    }
}

#[test]
fn minibatch_samplers_report_their_test_and_data_fraction() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("y.csv");
    let ys = write_gaussian_csv(&data, 20_000);
    // Closed form for the Gaussian mean with known σ = 2 and prior N(0, 10²).
    let precision = 1.0 / 100.0 + ys.len() as f64 / 4.0;
    let mean = ys.iter().sum::<f64>() / 4.0 / precision;
    for (sampler, extra) in
        [("confidence", vec!["--delta", "0.01"]), ("austerity", vec!["--epsilon", "0.05"])]
    {
        let out = dir.path().join(sampler);
        let mut args = vec![
            "sample",
            "--model",
            "gaussian-mean",
            "--sigma",
            "2",
            "--data",
            data.to_str().unwrap(),
            "--sampler",
            sampler,
            "--chains",
            "2",
            "--warmup",
            "500",
            "--draws",
            "2000",
            "--seed",
            "4",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(extra.iter());
        let o = tallmc(&args);
        assert!(o.status.success(), "{sampler}: {}", stderr(&o));
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(summary["test"]["test"], sampler);
        let fraction = summary["totals"]["data_fraction_per_iteration"].as_f64().unwrap();
        assert!(fraction > 0.0 && fraction <= 1.0, "{sampler}: fraction {fraction}");
        let csv = std::fs::read_to_string(out.join("chain_1.csv")).unwrap();
        assert!(csv.contains(&format!("# test = {sampler}")), "the test is recorded in the CSV");
        if sampler == "confidence" {
            // Each decision differs from exact MH with probability ≤ δ = 0.01: the posterior
            // mean is within Monte Carlo error of the closed form.
            let p = &summary["parameters"][0];
            let (m, mc) = (p["mean"].as_f64().unwrap(), p["mcse_mean"].as_f64().unwrap());
            assert!((m - mean).abs() < 4.0 * mc, "confidence: mean {m} vs {mean} (mcse {mc})");
            assert!(csv.contains("# delta = 0.01"));
        } else {
            assert!(csv.contains("# epsilon = 0.05"), "Austerity's ε must be in the CSV comments");
            assert!(fraction < 1.0, "Austerity at ε = 0.05 should decide on subsamples");
        }
    }
}

#[test]
fn sgld_runs_with_its_step_size_and_reports_minibatch_costs() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("y.csv");
    let ys = write_gaussian_csv(&data, 20_000);
    let precision = 1.0 / 100.0 + ys.len() as f64 / 4.0;
    let (mean, sd) = (ys.iter().sum::<f64>() / 4.0 / precision, precision.sqrt().recip());
    let out = dir.path().join("sgld");
    let (d, o) = (data.to_str().unwrap(), out.to_str().unwrap());
    let base = ["sample", "--model", "gaussian-mean", "--sigma", "2", "--data", d, "--out", o];
    let h = format!("{}", 0.05 * sd * sd);
    let mut args = base.to_vec();
    args.extend([
        "--sampler",
        "sgld",
        "--step-size",
        &h,
        "--batch",
        "500",
        "--chains",
        "1",
        "--warmup",
        "200",
        "--draws",
        "2000",
    ]);
    let r = tallmc(&args);
    assert!(r.status.success(), "sgld: {}", stderr(&r));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let totals = &summary["totals"];
    assert_eq!(totals["evals_sampling"]["gradients"].as_u64(), Some(500 * 2000));
    let fraction = totals["data_fraction_per_iteration"].as_f64().unwrap();
    assert!((fraction - 500.0 / 20_000.0).abs() < 1e-12, "fraction {fraction}");
    // SGLD is biased, but at h = 0.05 sd² it stays near the posterior.
    let m = summary["parameters"][0]["mean"].as_f64().unwrap();
    assert!((m - mean).abs() < 5.0 * sd, "sgld mean {m} vs {mean} (posterior sd {sd})");
    let csv = std::fs::read_to_string(out.join("chain_1.csv")).unwrap();
    assert!(csv.contains(&format!("# step_size = {h}")), "the step size is in the CSV comments");

    for (extra, needle) in [
        (vec!["--sampler", "sgld"], "--step-size"),
        (vec!["--sampler", "sgld", "--step-size", "0"], "--step-size 0"),
        (vec!["--sampler", "hmc", "--step-size", "0.1"], "--step-size applies only"),
        (vec!["--sampler", "sgld", "--step-size", "0.1", "--batch", "30000"], "--batch 30000"),
    ] {
        let mut all = base.to_vec();
        all.extend(extra.iter());
        let r = tallmc(&all);
        let err = stderr(&r);
        assert!(!r.status.success(), "{all:?} should fail");
        assert!(err.contains(needle), "{all:?}: stderr {err:?} should mention {needle:?}");
    }
}

#[test]
fn sghmc_and_sgnht_run_with_control_variates_and_reject_misplaced_flags() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("y.csv");
    let ys = write_gaussian_csv(&data, 20_000);
    let precision = 1.0 / 100.0 + ys.len() as f64 / 4.0;
    let (mean, sd) = (ys.iter().sum::<f64>() / 4.0 / precision, precision.sqrt().recip());
    let h = format!("{}", 0.01 * sd);
    for (sampler, extra) in
        [("sghmc", vec!["--num-steps", "20"]), ("sgnht", vec!["--thermostat", "element-wise"])]
    {
        let out = dir.path().join(sampler);
        let (d, o) = (data.to_str().unwrap(), out.to_str().unwrap());
        let mut args = vec!["sample", "--model", "gaussian-mean", "--sigma", "2", "--data", d];
        args.extend(["--out", o, "--sampler", sampler, "--step-size", &h, "--batch", "100"]);
        args.extend(["--cv", "--chains", "1", "--warmup", "200", "--draws", "1000"]);
        args.extend(extra.iter());
        let r = tallmc(&args);
        assert!(r.status.success(), "{sampler}: {}", stderr(&r));
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        // The control variates' pass at the mode is set-up cost: at least N gradients.
        let setup = summary["totals"]["evals_setup"]["gradients"].as_u64().unwrap();
        assert!(setup >= 20_000, "{sampler}: setup gradients {setup}");
        let fraction = summary["totals"]["data_fraction_per_iteration"].as_f64().unwrap();
        assert!(fraction > 0.0 && fraction < 1.0, "{sampler}: fraction {fraction}");
        // A sanity check only (the kernels' statistical tests live in tallmc-samplers).
        let m = summary["parameters"][0]["mean"].as_f64().unwrap();
        assert!((m - mean).abs() < 5.0 * sd, "{sampler} mean {m} vs {mean} (sd {sd})");
        let csv = std::fs::read_to_string(out.join("chain_1.csv")).unwrap();
        assert!(csv.contains("# control_variates = Taylor order 1 at the posterior mode"));
    }

    let (d, o) = (data.to_str().unwrap(), dir.path().join("bad"));
    let o = o.to_str().unwrap();
    let base = ["sample", "--model", "gaussian-mean", "--sigma", "2", "--data", d, "--out", o];
    for (extra, needle) in [
        (vec!["--sampler", "sghmc"], "--step-size"),
        (vec!["--sampler", "sgld", "--step-size", "0.1", "--num-steps", "5"], "--num-steps"),
        (
            vec!["--sampler", "sghmc", "--step-size", "0.1", "--thermostat", "scalar"],
            "--thermostat",
        ),
        (vec!["--sampler", "sgld", "--step-size", "0.1", "--cv-order", "2"], "--cv-order"),
        (vec!["--sampler", "sgld", "--step-size", "0.1", "--cv", "--cv-order", "3"], "3"),
        (vec!["--sampler", "sghmc", "--step-size", "0.1", "--num-steps", "0"], "0"),
        (vec!["--sampler", "hmc", "--cv"], "--cv applies only"),
    ] {
        let mut all = base.to_vec();
        all.extend(extra.iter());
        let r = tallmc(&all);
        let err = stderr(&r);
        assert!(!r.status.success(), "{all:?} should fail");
        assert!(err.contains(needle), "{all:?}: stderr {err:?} should mention {needle:?}");
    }
}

/// Perturbed and signed HMC-ECS through the CLI on the Gaussian mean: with 2nd-order control
/// variates the Taylor expansion is exact (σ̂² = 0, every block estimate d̂ = 0), so both
/// kernels target the exact posterior and must match the closed form within 4 MCSE; the signed
/// run writes sign__ and a sign-corrected summary.
#[test]
fn hmc_ecs_perturbed_and_signed_match_the_closed_form_and_report_subsample_costs() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("y.csv");
    let ys = write_gaussian_csv(&data, 20_000);
    let precision = 1.0 / 100.0 + ys.len() as f64 / 4.0;
    let (mean, sd) = (ys.iter().sum::<f64>() / 4.0 / precision, precision.sqrt().recip());
    for (sampler, extra) in [
        ("hmc-ecs", vec!["--subsample", "200", "--blocks", "20"]),
        ("hmc-ecs-signed", vec!["--subsample", "10", "--lambda", "20"]),
    ] {
        let out = dir.path().join(sampler);
        let (d, o) = (data.to_str().unwrap(), out.to_str().unwrap());
        let mut args = vec!["sample", "--model", "gaussian-mean", "--sigma", "2", "--data", d];
        args.extend(["--out", o, "--sampler", sampler, "--chains", "2", "--seed", "5"]);
        args.extend(["--warmup", "500", "--draws", "2000"]);
        args.extend(extra.iter());
        let r = tallmc(&args);
        assert!(r.status.success(), "{sampler}: {}", stderr(&r));
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(summary["sampler"], sampler);
        let p = if sampler == "hmc-ecs-signed" {
            let s = &summary["sign_corrected"];
            assert_eq!(s["tau"].as_f64(), Some(1.0), "exact control variates: no negative sign");
            assert_eq!(s["negative_signs"].as_u64(), Some(0));
            s["parameters"][0].clone()
        } else {
            assert!(summary.get("sign_corrected").is_none());
            summary["parameters"][0].clone()
        };
        assert_eq!(p["name"], "mu");
        let (m, mc) = (p["mean"].as_f64().unwrap(), p["mcse_mean"].as_f64().unwrap());
        assert!((m - mean).abs() < 4.0 * mc, "{sampler}: mean {m} vs {mean} (mcse {mc})");
        let s = p["sd"].as_f64().unwrap();
        assert!((s / sd - 1.0).abs() < 0.1, "{sampler}: sd {s} vs {sd}");
        // Per iteration: (L + 1) passes over the subsample, far less than the data.
        let fraction = summary["totals"]["data_fraction_per_iteration"].as_f64().unwrap();
        assert!(fraction > 0.0 && fraction < 0.5, "{sampler}: fraction {fraction}");
        let csv = std::fs::read_to_string(out.join("chain_1.csv")).unwrap();
        assert!(csv.contains("# control_variates = Taylor order 2"), "{sampler}");
        let header = draws_of(&csv)[0].clone();
        let column = if sampler == "hmc-ecs" { "sigma2__" } else { "sign__" };
        assert!(header.contains(column), "{sampler}: header {header} lacks {column}");
    }

    let (d, o) = (data.to_str().unwrap(), dir.path().join("bad"));
    let o = o.to_str().unwrap();
    let base = ["sample", "--model", "gaussian-mean", "--sigma", "2", "--data", d, "--out", o];
    for (extra, needle) in [
        (vec!["--sampler", "hmc-ecs", "--subsample", "0"], "--subsample 0"),
        (vec!["--sampler", "hmc-ecs", "--subsample", "30000"], "--subsample 30000"),
        (vec!["--sampler", "hmc-ecs", "--blocks", "0"], "--blocks 0"),
        (vec!["--sampler", "hmc-ecs", "--subsample", "10", "--blocks", "11"], "--blocks 11"),
        (vec!["--sampler", "hmc-ecs-signed", "--lambda", "0"], "--lambda 0"),
        (vec!["--sampler", "hmc-ecs", "--cv-order", "3"], "3"),
        (vec!["--sampler", "hmc-ecs", "--lambda", "10"], "--lambda applies only"),
        (vec!["--sampler", "hmc-ecs-signed", "--blocks", "10"], "--blocks applies only"),
        (vec!["--sampler", "hmc", "--subsample", "10"], "--subsample applies only"),
        (vec!["--sampler", "hmc-ecs", "--metric", "dense"], "--metric applies only"),
        (vec!["--sampler", "hmc-ecs", "--trajectory-length", "-1"], "--trajectory-length"),
    ] {
        let mut all = base.to_vec();
        all.extend(extra.iter());
        let r = tallmc(&all);
        let err = stderr(&r);
        assert!(!r.status.success(), "{all:?} should fail");
        assert!(err.contains(needle), "{all:?}: stderr {err:?} should mention {needle:?}");
    }
}

/// The confidence sampler with Taylor proxies (`--cv`): on the Gaussian mean the 2nd-order
/// proxy is exact (remainders are 0), so every decision is exact and cheap; the posterior mean
/// must match the closed form within 4 MCSE, and the proxy run must use far less of the data
/// than the plain confidence sampler on the same problem.
#[test]
fn confidence_with_taylor_proxies_matches_the_closed_form_with_less_data() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("y.csv");
    let ys = write_gaussian_csv(&data, 20_000);
    let precision = 1.0 / 100.0 + ys.len() as f64 / 4.0;
    let mean = ys.iter().sum::<f64>() / 4.0 / precision;
    let mut fractions = Vec::new();
    for cv in [false, true] {
        let out = dir.path().join(if cv { "proxy" } else { "plain" });
        let (d, o) = (data.to_str().unwrap(), out.to_str().unwrap());
        let mut args = vec!["sample", "--model", "gaussian-mean", "--sigma", "2", "--data", d];
        args.extend(["--out", o, "--sampler", "confidence", "--chains", "2", "--seed", "6"]);
        args.extend(["--warmup", "500", "--draws", "2000"]);
        if cv {
            args.push("--cv");
        }
        let r = tallmc(&args);
        assert!(r.status.success(), "cv {cv}: {}", stderr(&r));
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        let p = &summary["parameters"][0];
        let (m, mc) = (p["mean"].as_f64().unwrap(), p["mcse_mean"].as_f64().unwrap());
        assert!((m - mean).abs() < 4.0 * mc, "cv {cv}: mean {m} vs {mean} (mcse {mc})");
        fractions.push(summary["totals"]["data_fraction_per_iteration"].as_f64().unwrap());
        if cv {
            let csv = std::fs::read_to_string(out.join("chain_1.csv")).unwrap();
            assert!(csv.contains("# proxies = Taylor order 2"), "the proxies are recorded");
        }
    }
    assert!(
        fractions[1] < 0.5 * fractions[0],
        "proxies should use far less data: {} vs plain {}",
        fractions[1],
        fractions[0]
    );
    let (d, o) = (data.to_str().unwrap(), dir.path().join("bad"));
    let o = o.to_str().unwrap();
    let r = tallmc(&[
        "sample",
        "--model",
        "gaussian",
        "--data",
        d,
        "--out",
        o,
        "--sampler",
        "confidence",
        "--cv",
    ]);
    assert!(!r.status.success());
    assert!(stderr(&r).contains("third derivatives"), "{}", stderr(&r));
    let r = tallmc(&[
        "sample",
        "--model",
        "gaussian",
        "--data",
        d,
        "--out",
        o,
        "--sampler",
        "hmc",
        "--cv",
    ]);
    assert!(stderr(&r).contains("--cv applies only"), "{}", stderr(&r));
}
