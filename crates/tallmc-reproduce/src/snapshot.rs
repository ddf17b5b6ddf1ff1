//! Summaries as insta snapshots: numbers rounded to significant figures, timings removed.
//!
//! Snapshots check determinism (same seed, same platform → same numbers); correctness is the job
//! of the MCSE-based tests. Rounding to a few significant figures keeps the snapshots readable.

use serde_json::{Map, Value};

/// Keys removed from snapshots (wall-clock measurements vary from run to run).
const TIMING_KEYS: &[&str] = &["seconds", "wall_time", "per_second", "timings"];

/// Rounds `x` to `sig` significant figures.
pub fn round_sig(x: f64, sig: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let magnitude = x.abs().log10().floor() as i32;
    let factor = 10f64.powi(sig - 1 - magnitude);
    let r = (x * factor).round() / factor;
    // Print-friendly: go through a decimal string with the right number of digits.
    format!("{:.*e}", (sig - 1).max(0) as usize, r).parse().unwrap_or(r)
}

/// A copy of `value` with every float rounded to `sig` significant figures and every key that
/// names a timing removed. Object keys stay sorted (serde_json's default map is ordered).
pub fn for_snapshot(value: &Value, sig: i32) -> Value {
    match value {
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(_), _, _) | (_, Some(_), _) => value.clone(),
            (_, _, Some(f)) => {
                serde_json::Number::from_f64(round_sig(f, sig)).map_or(Value::Null, Value::Number)
            }
            _ => value.clone(),
        },
        Value::Array(a) => Value::Array(a.iter().map(|v| for_snapshot(v, sig)).collect()),
        Value::Object(o) => {
            let mut out = Map::new();
            for (k, v) in o {
                if TIMING_KEYS.iter().any(|t| k.contains(t)) {
                    continue;
                }
                out.insert(k.clone(), for_snapshot(v, sig));
            }
            Value::Object(out)
        }
        _ => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_and_drops_timings() {
        assert_eq!(round_sig(123.456, 3), 123.0);
        assert_eq!(round_sig(-0.00123456, 2), -0.0012);
        assert_eq!(round_sig(9.996, 3), 10.0);
        let v =
            serde_json::json!({"b": 1.23456, "a": {"wall_seconds": 3.0, "ess": 1234.5, "n": 7}});
        let s = for_snapshot(&v, 3);
        assert_eq!(s, serde_json::json!({"a": {"ess": 1230.0, "n": 7}, "b": 1.23}));
    }
}
