//! Helpers shared by the CLI's end-to-end tests: running the binary and writing small,
//! deterministic data files.

#![allow(dead_code)] // each test binary uses a subset

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long one command may run in a test before it is killed and the test fails. The runs
/// here take seconds; one that never ends (a budget a sampler never spends) would otherwise
/// write its CSV files until the disk is full, and a test process killed from outside leaves
/// its temporary directory behind (a panic here drops it).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(300);

/// Runs the `tallmc` binary built for these tests with `args`, killing it (and failing the
/// test) after [`COMMAND_TIMEOUT`].
pub fn tallmc(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tallmc"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tallmc");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).expect("read tallmc's output");
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout is piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr is piped")));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for tallmc") {
            break status;
        }
        if start.elapsed() > COMMAND_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tallmc {args:?} ran for more than {COMMAND_TIMEOUT:?} and was killed");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    }
}

/// Runs the `tallmc` binary with `args` and checks that it succeeds (showing its stderr if not).
pub fn tallmc_ok(args: &[&str]) -> Output {
    let o = tallmc(args);
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

/// The process's standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// y_i ~ N(1.5, 2²), i < n, written deterministically (a fixed LCG-driven Box–Muller).
pub fn write_gaussian_csv(path: &Path, n: usize) -> Vec<f64> {
    let mut state: u64 = 12345;
    let mut uniform = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let mut ys = Vec::with_capacity(n);
    let mut text = String::from("y\n");
    for _ in 0..n {
        let (u, v) = (uniform(), uniform());
        let z = (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos();
        let y = 1.5 + 2.0 * z;
        ys.push(y);
        text.push_str(&format!("{y}\n"));
    }
    std::fs::write(path, text).unwrap();
    ys
}

/// A fresh temporary directory holding `y.csv` with the n values of [`write_gaussian_csv`]:
/// returns the directory (deleted when dropped), the file's path and the values.
pub fn temp_gaussian_csv(n: usize) -> (tempfile::TempDir, PathBuf, Vec<f64>) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("y.csv");
    let ys = write_gaussian_csv(&data, n);
    (dir, data, ys)
}

/// A collinear logistic regression like a real tall data set: `n` rows of `p` covariates, each
/// an AR(1) of the previous one (ρ = 0.9, so neighbouring columns correlate at 0.9 and the
/// design is ill-conditioned), column 6 a noisy copy of column 5 (correlation ≈ 0.995), every
/// column standardized; y ~ Bernoulli(σ(−1 + xᵀθ)) with θ_j = 0.6·sin(1.7 j) (about a third of
/// the responses are 1). Written deterministically (a fixed LCG-driven Box–Muller). Fit it with
/// `--intercept`: p + 1 parameters.
pub fn write_collinear_logistic_csv(path: &Path, n: usize, p: usize) {
    assert!(p >= 6, "column 6 copies column 5");
    let mut state: u64 = 987_654_321;
    let mut uniform = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let mut normal = || {
        let (u, v) = (uniform(), uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    };
    let rho: f64 = 0.9;
    let mut x = vec![0.0; n * p];
    for row in x.chunks_mut(p) {
        row[0] = normal();
        for j in 1..p {
            row[j] = rho * row[j - 1] + (1.0 - rho * rho).sqrt() * normal();
        }
        row[5] = row[4] + 0.1 * normal();
    }
    for j in 0..p {
        let mean = x.iter().skip(j).step_by(p).sum::<f64>() / n as f64;
        let var = x.iter().skip(j).step_by(p).map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
        let sd = var.sqrt();
        x.iter_mut().skip(j).step_by(p).for_each(|v| *v = (*v - mean) / sd);
    }
    let theta: Vec<f64> = (1..=p).map(|j| 0.6 * (1.7 * j as f64).sin()).collect();
    let mut uniform_y = {
        let mut s: u64 = 42;
        move || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
    };
    let mut text = String::from("y");
    for j in 1..=p {
        text.push_str(&format!(",x{j}"));
    }
    text.push('\n');
    for row in x.chunks(p) {
        let eta = -1.0 + row.iter().zip(&theta).map(|(a, b)| a * b).sum::<f64>();
        let y = u8::from(uniform_y() < 1.0 / (1.0 + (-eta).exp()));
        text.push_str(&y.to_string());
        for v in row {
            text.push_str(&format!(",{v:.6}"));
        }
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

/// Runs `tallmc sample SAMPLER` with `model` (the model flags), `--data data --out out` and
/// `extra`; returns the output and summary.json when it was written.
pub fn sample(
    sampler: &str, model: &[&str], data: &Path, out: &Path, extra: &[&str],
) -> (Output, Option<serde_json::Value>) {
    let mut args = vec!["sample", sampler];
    args.extend_from_slice(model);
    args.extend(["--data", data.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    args.extend_from_slice(extra);
    let o = tallmc(&args);
    let summary = std::fs::read_to_string(out.join("summary.json"))
        .ok()
        .map(|t| serde_json::from_str(&t).expect("summary.json is JSON"));
    (o, summary)
}

/// Checks that the posterior mean of summary.json parameter entry `p` is within 4 of its
/// MCSEs of `mean` (`what` names the run in the message).
pub fn assert_mean_within_4_mcse(p: &serde_json::Value, mean: f64, what: &str) {
    let (m, mc) = (p["mean"].as_f64().unwrap(), p["mcse_mean"].as_f64().unwrap());
    assert!((m - mean).abs() < 4.0 * mc, "{what}: mean {m} vs {mean} (mcse {mc})");
}

/// summary.json of the run in `out`.
pub fn summary(out: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("summary.json is JSON")
}

/// Runs `tallmc args`, checks that it fails with a message containing `needle` (and no panic);
/// returns the output.
pub fn fails_with(args: &[&str], needle: &str) -> Output {
    let o = tallmc(args);
    let err = stderr(&o);
    assert!(!o.status.success(), "{args:?} should fail");
    assert!(err.contains(needle), "{args:?}: stderr {err:?} should mention {needle:?}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{args:?}: {err}");
    o
}

/// Runs `tallmc args`, checks that it fails with a one-line error (exit status 1) containing
/// `needle`: a bad value, told in the CLI's words.
pub fn bad_value(args: &[&str], needle: &str) {
    let o = fails_with(args, needle);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: not one line: {err}");
}

/// Runs `tallmc args`, checks that clap rejects it (exit status 2) with a message containing
/// `needle`: a usage error (an unknown flag or subcommand, a missing or conflicting flag).
pub fn usage_error(args: &[&str], needle: &str) {
    let o = fails_with(args, needle);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
}

/// `sample SAMPLER` on the Gaussian mean (σ = 2 known, prior N(0, 10²)) with data `data` and
/// output `out`; append the run's flags.
pub fn gaussian_mean_args<'a>(sampler: &'a str, data: &'a str, out: &'a str) -> Vec<&'a str> {
    let model = ["--model", "gaussian-mean", "--sigma", "2", "--prior-sd", "10"];
    let mut args = vec!["sample", sampler];
    args.extend(model);
    // The tests reuse an output directory as scratch: each run replaces the last.
    args.extend(["--data", data, "--out", out, "--overwrite"]);
    args
}
