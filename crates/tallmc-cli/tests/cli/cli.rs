//! End-to-end tests of the `tallmc` binary.

use crate::support;

use std::path::Path;

use crate::support::{
    assert_mean_within_4_mcse, bad_value, fails_with, gaussian_mean_args, stderr, summary, tallmc,
    temp_gaussian_csv, usage_error,
};

fn draws_of(csv: &str) -> Vec<String> {
    csv.lines().filter(|l| !l.starts_with('#')).map(str::to_string).collect()
}

#[test]
fn gaussian_mean_through_the_cli_matches_the_closed_form() {
    let (dir, data, ys) = temp_gaussian_csv(5_000);
    let out = dir.path().join("run");
    for sampler in ["rwm", "adaptive-mh", "hmc", "nuts"] {
        let mut args = gaussian_mean_args(sampler, data.to_str().unwrap(), out.to_str().unwrap());
        args.extend(["--chains", "2", "--warmup", "500", "--draws", "2000", "--seed", "3"]);
        let o = tallmc(&args);
        assert!(o.status.success(), "{sampler}: {}", stderr(&o));
        // Closed form: precision 1/10² + n/2², mean (Σy/2²)/precision.
        let precision = 1.0 / 100.0 + ys.len() as f64 / 4.0;
        let mean = ys.iter().sum::<f64>() / 4.0 / precision;
        let sd = precision.sqrt().recip();
        let summary = summary(&out);
        let p = &summary["parameters"][0];
        assert_eq!(p["name"], "mu");
        assert_mean_within_4_mcse(p, mean, sampler);
        let (s, sc) = (p["sd"].as_f64().unwrap(), p["mcse_sd"].as_f64().unwrap());
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
    let (dir, data, _) = temp_gaussian_csv(500);
    let run = |out: &str| {
        let out = dir.path().join(out);
        let o = tallmc(&[
            "sample",
            "hmc",
            "--model",
            "gaussian",
            "--data",
            data.to_str().unwrap(),
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

/// NumPy's `.npy` files (X and y, as `np.save` writes them; fixtures of tallmc-models) give the
/// draws of the same numbers as CSV, bit for bit; a `.npy` X without `--y-npy`, and `--y-npy`
/// with another format, are one-line errors.
#[test]
fn npy_files_give_the_draws_of_the_same_csv() {
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tallmc-models/tests/fixtures/npy");
    let (x, y, csv) =
        (fixtures.join("x_37x3.npy"), fixtures.join("y_37.npy"), fixtures.join("xy_37x3.csv"));
    let dir = tempfile::tempdir().unwrap();
    let run = |data: &Path, extra: &[&str], out: &str| {
        let out = dir.path().join(out);
        let mut args = vec!["sample", "hmc", "--model", "logistic", "--intercept"];
        args.extend(["--data", data.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        args.extend(["--chains", "1", "--warmup", "100", "--draws", "100", "--seed", "4"]);
        args.extend(extra);
        let o = tallmc(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        draws_of(&std::fs::read_to_string(out.join("chain_1.csv")).unwrap())
    };
    let from_npy = run(&x, &["--y-npy", y.to_str().unwrap()], "npy");
    assert_eq!(from_npy, run(&csv, &[], "csv"));
    // --no-report: no report on stderr (summary.json is still written).
    let out = dir.path().join("quiet");
    let mut args = vec!["sample", "hmc", "--model", "logistic", "--no-report", "--no-progress"];
    args.extend(["--data", csv.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    args.extend(["--warmup", "50", "--draws", "50"]);
    let o = tallmc(&args);
    assert!(o.status.success() && stderr(&o).is_empty(), "{}", stderr(&o));
    assert!(out.join("summary.json").exists());
    let out = dir.path().join("bad");
    let base = ["sample", "hmc", "--model", "logistic", "--out", out.to_str().unwrap()];
    fails_with(&[&base[..], &["--data", x.to_str().unwrap()]].concat(), "--y-npy");
    let with_csv = [&base[..], &["--data", csv.to_str().unwrap(), "--y-npy", y.to_str().unwrap()]];
    fails_with(&with_csv.concat(), "applies only to a .npy --data file");
}

#[test]
fn bad_inputs_are_one_line_errors() {
    let (dir, data, _) = temp_gaussian_csv(50);
    let ragged = dir.path().join("ragged.csv");
    std::fs::write(&ragged, "y,x1\n1,2\n0\n").unwrap();
    let nan = dir.path().join("nan.csv");
    std::fs::write(&nan, "y,x1\n1,2\n0,NaN\n").unwrap();
    let d = data.to_str().unwrap();
    let out = dir.path().join("o");
    let o = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--model", "logistic", "--data", "/nonexistent/file.csv"], "/nonexistent/file.csv"),
        (vec!["--model", "logistic", "--data", ragged.to_str().unwrap()], "ragged.csv:3"),
        (vec!["--model", "logistic", "--data", nan.to_str().unwrap()], "nan.csv:3:2 (column `x1`)"),
        (
            vec!["--model", "logistic", "--data", d, "--no-intercept"],
            "add covariates or an intercept",
        ),
        (vec!["--model", "logistic", "--data", d, "--intercept"], "0 or 1"),
        (vec!["--model", "gaussian", "--data", d, "--prior-sd", "1"], "--prior-sd"),
        (vec!["--model", "gaussian-mean", "--data", d], "--sigma"),
        (vec!["--model", "gaussian-mean", "--data", d, "--sigma", "-1"], "sigma"),
        (vec!["--model", "gaussian", "--data", d, "--chains", "0"], "--chains 0"),
        (vec!["--model", "gaussian", "--data", d, "--target-accept", "1.5"], "--target-accept 1.5"),
        (vec!["--model", "linear", "--data", d, "--prior-sd", "-2"], "--prior-sd -2"),
    ];
    for (args, needle) in cases {
        let mut all = vec!["sample", "hmc"];
        all.extend(args.iter());
        all.extend(["--out", o]);
        bad_value(&all, needle);
    }
    usage_error(&["sample", "slice", "--model", "gaussian", "--data", d, "--out", o], "slice");
    for depth in ["0", "31"] {
        let args = ["sample", "nuts", "--model", "gaussian", "--data", d, "--max-depth", depth];
        let mut all = args.to_vec();
        all.extend(["--out", o]);
        bad_value(&all, &format!("--max-depth {depth}: expected a whole number from 1 to 30"));
    }
}

/// Every sampler of the library, by its subcommand name.
const SAMPLERS: [&str; 18] = [
    "rwm",
    "adaptive-mh",
    "hmc",
    "nuts",
    "austerity",
    "confidence",
    "sgld",
    "sghmc",
    "sgnht",
    "hmc-ecs",
    "hmc-ecs-signed",
    "bps",
    "sbps",
    "psbps",
    "lipsbps",
    "zigzag",
    "zigzag-ss",
    "zigzag-cv",
];

/// The flags every sampler takes.
const COMMON_FLAGS: [&str; 24] = [
    "--model",
    "--data",
    "--y",
    "--columns",
    "--y-npy",
    "--intercept",
    "--no-intercept",
    "--overwrite",
    "--standardize",
    "--offset",
    "--exposure",
    "--nu",
    "--prior-sd",
    "--prior-mean",
    "--sigma",
    "--chains",
    "--warmup",
    "--draws",
    "--seed",
    "--out",
    "--init",
    "--threads",
    "--no-progress",
    "--no-report",
];

fn help(args: &[&str]) -> String {
    let o = tallmc(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The flags listed in a help text: the first `--` word of each option line (clap indents
/// option lines by at most six spaces, their descriptions by ten).
fn flags_in(help: &str) -> Vec<String> {
    help.lines()
        .filter(|l| {
            let t = l.trim_start();
            t.starts_with('-') && l.len() - t.len() <= 6
        })
        .filter_map(|l| l.split([' ', ',']).find(|w| w.starts_with("--")))
        .map(str::to_string)
        .collect()
}

#[test]
fn sample_help_lists_every_sampler() {
    let text = help(&["sample", "--help"]);
    for sampler in SAMPLERS {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(&format!("{sampler} "))),
            "`tallmc sample --help` does not list {sampler}: {text}"
        );
    }
    assert!(text.contains("Dang et al. 2019"), "the samplers' docs are shown: {text}");
    // Without a sampler, clap says one is needed.
    usage_error(&["sample", "--model", "logistic"], "SAMPLER");
}

#[test]
fn each_samplers_help_shows_its_doc_and_only_its_flags() {
    let own: [(&str, &[&str], &str); 6] = [
        ("rwm", &[], "Random-walk Metropolis"),
        ("hmc", &["--metric", "--target-accept", "--trajectory-length"], "Hamiltonian"),
        ("nuts", &["--metric", "--target-accept", "--max-depth"], "No-U-Turn"),
        ("austerity", &["--epsilon", "--batch", "--first-batch"], "Korattikara"),
        ("sgld", &["--step-size", "--batch", "--cv", "--cv-order", "--precondition"], "Welling"),
        (
            "sbps",
            &[
                "--grid",
                "--time",
                "--events",
                "--evaluations",
                "--skeleton",
                "--refresh-rate",
                "--k",
                "--batch",
                "--frame",
            ],
            "Pakman et al.",
        ),
    ];
    for (sampler, flags, doc) in own {
        let text = help(&["sample", sampler, "--help"]);
        assert!(text.contains(doc), "{sampler} --help lacks its doc {doc:?}: {text}");
        let mut want: Vec<&str> = COMMON_FLAGS.iter().chain(flags).copied().collect();
        want.push("--help");
        let mut listed = flags_in(&text);
        listed.sort();
        want.sort();
        assert_eq!(listed, want, "{sampler} --help: {text}");
    }
    // The documented defaults are clap's.
    let text = help(&["sample", "hmc", "--help"]);
    assert!(text.contains("[default: 0.8]") && text.contains("[default: laplace]"), "{text}");
    let text = help(&["sample", "sghmc", "--help"]);
    assert!(text.contains("[default: 10]"), "sghmc's --num-steps default: {text}");
}

/// A flag of another sampler is clap's usage error (exit status 2), naming the flag.
#[test]
fn a_flag_of_another_sampler_is_rejected() {
    let (dir, data, _) = temp_gaussian_csv(50);
    let (d, o) = (data.to_str().unwrap(), dir.path().join("o"));
    let o = o.to_str().unwrap();
    let cases: [(&str, &[&str]); 17] = [
        ("hmc", &["--epsilon", "0.1"]),
        ("nuts", &["--trajectory-length", "1"]),
        ("hmc", &["--step-size", "0.1"]),
        ("hmc", &["--cv"]),
        ("hmc", &["--subsample", "10"]),
        ("hmc", &["--grid", "0.1"]),
        ("hmc", &["--skeleton"]),
        ("rwm", &["--metric", "dense"]),
        ("sgld", &["--step-size", "0.1", "--num-steps", "5"]),
        ("sghmc", &["--step-size", "0.1", "--thermostat", "scalar"]),
        ("sgnht", &["--step-size", "0.1", "--precondition"]),
        ("hmc-ecs", &["--lambda", "10"]),
        ("hmc-ecs-signed", &["--blocks", "10"]),
        ("hmc-ecs", &["--metric", "dense"]),
        ("zigzag", &["--k", "3"]),
        ("zigzag", &["--refresh-rate", "1"]),
        ("sbps", &["--rate-bound", "model"]),
    ];
    for (sampler, extra) in cases {
        let mut args = vec!["sample", sampler, "--model", "gaussian-mean", "--sigma", "2"];
        args.extend(["--data", d, "--out", o]);
        args.extend(extra);
        let flag = extra.iter().rev().find(|a| a.starts_with("--")).unwrap();
        usage_error(&args, &format!("unexpected argument '{flag}'"));
    }
    assert!(!dir.path().join("o").exists(), "a usage error does no work");
}

/// The Gaussian-mean model flags of the tests below: σ = 2 known, prior N(0, 10²).
const GAUSSIAN_MEAN: [&str; 4] = ["--model", "gaussian-mean", "--sigma", "2"];

/// The closed-form posterior mean and sd of μ under [`GAUSSIAN_MEAN`].
fn closed_form(ys: &[f64]) -> (f64, f64) {
    let precision = 1.0 / 100.0 + ys.len() as f64 / 4.0;
    (ys.iter().sum::<f64>() / 4.0 / precision, precision.sqrt().recip())
}

/// Runs `sampler` on the Gaussian mean and expects success; returns summary.json and chain 1's
/// CSV.
fn run_ok(sampler: &str, data: &Path, out: &Path, extra: &[&str]) -> (serde_json::Value, String) {
    let (o, summary) = support::sample(sampler, &GAUSSIAN_MEAN, data, out, extra);
    assert!(o.status.success(), "{sampler} {extra:?}: {}", stderr(&o));
    let csv = std::fs::read_to_string(out.join("chain_1.csv")).unwrap();
    (summary.expect("summary.json"), csv)
}

#[test]
fn minibatch_samplers_report_their_test_and_data_fraction() {
    let (dir, data, ys) = temp_gaussian_csv(20_000);
    let (mean, _) = closed_form(&ys);
    for (sampler, extra) in
        [("confidence", ["--delta", "0.01"]), ("austerity", ["--epsilon", "0.05"])]
    {
        let out = dir.path().join(sampler);
        let mut args = vec!["--chains", "2", "--warmup", "500", "--draws", "2000", "--seed", "4"];
        args.extend(extra);
        let (summary, csv) = run_ok(sampler, &data, &out, &args);
        assert_eq!(summary["test"]["test"], sampler);
        let fraction = summary["totals"]["data_fraction_per_iteration"].as_f64().unwrap();
        assert!(fraction > 0.0 && fraction <= 1.0, "{sampler}: fraction {fraction}");
        assert!(csv.contains(&format!("# test = {sampler}")), "the test is recorded in the CSV");
        if sampler == "confidence" {
            // Each decision differs from exact MH with probability ≤ δ = 0.01: the posterior
            // mean is within Monte Carlo error of the closed form.
            let p = &summary["parameters"][0];
            assert_mean_within_4_mcse(p, mean, "confidence");
            assert!(csv.contains("# delta = 0.01"));
        } else {
            assert!(csv.contains("# epsilon = 0.05"), "Austerity's ε must be in the CSV comments");
            assert!(fraction < 1.0, "Austerity at ε = 0.05 should decide on subsamples");
        }
    }
}

#[test]
fn sgld_runs_with_its_step_size_and_reports_minibatch_costs() {
    let (dir, data, ys) = temp_gaussian_csv(20_000);
    let (mean, sd) = closed_form(&ys);
    let out = dir.path().join("sgld");
    let h = format!("{}", 0.05 * sd * sd);
    let args = ["--step-size", &h, "--batch", "500", "--chains", "1", "--warmup", "200"];
    let (summary, csv) = run_ok("sgld", &data, &out, &[&args[..], &["--draws", "2000"]].concat());
    let totals = &summary["totals"];
    assert_eq!(totals["evals_sampling"]["gradients"].as_u64(), Some(500 * 2000));
    let fraction = totals["data_fraction_per_iteration"].as_f64().unwrap();
    assert!((fraction - 500.0 / 20_000.0).abs() < 1e-12, "fraction {fraction}");
    // SGLD is biased, but at h = 0.05 sd² it stays near the posterior.
    let m = summary["parameters"][0]["mean"].as_f64().unwrap();
    assert!((m - mean).abs() < 5.0 * sd, "sgld mean {m} vs {mean} (posterior sd {sd})");
    assert!(csv.contains(&format!("# step_size = {h}")), "the step size is in the CSV comments");

    let (d, o) = (data.to_str().unwrap(), out.to_str().unwrap());
    let base = gaussian_mean_args("sgld", d, o);
    // There is no default step size: clap asks for it.
    usage_error(&base, "--step-size");
    let mut with_step = base.clone();
    with_step.extend(["--step-size", "0"]);
    bad_value(&with_step, "--step-size 0");
    with_step.truncate(base.len());
    with_step.extend(["--step-size", "0.1", "--batch", "30000"]);
    bad_value(&with_step, "--batch 30000");
}

#[test]
fn sghmc_and_sgnht_run_with_control_variates_and_check_their_values() {
    let (dir, data, ys) = temp_gaussian_csv(20_000);
    let (mean, sd) = closed_form(&ys);
    let h = format!("{}", 0.01 * sd);
    for (sampler, extra) in
        [("sghmc", ["--num-steps", "20"]), ("sgnht", ["--thermostat", "element-wise"])]
    {
        let out = dir.path().join(sampler);
        let mut args = vec!["--step-size", &h, "--batch", "100", "--cv", "--chains", "1"];
        args.extend(["--warmup", "200", "--draws", "1000"]);
        args.extend(extra);
        let (summary, csv) = run_ok(sampler, &data, &out, &args);
        // The control variates' pass at the mode is set-up cost: at least N gradients.
        let setup = summary["totals"]["evals_setup"]["gradients"].as_u64().unwrap();
        assert!(setup >= 20_000, "{sampler}: setup gradients {setup}");
        let fraction = summary["totals"]["data_fraction_per_iteration"].as_f64().unwrap();
        assert!(fraction > 0.0 && fraction < 1.0, "{sampler}: fraction {fraction}");
        // A sanity check only (the kernels' statistical tests live in tallmc-samplers).
        let m = summary["parameters"][0]["mean"].as_f64().unwrap();
        assert!((m - mean).abs() < 5.0 * sd, "{sampler} mean {m} vs {mean} (sd {sd})");
        assert!(csv.contains("# control_variates = Taylor order 1 at the posterior mode"));
    }

    let (d, o) = (data.to_str().unwrap(), dir.path().join("bad"));
    let o = o.to_str().unwrap();
    usage_error(&gaussian_mean_args("sghmc", d, o), "--step-size");
    let mut sgld = gaussian_mean_args("sgld", d, o);
    sgld.extend(["--step-size", "0.1"]);
    // --cv-order needs --cv.
    usage_error(&[&sgld[..], &["--cv-order", "2"]].concat(), "--cv");
    fails_with(&[&sgld[..], &["--cv", "--cv-order", "3"]].concat(), "3");
    let mut sghmc = gaussian_mean_args("sghmc", d, o);
    sghmc.extend(["--step-size", "0.1"]);
    fails_with(&[&sghmc[..], &["--num-steps", "0"]].concat(), "0");
}

/// Runs perturbed (m = 200, G = 20) and signed (m = 10, λ = 20) HMC-ECS on the Gaussian-mean
/// data `ys` with `extra` flags, 2 chains × (500 + 2,000), and checks each posterior (signed: the
/// sign-corrected one) against the closed form: mean within 4 MCSE, sd within 10 %. With
/// 2nd-order control variates the Taylor expansion is exact, so both target the exact posterior.
/// Returns each sampler's summary and first chain's CSV.
fn hmc_ecs_runs_match_the_closed_form(
    dir: &tempfile::TempDir, data: &Path, ys: &[f64], seed: &str, extra: &[&str],
) -> Vec<(&'static str, serde_json::Value, String)> {
    let (mean, sd) = closed_form(ys);
    let mut runs = Vec::new();
    for (sampler, subsample) in [
        ("hmc-ecs", ["--subsample", "200", "--blocks", "20"]),
        ("hmc-ecs-signed", ["--subsample", "10", "--lambda", "20"]),
    ] {
        let out = dir.path().join(sampler);
        let mut args = vec!["--chains", "2", "--seed", seed, "--warmup", "500", "--draws", "2000"];
        args.extend(subsample);
        args.extend(extra);
        let (summary, csv) = run_ok(sampler, data, &out, &args);
        assert_eq!(summary["sampler"], sampler);
        let p = match sampler {
            "hmc-ecs-signed" => &summary["sign_corrected"]["parameters"][0],
            _ => &summary["parameters"][0],
        };
        assert_mean_within_4_mcse(p, mean, sampler);
        let s = p["sd"].as_f64().unwrap();
        assert!((s / sd - 1.0).abs() < 0.1, "{sampler}: sd {s} vs {sd}");
        runs.push((sampler, summary, csv));
    }
    runs
}

/// Perturbed and signed HMC-ECS through the CLI on the Gaussian mean: with 2nd-order control
/// variates the Taylor expansion is exact (σ̂² = 0, every block estimate d̂ = 0), so both
/// kernels target the exact posterior and must match the closed form within 4 MCSE; the signed
/// run writes sign__ and a sign-corrected summary.
#[test]
fn hmc_ecs_perturbed_and_signed_match_the_closed_form_and_report_subsample_costs() {
    let (dir, data, ys) = temp_gaussian_csv(20_000);
    for (sampler, summary, csv) in hmc_ecs_runs_match_the_closed_form(&dir, &data, &ys, "5", &[]) {
        if sampler == "hmc-ecs-signed" {
            let s = &summary["sign_corrected"];
            assert_eq!(s["tau"].as_f64(), Some(1.0), "exact control variates: no negative sign");
            assert_eq!(s["negative_signs"].as_u64(), Some(0));
        } else {
            assert!(summary.get("sign_corrected").is_none());
        }
        assert_eq!(summary["parameters"][0]["name"], "mu");
        // Per iteration: (L + 1) passes over the subsample, far less than the data.
        let fraction = summary["totals"]["data_fraction_per_iteration"].as_f64().unwrap();
        assert!(fraction > 0.0 && fraction < 0.5, "{sampler}: fraction {fraction}");
        assert!(csv.contains("# control_variates = Taylor order 2"), "{sampler}");
        let header = draws_of(&csv)[0].clone();
        let column = if sampler == "hmc-ecs" { "sigma2__" } else { "sign__" };
        assert!(header.contains(column), "{sampler}: header {header} lacks {column}");
    }

    let (d, o) = (data.to_str().unwrap(), dir.path().join("bad"));
    let o = o.to_str().unwrap();
    for (extra, needle) in [
        (&["--subsample", "0"][..], "--subsample 0"),
        (&["--subsample", "30000"], "--subsample 30000"),
        (&["--blocks", "0"], "--blocks 0"),
        (&["--subsample", "10", "--blocks", "11"], "--blocks 11"),
        (&["--cv-order", "3"], "3"),
        (&["--trajectory-length", "-1"], "--trajectory-length -1"),
    ] {
        bad_value(&[&gaussian_mean_args("hmc-ecs", d, o)[..], extra].concat(), needle);
    }
    let signed = gaussian_mean_args("hmc-ecs-signed", d, o);
    bad_value(&[&signed[..], &["--lambda", "0"]].concat(), "--lambda 0");
}

/// `--inner nuts`: perturbed and signed HMC-ECS with the NUTS θ-step match the closed form,
/// write the tree depth (`treedepth__`, at least 1 and at most the limit) and record the
/// θ-step in the CSV comments; `--max-depth` without `--inner nuts`, or out of 1..=30, and an
/// unknown `--inner` are errors.
#[test]
fn hmc_ecs_with_the_nuts_theta_step_matches_the_closed_form_and_reports_tree_depth() {
    let (dir, data, ys) = temp_gaussian_csv(20_000);
    let nuts = ["--inner", "nuts", "--max-depth", "8"];
    for (sampler, summary, csv) in hmc_ecs_runs_match_the_closed_form(&dir, &data, &ys, "6", &nuts)
    {
        assert!(summary["warnings"].as_array().unwrap().is_empty(), "{sampler}: {summary}");
        assert!(csv.contains("# inner = nuts") && csv.contains("# max_depth = 8"), "{sampler}");
        assert!(!csv.contains("# trajectory_length"), "{sampler}: NUTS does not use it");
        let rows = draws_of(&csv);
        let header: Vec<&str> = rows[0].split(',').collect();
        let col = header.iter().position(|h| *h == "treedepth__").expect("treedepth__ column");
        let depths: Vec<f64> =
            rows[1..].iter().map(|r| r.split(',').nth(col).unwrap().parse().unwrap()).collect();
        assert_eq!(depths.len(), 2000);
        assert!(depths.iter().all(|d| (1.0..=8.0).contains(d)), "{sampler}: tree depths");
    }

    let (d, o) = (data.to_str().unwrap(), dir.path().join("bad"));
    let o = o.to_str().unwrap();
    for sampler in ["hmc-ecs", "hmc-ecs-signed"] {
        let base = gaussian_mean_args(sampler, d, o);
        for extra in [&["--max-depth", "5"][..], &["--inner", "hmc", "--max-depth", "5"]] {
            bad_value(
                &[&base[..], extra].concat(),
                "--max-depth 5: only meaningful with --inner nuts",
            );
        }
        for depth in ["0", "31"] {
            bad_value(
                &[&base[..], &["--inner", "nuts", "--max-depth", depth]].concat(),
                &format!("--max-depth {depth}: expected a whole number from 1 to 30"),
            );
        }
        usage_error(&[&base[..], &["--inner", "leapfrog"]].concat(), "leapfrog");
    }
}

/// The confidence sampler with Taylor proxies (`--cv`): on the Gaussian mean the 2nd-order
/// proxy is exact (remainders are 0), so every decision is exact and cheap; the posterior mean
/// must match the closed form within 4 MCSE, and the proxy run must use far less of the data
/// than the plain confidence sampler on the same problem.
#[test]
fn confidence_with_taylor_proxies_matches_the_closed_form_with_less_data() {
    let (dir, data, ys) = temp_gaussian_csv(20_000);
    let (mean, _) = closed_form(&ys);
    let mut fractions = Vec::new();
    for cv in [false, true] {
        let out = dir.path().join(if cv { "proxy" } else { "plain" });
        let mut args = vec!["--chains", "2", "--seed", "6", "--warmup", "500", "--draws", "2000"];
        if cv {
            args.push("--cv");
        }
        let (summary, csv) = run_ok("confidence", &data, &out, &args);
        let p = &summary["parameters"][0];
        assert_mean_within_4_mcse(p, mean, &format!("cv {cv}"));
        fractions.push(summary["totals"]["data_fraction_per_iteration"].as_f64().unwrap());
        if cv {
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
    let gaussian = ["sample", "confidence", "--model", "gaussian", "--data", d, "--out", o];
    bad_value(&[&gaussian[..], &["--cv"]].concat(), "third derivatives");
}
