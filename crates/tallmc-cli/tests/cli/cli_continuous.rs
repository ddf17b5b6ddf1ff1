//! End-to-end tests of `tallmc sample` with the continuous-time (piecewise-deterministic)
//! samplers: closed-form correctness of the exact time averages and the grid draws on the
//! Gaussian mean, the output files (CmdStan CSV of grid draws, skeleton, summary.json's
//! continuous-time block), budgets, and bad input.

use crate::support;

use std::path::Path;

use crate::support::{
    bad_value, stderr, summary, tallmc, tallmc_ok, temp_gaussian_csv, usage_error,
};

/// `tallmc sample <sampler>` on the logistic file `data` into `out` (overwritten), with an
/// intercept, 2 chains and seed 5: the shared start of the frame tests' command lines.
fn logistic_run_args<'a>(sampler: &'a str, data: &'a str, out: &'a str) -> Vec<&'a str> {
    let mut args = vec!["sample", sampler, "--model", "logistic", "--data", data, "--out", out];
    args.extend(["--overwrite", "--intercept", "--chains", "2", "--seed", "5"]);
    args
}

/// Logistic data: y = 1 iff 0.5 + x₁ − 0.7x₂ + noise > 0, x ~ U(−1, 1)² (deterministic).
fn write_logistic_csv(path: &Path, n: usize) {
    let mut state: u64 = 99;
    let mut uniform = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let mut text = String::from("y,x1,x2\n");
    for _ in 0..n {
        let (a, b, u) = (2.0 * uniform() - 1.0, 2.0 * uniform() - 1.0, uniform());
        let p = 1.0 / (1.0 + (-(0.5 + a - 0.7 * b)).exp());
        text.push_str(&format!("{},{a},{b}\n", u8::from(u < p)));
    }
    std::fs::write(path, text).unwrap();
}

/// The Gaussian-mean run of `sampler` on two chains, seed 3.
fn gaussian_mean_args<'a>(data: &'a str, sampler: &'a str, out: &'a str) -> Vec<&'a str> {
    let mut args = support::gaussian_mean_args(sampler, data, out);
    args.extend(["--chains", "2", "--seed", "3"]);
    args
}

/// Every exact continuous-time sampler on the conjugate Gaussian mean: the exact time average
/// of μ within 4 batch-means MCSE of the closed-form posterior mean, its sd within 4 MCSE-based
/// tolerances (the sd of a Gaussian time average: sd·√(1/(2 ESS))), and the grid draws' mean
/// within 4 MCSE too; exact samplers make no bound violation.
#[test]
fn exact_samplers_match_the_closed_form_gaussian_mean() {
    let (dir, data, ys) = temp_gaussian_csv(2_000);
    let precision = 1.0 / 100.0 + ys.len() as f64 / 4.0;
    let mean = ys.iter().sum::<f64>() / 4.0 / precision;
    let sd = precision.sqrt().recip();
    for sampler in ["bps", "zigzag", "lipsbps", "zigzag-ss", "zigzag-cv", "sbps"] {
        let out = dir.path().join(sampler);
        let mut args = gaussian_mean_args(data.to_str().unwrap(), sampler, out.to_str().unwrap());
        // ZZ-SS mixes diffusively (its bound grows with N): a longer run.
        let draws = if sampler == "zigzag-ss" { "8000" } else { "2000" };
        args.extend(["--warmup", "200", "--draws", draws]);
        let o = tallmc(&args);
        assert!(o.status.success(), "{sampler}: {}", stderr(&o));
        let s = summary(&out);
        let c = &s["continuous_time"][0];
        assert_eq!(c["name"], "mu");
        let (m, mc) = (c["mean"].as_f64().unwrap(), c["mcse_mean"].as_f64().unwrap());
        assert!((m - mean).abs() < 4.0 * mc, "{sampler}: mean {m} vs {mean} (mcse {mc})");
        assert!(mc < 0.2 * sd, "{sampler}: the run is too short to test (mcse {mc}, sd {sd})");
        let ess = c["ess"].as_f64().unwrap();
        let s_sd = c["sd"].as_f64().unwrap();
        let sd_tol = 4.0 * sd / (2.0 * ess).sqrt();
        assert!((s_sd - sd).abs() < sd_tol, "{sampler}: sd {s_sd} vs {sd} (tol {sd_tol})");
        let p = &s["parameters"][0];
        let (gm, gc) = (p["mean"].as_f64().unwrap(), p["mcse_mean"].as_f64().unwrap());
        assert!((gm - mean).abs() < 4.0 * gc, "{sampler}: grid mean {gm} vs {mean} (mcse {gc})");
        if sampler != "sbps" {
            assert_eq!(s["events"]["violations"], 0, "{sampler}");
        }
        assert_eq!(s["draws_per_chain"][0].as_u64().unwrap(), draws.parse::<u64>().unwrap());
        // The CSV holds exactly the grid draws, in CmdStan's layout.
        let csv = std::fs::read_to_string(out.join("chain_1.csv")).unwrap();
        let rows: Vec<&str> = csv.lines().filter(|l| !l.starts_with('#')).collect();
        assert!(rows[0].starts_with("lp__,time__,"), "{sampler}: header {}", rows[0]);
        assert!(rows[0].ends_with(",mu"));
        assert_eq!(rows.len() - 1, draws.parse::<usize>().unwrap());
    }
}

