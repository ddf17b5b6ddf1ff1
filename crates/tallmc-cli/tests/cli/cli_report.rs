//! The run report on stderr, its warnings (also in summary.json), the error of a chain that
//! leaves the finite numbers, and Ctrl-C.

use crate::support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{stderr, tallmc, temp_gaussian_csv, write_gaussian_csv};

/// Runs `tallmc sample SAMPLER --model gaussian-mean --sigma 2` on `n` points with `extra`
/// flags; returns the output, the summary (if written) and the output directory.
fn run(
    dir: &Path, name: &str, n: usize, sampler: &str, extra: &[&str],
) -> (std::process::Output, Option<serde_json::Value>, std::path::PathBuf) {
    let data = dir.join(format!("y{n}.csv"));
    if !data.exists() {
        write_gaussian_csv(&data, n);
    }
    let out = dir.join(name);
    let model = ["--model", "gaussian-mean", "--sigma", "2", "--seed", "5"];
    let (o, summary) = support::sample(sampler, &model, &data, &out, extra);
    (o, summary, out)
}

fn warnings(summary: &serde_json::Value) -> Vec<String> {
    summary["warnings"]
        .as_array()
        .expect("summary.json has a warnings array")
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

/// Checks a file is CmdStan CSV: `#` comments, one header, complete rows of numbers. Returns the
/// number of draws.
fn check_cmdstan_csv(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n'), "{}: the last row is incomplete", path.display());
    assert!(text.starts_with('#'), "{}: no leading comments", path.display());
    let mut rows = text.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = rows.next().expect("a header").split(',').collect();
    assert_eq!(header[0], "lp__", "{}", path.display());
    let mut count = 0;
    for row in rows {
        let fields: Vec<&str> = row.split(',').collect();
        assert_eq!(fields.len(), header.len(), "{}: ragged row {row:?}", path.display());
        for f in fields {
            assert!(f.parse::<f64>().is_ok(), "{}: {f:?} is not a number", path.display());
        }
        count += 1;
    }
    count
}

#[test]
fn the_report_shows_the_table_costs_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let (o, summary, _) = run(
        dir.path(),
        "ok",
        2000,
        "hmc",
        &["--chains", "2", "--warmup", "300", "--draws", "1000"],
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    for needle in [
        "parameter",
        "mean",
        "ess_bulk",
        "r_hat",
        "mu ",
        "divergences: 0 of 2000 draws",
        "data per iteration: 100",
        "per-datum evaluations:",
        "wall time:",
    ] {
        assert!(err.contains(needle), "the report should show {needle:?}: {err}");
    }
    let summary = summary.unwrap();
    assert_eq!(summary["interrupted"], false);
    assert!(warnings(&summary).is_empty(), "{:?}", warnings(&summary));
    assert!(!err.contains("warning"), "{err}");
}

/// Runs a successful sample and checks that stderr holds every `said` text and that
/// summary.json's warnings hold one containing `warned`; returns stderr and the summary.
fn run_and_warn(
    name: &str, n: usize, sampler: &str, flags: &[&str], said: &[&str], warned: &str,
) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let (o, summary, _) = run(dir.path(), name, n, sampler, flags);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    for text in said {
        assert!(err.contains(text), "stderr should say {text:?}: {err}");
    }
    let summary = summary.expect("summary.json");
    let w = warnings(&summary);
    assert!(w.iter().any(|w| w.contains(warned)), "no warning with {warned:?}: {w:?}");
    (err, summary)
}

#[test]
fn chains_that_have_not_mixed_warn_about_r_hat() {
    // Uniform(−2, 2) starts, ~100 posterior sds from the mode, no warmup, few draws.
    run_and_warn(
        "rhat",
        5000,
        "rwm",
        &["--init", "uniform", "--warmup", "0", "--draws", "50"],
        &["warning: The largest R-hat is", "chains have not mixed"],
        "mu (",
    );
}

