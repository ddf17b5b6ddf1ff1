//! What the `user_*` examples share: the seed from the command line and the simulated design of
//! a regression with an intercept. (A folder with a `mod.rs`, so that Cargo does not take it for
//! an example of its own.)

#![allow(dead_code, reason = "each example uses a part of it")]

use std::error::Error;

use rand_distr::Distribution;
use tallmc::core::rng::ChainRng;
use tallmc::prelude::setup_rng;

/// The seed given as the first command-line argument, 1 without one.
pub fn seed_arg() -> Result<u64, Box<dyn Error>> {
    match std::env::args().nth(1) {
        None => Ok(1),
        Some(s) => Ok(s.parse().map_err(|e| format!("seed {s:?} is not a u64: {e}"))?),
    }
}

/// `n` rows of a regression with an intercept and d = `theta.len()` coefficients:
/// x_i = (1, z_i1, …, z_i,d−1) with every z_ij drawn from `covariate`, and y_i =
/// `response`(x_iᵀθ, rng), all drawn in row order from tallmc's set-up stream of `seed`
/// (ChaCha8, stream 0). Returns (design row-major `n` × d, responses).
pub fn simulate_regression(
    n: usize, theta: &[f64], seed: u64, covariate: impl Distribution<f64>,
    mut response: impl FnMut(f64, &mut ChainRng) -> Result<f64, Box<dyn Error>>,
) -> Result<(Vec<f64>, Vec<f64>), Box<dyn Error>> {
    let d = theta.len();
    let mut rng = setup_rng(seed);
    let mut x = Vec::with_capacity(n * d);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let start = x.len();
        x.push(1.0);
        for _ in 1..d {
            x.push(covariate.sample(&mut rng));
        }
        let eta: f64 = x[start..].iter().zip(theta).map(|(a, b)| a * b).sum();
        y.push(response(eta, &mut rng)?);
    }
    Ok((x, y))
}