/// Budgets in trajectory time, events and evaluations; the skeleton file; the grid step.
#[test]
fn budgets_skeleton_and_grid() {
    let (dir, data, _) = temp_gaussian_csv(500);
    let out = dir.path().join("run");
    let base = gaussian_mean_args(data.to_str().unwrap(), "bps", out.to_str().unwrap());

    let mut args = base.clone();
    args.extend(["--warmup", "10", "--grid", "0.01", "--time", "2.5", "--skeleton"]);
    tallmc_ok(&args);
    let s = summary(&out);
    assert_eq!(s["grid_step"], 0.01);
    let t = s["events"]["trajectory_time_sampling"].as_f64().unwrap();
    assert!((t - 5.0).abs() < 1e-9, "two chains of time 2.5: {t}");
    assert_eq!(s["draws_per_chain"][0], 250);
    let skeleton = std::fs::read_to_string(out.join("skeleton_1.csv")).unwrap();
    let lines: Vec<&str> = skeleton.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(lines[0].starts_with("time,event,coordinate,mu"), "{}", lines[0]);
    assert!(lines[1].contains(",start,"), "{}", lines[1]);
    assert!(lines.last().unwrap().contains(",end,"));
    assert!(lines.iter().any(|l| l.contains(",bounce,")));

    let mut args = base.clone();
    args.extend(["--grid", "0.001", "--events", "300"]);
    tallmc_ok(&args);
    let s = summary(&out);
    let events =
        s["events"]["bounces"].as_u64().unwrap() + s["events"]["refreshes"].as_u64().unwrap();
    assert_eq!(events, 600, "300 events per chain");

    let mut args = gaussian_mean_args(data.to_str().unwrap(), "zigzag-cv", out.to_str().unwrap());
    args.extend(["--frame", "original", "--grid", "0.001", "--evaluations", "20000"]);
    tallmc_ok(&args);
    let s = summary(&out);
    let v = s["totals"]["evals_sampling"]["total"].as_u64().unwrap();
    // Each chain stops at the first step that reaches 20,000 (a step costs a few evaluations).
    assert!((40_000..40_100).contains(&v), "{v}");

    // Whitened, zigzag-cv's expansion of a Gaussian mean is exact: it reads no data after its
    // set-up pass, so an evaluation budget is refused rather than run forever; a time budget
    // runs and reads nothing.
    let mut args = gaussian_mean_args(data.to_str().unwrap(), "zigzag-cv", out.to_str().unwrap());
    args.extend(["--evaluations", "20000"]);
    let o = tallmc(&args);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("reads no data"), "{}", stderr(&o));
    let mut args = gaussian_mean_args(data.to_str().unwrap(), "zigzag-cv", out.to_str().unwrap());
    args.extend(["--warmup", "10", "--time", "50"]);
    tallmc_ok(&args);
    let s = summary(&out);
    assert_eq!(s["grid_step"], 1.0);
    assert_eq!(s["totals"]["evals_sampling"]["total"], 0);
    // The set-up pass (N = 500 gradients and Hessians at the mode) is counted in the set-up.
    assert!(s["totals"]["evals_setup"]["hessians"].as_u64().unwrap() >= 500, "{}", s["totals"]);
}