#[test]
fn short_chains_warn_about_bulk_ess() {
    run_and_warn(
        "ess",
        2000,
        "rwm",
        &["--chains", "2", "--warmup", "200", "--draws", "60"],
        &["warning: Bulk Effective Samples Size (ESS) is too low"],
        "fewer than 100 per chain",
    );
}

#[test]
fn divergent_transitions_after_warmup_are_reported() {
    // A target acceptance of 0.05 makes dual averaging choose a step far beyond stability.
    let flags = ["--chains", "2", "--warmup", "300", "--draws", "300", "--target-accept", "0.05"];
    let (err, summary) = run_and_warn(
        "div",
        2000,
        "hmc",
        &flags,
        &["divergent transitions after warmup", "--target-accept"],
        "divergent transitions",
    );
    let divergences = summary["totals"]["divergences"].as_u64().unwrap();
    assert!(divergences > 0, "expected divergences: {err}");
}

#[test]
fn nuts_trees_cut_at_the_depth_limit_are_reported() {
    // One doubling allows two leapfrog steps, far too few to turn around on any posterior.
    run_and_warn(
        "depth",
        2000,
        "nuts",
        &["--chains", "2", "--warmup", "100", "--draws", "100", "--max-depth", "1"],
        &["hit the maximum treedepth limit of 1", "--max-depth"],
        "maximum treedepth",
    );
    // The default limit is not reached on the same posterior: no such warning.
    let dir = tempfile::tempdir().unwrap();
    let (o, _, _) = run(dir.path(), "depth10", 2000, "nuts", &["--chains", "2", "--draws", "200"]);
    assert!(o.status.success() && !stderr(&o).contains("treedepth"), "{}", stderr(&o));
}

#[test]
fn hmc_ecs_nuts_trees_cut_at_the_depth_limit_are_reported() {
    // As for `sample nuts`: one doubling is far too short for the NUTS θ-step to turn around.
    run_and_warn(
        "ecs-depth",
        2000,
        "hmc-ecs",
        &[
            "--chains",
            "2",
            "--warmup",
            "100",
            "--draws",
            "100",
            "--subsample",
            "100",
            "--inner",
            "nuts",
            "--max-depth",
            "1",
        ],
        &["hit the maximum treedepth limit of 1", "--max-depth"],
        "maximum treedepth",
    );
    // The fixed-length θ-step has no tree: never this warning.
    let dir = tempfile::tempdir().unwrap();
    let (o, _, _) = run(
        dir.path(),
        "ecs-hmc",
        2000,
        "hmc-ecs",
        &["--chains", "2", "--draws", "200", "--subsample", "100"],
    );
    assert!(o.status.success() && !stderr(&o).contains("treedepth"), "{}", stderr(&o));
}

#[test]
fn a_subsampler_that_reads_all_the_data_says_it_saves_nothing() {
    // Austerity at ε = 0 is exact MH: every decision reads all N points; the hint names the
    // flag to change.
    run_and_warn(
        "full",
        2000,
        "austerity",
        &["--epsilon", "0", "--warmup", "200", "--draws", "400"],
        &["no saving over exact MH", "--epsilon"],
        "no saving over exact MH",
    );
}

