//! The reproduction suites.

pub mod austerity;
pub mod baseline;
pub mod confidence;
pub mod exact_mh;
pub mod hmcecs;
pub mod sbps;

use serde_json::Value;

use crate::part::run as run_suite;
use crate::{Context, Error, Result};

/// Every suite, in the order `cargo xtask reproduce` runs them.
pub const ALL: &[&str] = &["baseline", "austerity", "confidence", "hmcecs", "sbps", "exact-mh"];

/// Runs the suite `name` with the [shared runner](crate::part::run), returning its summary.
pub fn run(name: &str, ctx: &Context<'_>) -> Result<Value> {
    match name {
        "baseline" => baseline::run(ctx),
        "austerity" => run_suite::<austerity::Austerity>(ctx),
        "confidence" => run_suite::<confidence::Confidence>(ctx),
        "hmcecs" => run_suite::<hmcecs::Hmcecs>(ctx),
        "sbps" => sbps::run(ctx),
        "exact-mh" => run_suite::<exact_mh::ExactMh>(ctx),
        _ => Err(Error::UnknownSuite(name.into(), ALL.join(", "))),
    }
}