/// The model bound and the automatic envelope both work for logistic regression; models
/// without bounds get the envelope, and the exact subsampling samplers are clear errors there.
#[test]
fn rate_bounds_and_models_without_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("xy.csv");
    write_logistic_csv(&data, 1_000);
    let out = dir.path().join("run");
    let (d, o) = (data.to_str().unwrap(), out.to_str().unwrap());
    // `sample SAMPLER --model MODEL --data … --out …`, then the run's flags.
    let base = |sampler, model| {
        vec!["sample", sampler, "--model", model, "--data", d, "--out", o, "--overwrite"]
    };
    for (sampler, bound) in [("bps", "model"), ("bps", "envelope"), ("zigzag", "envelope")] {
        let mut args = base(sampler, "logistic");
        args.extend(["--intercept", "--rate-bound", bound, "--chains", "2"]);
        args.extend(["--warmup", "100", "--draws", "400"]);
        let o = tallmc(&args);
        assert!(o.status.success(), "{sampler} {bound}: {}", stderr(&o));
        let s = summary(&out);
        // Compare with the Laplace mode: the posterior mean is within a few posterior sds.
        for (j, c) in s["continuous_time"].as_array().unwrap().iter().enumerate() {
            let mode = s["laplace_mode"][j].as_f64().unwrap();
            let (m, sd) = (c["mean"].as_f64().unwrap(), c["sd"].as_f64().unwrap());
            assert!((m - mode).abs() < 0.5 * sd, "{sampler} {bound}: θ{j} {m} vs mode {mode}");
        }
        assert_eq!(s["events"]["violations"], 0, "{sampler} {bound}: {}", s["events"]);
    }
    // Linear regression has no bounds: BPS runs with the envelope; lipSBPS is an error.
    let mut args = base("bps", "linear");
    args.extend(["--chains", "1", "--warmup", "50", "--draws", "50"]);
    let run = tallmc(&args);
    assert!(run.status.success(), "{}", stderr(&run));
    let adaptation = summary(&out)["adaptation"].to_string();
    assert!(adaptation.contains("automatic piecewise bound"), "{adaptation}");
    for (sampler, extra, want) in [
        ("lipsbps", None, "--model linear has neither"),
        ("zigzag-cv", None, "--model linear has neither"),
        ("bps", Some("model"), "--model linear has no curvature bound"),
    ] {
        let mut args = base(sampler, "linear");
        if let Some(b) = extra {
            args.extend(["--rate-bound", b]);
        }
        let o = tallmc(&args);
        assert!(!o.status.success());
        assert!(stderr(&o).contains(want), "{sampler}: {}", stderr(&o));
    }
}

/// Bad values: a clear one-line error naming the value; two sampling budgets: clap's usage
/// error.
#[test]
fn bad_continuous_time_input() {
    let (dir, data, _) = temp_gaussian_csv(100);
    let out = dir.path().join("run");
    let cases: &[(&str, &[&str], &str)] = &[
        ("sbps", &["--k", "0"], "--k 0: expected a finite band multiple > 0"),
        ("sbps", &["--k", "-1"], "--k -1"),
        ("sbps", &["--batch", "0"], "--batch 0: expected 1 ≤ n ≤ N = 100"),
        ("sbps", &["--batch", "101"], "--batch 101"),
        ("bps", &["--refresh-rate", "-0.5"], "--refresh-rate -0.5: expected a finite rate >= 0"),
        ("bps", &["--grid", "0"], "--grid 0: expected a finite trajectory time > 0"),
        ("bps", &["--grid", "-1"], "--grid -1"),
        ("bps", &["--time", "0"], "--time 0"),
        ("bps", &["--events", "0"], "--events 0: expected at least 1 event"),
        ("bps", &["--evaluations", "0"], "--evaluations 0"),
    ];
    for (sampler, extra, want) in cases {
        let mut args = gaussian_mean_args(data.to_str().unwrap(), sampler, out.to_str().unwrap());
        args.extend(extra.iter());
        bad_value(&args, want);
    }
    let mut args = gaussian_mean_args(data.to_str().unwrap(), "bps", out.to_str().unwrap());
    args.extend(["--time", "1", "--events", "5"]);
    usage_error(&args, "cannot be used with");
}

