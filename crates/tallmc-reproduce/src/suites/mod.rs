//! The reproduction suites.

pub mod austerity;
pub mod baseline;
pub mod confidence;
pub mod hmcecs;
pub mod sbps;

use serde_json::Value;

use crate::{Context, Error, Result};

/// Every suite, in the order `cargo xtask reproduce` runs them.
pub const ALL: &[&str] = &["baseline", "austerity", "confidence", "hmcecs", "sbps"];

/// Runs the suite `name`, returning its summary.
pub fn run(name: &str, ctx: &Context<'_>) -> Result<Value> {
    match name {
        "baseline" => baseline::run(ctx),
        "austerity" => austerity::run(ctx),
        "confidence" => confidence::run(ctx),
        "hmcecs" => hmcecs::run(ctx),
        "sbps" => sbps::run(ctx),
        _ => Err(Error::UnknownSuite(name.into(), ALL.join(", "))),
    }
}
