//! Helpers shared by the CLI's end-to-end tests: running the binary and writing small,
//! deterministic data files.

#![allow(dead_code)] // each test binary uses a subset

use std::path::Path;
use std::process::{Command, Output};

/// Runs the `tallmc` binary built for these tests with `args`.
pub fn tallmc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tallmc")).args(args).output().expect("run tallmc")
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