/// Ctrl-C (SIGINT) ends a continuous-time run cleanly: every chain stops after its current
/// segment, summary.json is written and marked interrupted, the grid-draw CSV files stay
/// readable, and the exit status is 130.
#[cfg(unix)]
#[test]
fn ctrl_c_stops_a_continuous_run_cleanly_with_status_130() {
    use std::process::{Command, Stdio};
    let (dir, data, _) = temp_gaussian_csv(2_000);
    let out = dir.path().join("out");
    let mut args = gaussian_mean_args(data.to_str().unwrap(), "zigzag", out.to_str().unwrap());
    // Far more than the test waits for.
    args.extend(["--warmup", "100", "--events", "1000000000000"]);
    let child = Command::new(env!("CARGO_BIN_EXE_tallmc"))
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the CSV files exist (the chains are running), then interrupt.
    let csv = out.join("chain_1.csv");
    for _ in 0..600 {
        if csv.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let s = summary(&out);
    assert_eq!(s["interrupted"], true);
    assert!(s["tuning"][0].is_object(), "{}", s["tuning"]);
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows = text.lines().filter(|l| !l.starts_with('#')).count();
    assert!(rows >= 1, "the CSV has its header");
}

/// `--frame`: BPS and Zig-Zag with the automatic envelope run whitened by default (grid step
/// 1, the frame named in the adaptation lines and in the typed tuning) and in θ with
/// `--frame original` (grid step the median Laplace sd); either way the time averages are in θ,
/// near the Laplace mode. With the model's curvature bound they run in θ, and asking for
/// whitened coordinates there is an error naming the way out.
#[test]
fn frame_choice_for_bps_and_zigzag() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("xy.csv");
    write_logistic_csv(&data, 1_000);
    let out = dir.path().join("run");
    let (d, o) = (data.to_str().unwrap(), out.to_str().unwrap());
    let base = |sampler| logistic_run_args(sampler, d, o);
    for sampler in ["bps", "zigzag"] {
        for frame in [None, Some("original")] {
            let mut args = base(sampler);
            args.extend(["--rate-bound", "envelope", "--warmup", "50", "--draws", "400"]);
            if let Some(f) = frame {
                args.extend(["--frame", f]);
            }
            let run = tallmc(&args);
            assert!(run.status.success(), "{sampler} {frame:?}: {}", stderr(&run));
            let s = summary(&out);
            let whitened = frame.is_none();
            let grid = s["grid_step"].as_f64().unwrap();
            assert_eq!(grid == 1.0, whitened, "{sampler} {frame:?}: grid {grid}");
            let adaptation = s["adaptation"][0].to_string();
            assert_eq!(adaptation.contains("coordinates = whitened"), whitened, "{adaptation}");
            assert!(adaptation.contains("automatic piecewise bound"), "{adaptation}");
            assert_eq!(s["tuning"][0]["coordinates"].is_object(), whitened, "{}", s["tuning"]);
            for (j, c) in s["continuous_time"].as_array().unwrap().iter().enumerate() {
                let mode = s["laplace_mode"][j].as_f64().unwrap();
                let (m, sd) = (c["mean"].as_f64().unwrap(), c["sd"].as_f64().unwrap());
                assert!((m - mode).abs() < 0.5 * sd, "{sampler} {frame:?}: θ{j} {m} vs {mode}");
            }
            let csv = std::fs::read_to_string(out.join("chain_1.csv")).unwrap();
            let want = if whitened { "frame = whitened" } else { "frame = original" };
            assert!(csv.lines().any(|l| l.starts_with('#') && l.contains(want)), "{want}");
        }
    }
    // The model's bound (logistic's default) runs in θ: --frame whitened is refused there.
    let mut args = base("bps");
    args.extend(["--frame", "whitened"]);
    let o = tallmc(&args);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--rate-bound envelope"), "{}", stderr(&o));
    let mut args = base("zigzag");
    args.extend(["--frame", "sideways"]);
    usage_error(&args, "whitened");
}