#[test]
fn sgld_with_a_huge_step_fails_naming_the_parameter_and_keeps_its_csv() {
    let dir = tempfile::tempdir().unwrap();
    let (o, summary, out) = run(
        dir.path(),
        "blowup",
        20_000,
        "sgld",
        &[
            "--step-size",
            "1",
            "--chains",
            "2",
            "--warmup",
            "0",
            "--draws",
            "1000",
            "--init",
            "uniform",
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    assert!(err.starts_with("tallmc: error: "), "{err}");
    assert!(err.contains("mu ="), "names the parameter: {err}");
    assert!(err.contains("smaller --step-size"), "suggests a smaller step: {err}");
    assert!(summary.is_none(), "no summary of a failed run");
    for k in 1..=2 {
        check_cmdstan_csv(&out.join(format!("chain_{k}.csv")));
    }
}

#[cfg(unix)]
#[test]
fn ctrl_c_ends_the_run_cleanly_with_status_130() {
    interrupt_a_drawing_run("INT");
}

/// SIGTERM (a batch scheduler's stop) and SIGHUP (a closed terminal) end a run as Ctrl-C does.
#[cfg(unix)]
#[test]
fn sigterm_and_sighup_end_the_run_as_ctrl_c_does() {
    interrupt_a_drawing_run("TERM");
    interrupt_a_drawing_run("HUP");
}

/// Starts a long two-chain run, sends `signal` once both chains draw, and checks that the run
/// ends with status 130, a report, summary.json marked interrupted, and whole CSV files cut to
/// a common length.
#[cfg(unix)]
fn interrupt_a_drawing_run(signal: &str) {
    let (dir, data, _) = temp_gaussian_csv(20_000);
    let out = dir.path().join("interrupted");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tallmc"))
        .args([
            "sample",
            "rwm",
            "--model",
            "gaussian-mean",
            "--sigma",
            "2",
            "--data",
            data.to_str().unwrap(),
            "--chains",
            "2",
            // Two worker threads even on a one-CPU machine, so both chains draw at once.
            "--threads",
            "2",
            "--warmup",
            "100",
            "--draws",
            "10000000",
            "--out",
            out.to_str().unwrap(),
        ])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until both chains are drawing.
    let start = Instant::now();
    let drawing = |k: usize| {
        std::fs::read_to_string(out.join(format!("chain_{k}.csv")))
            .is_ok_and(|t| t.lines().filter(|l| !l.starts_with('#')).count() > 20)
    };
    while !(drawing(1) && drawing(2)) {
        if start.elapsed() > Duration::from_secs(60) {
            // Do not leave a 10⁸-draw run behind.
            let _ = child.kill();
            panic!("the run did not start drawing");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let killed = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "SIG{signal}: {err}");
    assert!(err.contains("(interrupted)"), "SIG{signal}: the report is printed: {err}");
    let summary = support::summary(&out);
    assert_eq!(summary["interrupted"], true);
    let per_chain: Vec<u64> = summary["draws_per_chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    for k in 1..=2 {
        let rows = check_cmdstan_csv(&out.join(format!("chain_{k}.csv")));
        assert_eq!(rows as u64, per_chain[k - 1], "chain {k}");
        assert!(rows < 10_000_000);
    }
    // Cut to a common length, so that ArviZ reads the chains together.
    assert_eq!(per_chain[0], per_chain[1]);
    assert!(per_chain[0] > 0);
    assert!(warnings(&summary).iter().any(|w| w.contains("interrupted")));
}

#[test]
fn an_sgld_chain_much_wider_than_the_posterior_warns_about_its_step_size() {
    // Logistic gradients are bounded, so a huge step does not overflow: the chain wanders.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("logit.csv");
    let mut state: u64 = 7;
    let mut text = String::from("y,x1\n");
    for _ in 0..5000 {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let x = ((state >> 11) as f64 / (1u64 << 53) as f64) * 4.0 - 2.0;
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let u = (state >> 11) as f64 / (1u64 << 53) as f64;
        let y = u32::from(u < 1.0 / (1.0 + (-x).exp()));
        text.push_str(&format!("{y},{x}\n"));
    }
    std::fs::write(&data, text).unwrap();
    let out = dir.path().join("wide");
    let o = tallmc(&[
        "sample",
        "sgld",
        "--model",
        "logistic",
        "--intercept",
        "--data",
        data.to_str().unwrap(),
        "--step-size",
        "1",
        "--chains",
        "2",
        "--warmup",
        "100",
        "--draws",
        "500",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("far wider than the posterior"), "{err}");
    assert!(err.contains("smaller --step-size"), "{err}");
    assert!(warnings(&support::summary(&out)).iter().any(|w| w.contains("far wider")));
}
