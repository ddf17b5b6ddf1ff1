//! A run as users keep it: parameters named after the data's columns, recorded in summary.json
//! and repeated bit for bit from there, never mixed with another run, refused before any work
//! when it cannot fit.

use std::path::Path;

use crate::support::{bad_value, stderr, summary, tallmc, tallmc_ok};

/// A logistic data set with a header `y,age,income`: y ~ Bernoulli(σ(0.5 + age − 0.5 income)),
/// written deterministically.
fn write_named_logistic_csv(path: &Path, n: usize) {
    let mut state: u64 = 2024;
    let mut uniform = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let mut text = String::from("y,age,income\n");
    for _ in 0..n {
        let age = 4.0 * uniform() - 2.0;
        let income = 4.0 * uniform() - 2.0;
        let p = 1.0 / (1.0 + (-(0.5 + age - 0.5 * income)).exp());
        let y = u8::from(uniform() < p);
        text.push_str(&format!("{y},{age},{income}\n"));
    }
    std::fs::write(path, text).unwrap();
}

/// The header line of a CmdStan CSV file (the first line that is not a comment).
fn header_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().find(|l| !l.starts_with('#')).unwrap().to_string()
}

/// The draws of a CmdStan CSV file: every row after the header, comments left out.
fn rows_of(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().filter(|l| !l.starts_with('#')).skip(1).map(str::to_string).collect()
}

#[test]
fn parameters_are_named_after_the_columns_and_the_intercept_is_fitted_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("people.csv");
    write_named_logistic_csv(&data, 3000);
    let out = dir.path().join("run");
    let args = ["sample", "nuts", "--model", "logistic", "--data", data.to_str().unwrap()];
    let extra =
        ["--out", out.to_str().unwrap(), "--chains", "2", "--warmup", "200", "--draws", "200"];
    let o = tallmc_ok(&[&args[..], &extra[..]].concat());
    let header = header_of(&out.join("chain_1.csv"));
    assert!(header.ends_with(",intercept,age,income"), "{header}");
    let s = summary(&out);
    let names: Vec<&str> =
        s["parameters"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["intercept", "age", "income"]);
    assert_eq!(s["parameter_names"], serde_json::json!(["intercept", "age", "income"]));
    // The printed table speaks the same names.
    let err = stderr(&o);
    for name in ["intercept", "age", "income"] {
        assert!(err.lines().any(|l| l.trim_start().starts_with(name)), "{name}: {err}");
    }
    // --no-intercept drops it.
    let out2 = dir.path().join("no_intercept");
    let extra2 =
        ["--out", out2.to_str().unwrap(), "--no-intercept", "--draws", "10", "--warmup", "10"];
    tallmc_ok(&[&args[..], &extra2[..]].concat());
    assert!(header_of(&out2.join("chain_1.csv")).ends_with(",age,income"));
    assert!(!header_of(&out2.join("chain_1.csv")).contains("intercept"));
}

/// `tallmc repeat summary.json` gives the recorded run's draws bit for bit, from another
/// directory too (the data path is recorded absolute).
#[test]
fn a_run_is_repeated_bit_for_bit_from_its_summary() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("people.csv");
    write_named_logistic_csv(&data, 2000);
    let first = dir.path().join("first");
    tallmc_ok(&[
        "sample",
        "hmc-ecs",
        "--model",
        "logistic",
        "--data",
        data.to_str().unwrap(),
        "--out",
        first.to_str().unwrap(),
        "--chains",
        "2",
        "--warmup",
        "200",
        "--draws",
        "300",
        "--seed",
        "11",
        "--subsample",
        "200",
        "--no-report",
    ]);
    let recorded = summary(&first);
    assert_eq!(recorded["spec"]["sampler"]["name"], "hmc-ecs");
    assert_eq!(recorded["spec"]["sampler"]["subsample"], 200);
    assert_eq!(recorded["spec"]["seed"], 11);
    let again = dir.path().join("again");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tallmc"))
        .args(["repeat", first.join("summary.json").to_str().unwrap()])
        .args(["--out", again.to_str().unwrap(), "--no-report"])
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for k in 1..=2 {
        let (a, b) = (
            rows_of(&first.join(format!("chain_{k}.csv"))),
            rows_of(&again.join(format!("chain_{k}.csv"))),
        );
        assert_eq!(a.len(), 300);
        assert_eq!(a, b, "chain {k}: the repeated run's draws differ");
    }
    let repeated = summary(&again);
    assert_eq!(repeated["spec"]["sampler"], recorded["spec"]["sampler"]);
    // A file that records no run is a one-line error.
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"hello\": 1}").unwrap();
    bad_value(
        &["repeat", junk.to_str().unwrap(), "--out", dir.path().join("x").to_str().unwrap()],
        "no run recorded there",
    );
}

/// Re-running into a directory that holds a run is refused, the old files untouched; with
/// --overwrite the old run's files are removed first, so that chains of two runs never mix.
#[test]
fn an_existing_output_directory_is_refused_unless_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("people.csv");
    write_named_logistic_csv(&data, 500);
    let out = dir.path().join("run");
    let run = |chains: &str, extra: &[&str]| {
        let mut args =
            vec!["sample", "nuts", "--model", "logistic", "--data", data.to_str().unwrap()];
        args.extend([
            "--out",
            out.to_str().unwrap(),
            "--chains",
            chains,
            "--warmup",
            "50",
            "--draws",
            "50",
        ]);
        args.extend(extra);
        tallmc(&args)
    };
    assert!(run("4", &[]).status.success());
    let before: Vec<(String, Vec<u8>)> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect();
    let o = run("2", &["--seed", "2"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("not empty") && err.contains("--overwrite"), "{err}");
    for (name, bytes) in &before {
        assert_eq!(&std::fs::read(out.join(name)).unwrap(), bytes, "{name} was touched");
    }
    assert!(run("2", &["--seed", "2", "--overwrite"]).status.success());
    assert!(!out.join("chain_3.csv").exists(), "the old run's third chain is gone");
    assert_eq!(summary(&out)["chains"], 2);
}

#[test]
fn a_run_that_cannot_fit_in_memory_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("people.csv");
    write_named_logistic_csv(&data, 100);
    let out = dir.path().join("run");
    let args = ["sample", "nuts", "--model", "logistic", "--data", data.to_str().unwrap()];
    let o = tallmc(
        &[&args[..], &["--out", out.to_str().unwrap(), "--draws", "1000000000000"]].concat(),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.starts_with("tallmc: error: --draws 1000000000000: "), "{err}");
    assert!(!out.exists(), "nothing was written");
}