/// `--frame` for the subsampling samplers: ZZ-SS on a model with bounded per-datum gradients
/// (logistic), and SBPS / pSBPS on any model, run whitened by default (grid step 1, the frame
/// in the CSV comments and the typed tuning) and in θ with `--frame original`; lipSBPS runs in
/// θ by default and whitened with `--frame whitened` (on the same models); the
/// time averages are in θ either way, within a few sds of the Laplace mode. On a model whose per-datum
/// gradients are only Lipschitz (gaussian-mean) lipSBPS and ZZ-SS run in θ, and asking for
/// whitened coordinates there is an error that says why.
#[test]
fn frame_choice_for_the_subsampling_samplers() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("xy.csv");
    write_logistic_csv(&data, 1_000);
    let out = dir.path().join("run");
    let (d, o) = (data.to_str().unwrap(), out.to_str().unwrap());
    let base = |sampler| logistic_run_args(sampler, d, o);
    for sampler in ["lipsbps", "zigzag-ss", "sbps", "psbps"] {
        for frame in [None, Some("whitened"), Some("original")] {
            let mut args = base(sampler);
            args.extend(["--warmup", "50", "--draws", "400"]);
            if let Some(f) = frame {
                args.extend(["--frame", f]);
            }
            let run = tallmc(&args);
            assert!(run.status.success(), "{sampler} {frame:?}: {}", stderr(&run));
            let s = summary(&out);
            let whitened = match frame {
                None => sampler != "lipsbps",
                Some(f) => f == "whitened",
            };
            let grid = s["grid_step"].as_f64().unwrap();
            assert_eq!(grid == 1.0, whitened, "{sampler} {frame:?}: grid {grid}");
            let adaptation = s["adaptation"][0].to_string();
            assert_eq!(adaptation.contains("coordinates = whitened"), whitened, "{adaptation}");
            assert_eq!(s["tuning"][0]["coordinates"].is_object(), whitened, "{}", s["tuning"]);
            for (j, c) in s["continuous_time"].as_array().unwrap().iter().enumerate() {
                let mode = s["laplace_mode"][j].as_f64().unwrap();
                let (m, sd) = (c["mean"].as_f64().unwrap(), c["sd"].as_f64().unwrap());
                // A gross check (a wrong map to θ would be many sds off): these runs are too
                // short for MCSE-based tolerances, which the samplers' tests apply
                // (pdmp_whitened_subsampled.rs).
                assert!((m - mode).abs() < 1.5 * sd, "{sampler} {frame:?}: θ{j} {m} vs {mode}");
            }
            if sampler == "lipsbps" || sampler == "zigzag-ss" {
                assert_eq!(s["events"]["violations"], 0, "{sampler} {frame:?}: {}", s["events"]);
            }
            let csv = std::fs::read_to_string(out.join("chain_1.csv")).unwrap();
            let want = if whitened { "frame = whitened" } else { "frame = original" };
            assert!(csv.lines().any(|l| l.starts_with('#') && l.contains(want)), "{want}");
        }
    }
    // Lipschitz per-datum gradients (gaussian-mean): θ by default, --frame whitened refused.
    let (gdir, gdata, _) = temp_gaussian_csv(200);
    let gout = gdir.path().join("run");
    for sampler in ["lipsbps", "zigzag-ss"] {
        let mut args = gaussian_mean_args(gdata.to_str().unwrap(), sampler, gout.to_str().unwrap());
        args.extend(["--warmup", "10", "--draws", "50"]);
        tallmc_ok(&args);
        let csv = std::fs::read_to_string(gout.join("chain_1.csv")).unwrap();
        assert!(csv.lines().any(|l| l.starts_with('#') && l.contains("frame = original")));
        args.extend(["--frame", "whitened"]);
        let o = tallmc(&args);
        assert!(!o.status.success(), "{sampler}");
        let err = stderr(&o);
        assert!(err.contains("--frame whitened") && err.contains("Lipschitz"), "{err}");
        assert!(err.contains("--frame original"), "{err}");
    }
}
