//! The command's draws are the Rust API's: `tallmc sample hmc-ecs` on a logistic regression, and
//! the same run written by hand with the crates' public API (load the file, Newton's mode from
//! zero, dispersed starts, HMC-ECS with the rank-one difference engine centred at the mode), give
//! the same numbers bit for bit at the same seed. With the Python package's test against the
//! command (`crates/tallmc-py/tests/test_arviz_and_bits.py`), Python, the command and Rust agree.
//!
//! The hand-written run is also the recipe: what `tallmc sample hmc-ecs --subsample M --blocks G`
//! does, in Rust.

use crate::support;

use tallmc_core::ParameterNames;
use tallmc_estimators::{CvOrder, RankOne};
use tallmc_models::{DesignOptions, FastLogisticRegression, LoadOptions};
use tallmc_samplers::sink::MemorySink;
use tallmc_samplers::{
    Driver, EcsDynamics, HmcEcs, HmcEcsConfig, NewtonOptions, RunConfig, ThetaIntegrator,
    laplace_approximation,
};

const CHAINS: usize = 2;
const WARMUP: usize = 150;
const DRAWS: usize = 150;
const SEED: u64 = 5;
const M: usize = 300;
const G: usize = 30;

/// Each chain's draws of the named columns, parsed from the command's CSV files (written in
/// Rust's shortest round-trip form, so parsing gives back the exact f64).
fn command_draws(out: &std::path::Path, names: &[String]) -> Vec<Vec<Vec<f64>>> {
    (1..=CHAINS)
        .map(|k| {
            let text = std::fs::read_to_string(out.join(format!("chain_{k}.csv"))).unwrap();
            let mut lines = text.lines().filter(|l| !l.is_empty() && !l.starts_with('#'));
            let header: Vec<&str> = lines.next().unwrap().split(',').collect();
            let columns: Vec<usize> = names
                .iter()
                .map(|n| header.iter().position(|h| h == n).expect("a parameter column"))
                .collect();
            lines
                .map(|l| {
                    let fields: Vec<&str> = l.split(',').collect();
                    columns.iter().map(|&j| fields[j].parse::<f64>().unwrap()).collect()
                })
                .collect()
        })
        .collect()
}

#[test]
fn hmc_ecs_through_the_command_equals_hmc_ecs_through_the_rust_api_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("logistic.csv");
    support::write_collinear_logistic_csv(&data, 3_000, 6);
    let out = dir.path().join("run");
    let (m, g, chains) = (M.to_string(), G.to_string(), CHAINS.to_string());
    let (warmup, draws, seed) = (WARMUP.to_string(), DRAWS.to_string(), SEED.to_string());
    support::tallmc_ok(&[
        "sample",
        "hmc-ecs",
        "--model",
        "logistic",
        "--intercept",
        "--data",
        data.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--subsample",
        &m,
        "--blocks",
        &g,
        "--chains",
        &chains,
        "--warmup",
        &warmup,
        "--draws",
        &draws,
        "--seed",
        &seed,
        "--no-progress",
        "--no-report",
    ]);

    // The same run through the API, with the command's defaults written out.
    let dataset = tallmc_models::load(&data, &LoadOptions::default()).unwrap();
    let design = DesignOptions { intercept: true, standardize: false };
    let model = FastLogisticRegression::new(dataset, design, 10.0).unwrap();
    let names = model.parameter_names();
    let newton = NewtonOptions {
        warm_start_rows: Some(NewtonOptions::WARM_START_ROWS),
        ..Default::default()
    };
    let laplace = laplace_approximation(&model, &vec![0.0; names.len()], newton).unwrap();
    let inits = laplace.dispersed_positions(CHAINS, 2.0, SEED).unwrap();
    let mut dynamics = EcsDynamics {
        trajectory_length: 1.2,
        recenter: None,
        parallel_control_variates: true,
        ..EcsDynamics::default()
    }
    .with_integrator(ThetaIntegrator::Hmc);
    dynamics.dual_averaging.target_accept = 0.8;
    let config = HmcEcsConfig {
        subsample_size: Some(M),
        blocks: G,
        cv_order: CvOrder::from_number(2).unwrap(),
        center: Some(laplace.mode.clone()),
        dynamics,
        ..HmcEcsConfig::default()
    };
    let kernel = HmcEcs::with_engine(config, RankOne::with_lanes(1, M)).unwrap();
    let sinks = (0..CHAINS).map(|_| MemorySink::new()).collect();
    let outputs = Driver::new(RunConfig::new(WARMUP, DRAWS, CHAINS, SEED))
        .run(&model, &inits, &kernel, sinks)
        .unwrap();

    let command = command_draws(&out, &names);
    for (k, (chain, output)) in command.iter().zip(&outputs).enumerate() {
        assert_eq!(chain.len(), DRAWS, "chain {} of the command", k + 1);
        assert_eq!(output.sink.num_draws(), DRAWS, "chain {} of the API", k + 1);
        for (i, row) in chain.iter().enumerate() {
            let api = output.sink.draw(i);
            let same = row.iter().zip(api).all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "chain {}, draw {}: command {row:?} vs API {api:?}", k + 1, i + 1);
        }
    }
}
