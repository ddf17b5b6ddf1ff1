//! Every ArviZ-matching function against ArviZ 0.23.4 on the fixed inputs of
//! `tests/fixtures/arviz/diagnostics.json` (written by `make_fixture.py` next to it; no Python
//! is needed here). Tolerance: 1e-6 relative. The coda values in the fixture come from the
//! script's numpy re-implementation of R coda, not from R (see `tallmc_diagnostics::coda`).

use serde_json::Value;
use tallmc_diagnostics as diag;

/// Relative tolerance of every comparison with ArviZ.
const REL_TOL: f64 = 1e-6;
/// Absolute floor, only so that exact zeros (e.g. the MCSE of a constant chain) compare equal.
const ABS_FLOOR: f64 = 1e-14;

const FIXTURE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/arviz/diagnostics.json"
));

fn fixture() -> Value {
    serde_json::from_str(FIXTURE).expect("fixture is valid JSON")
}

/// A number of the fixture; NaN and infinities are stored as strings.
fn num(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().expect("f64"),
        Value::String(s) if s == "NaN" => f64::NAN,
        Value::String(s) if s == "Infinity" => f64::INFINITY,
        Value::String(s) if s == "-Infinity" => f64::NEG_INFINITY,
        other => panic!("not a number: {other}"),
    }
}

fn close(ours: f64, theirs: f64) -> bool {
    if theirs.is_nan() || ours.is_nan() {
        return theirs.is_nan() && ours.is_nan();
    }
    if theirs.is_infinite() || ours.is_infinite() {
        return theirs == ours;
    }
    (ours - theirs).abs() <= REL_TOL * theirs.abs().max(ours.abs()) + ABS_FLOOR
}

#[derive(Default)]
struct Checker {
    failures: Vec<String>,
    checked: usize,
}

impl Checker {
    /// Fails with every recorded mismatch at once.
    fn assert_no_failures(self) {
        assert!(
            self.failures.is_empty(),
            "{} of {} values differ:\n{}",
            self.failures.len(),
            self.checked,
            self.failures.join("\n")
        );
    }

    fn check(&mut self, case: &str, what: &str, ours: diag::Result<f64>, theirs: f64) {
        self.checked += 1;
        match ours {
            Ok(v) if close(v, theirs) => {}
            Ok(v) => self.failures.push(format!(
                "{case} {what}: ours {v:e}, ArviZ {theirs:e}, rel. diff {:e}",
                (v - theirs).abs() / theirs.abs()
            )),
            Err(e) => self.failures.push(format!("{case} {what}: error {e}")),
        }
    }
}

fn chains_of(case: &Value) -> Vec<Vec<f64>> {
    case["chains"]
        .as_array()
        .expect("chains")
        .iter()
        .map(|c| c.as_array().expect("chain").iter().map(num).collect())
        .collect()
}

/// Runs `body` on every case of the fixture with its name, chains and expected values, then
/// fails with every mismatch at once.
fn check_every_case(mut body: impl FnMut(&mut Checker, &str, &[Vec<f64>], &Value)) {
    let fx = fixture();
    let mut ck = Checker::default();
    for case in fx["cases"].as_array().expect("cases") {
        let name = case["name"].as_str().expect("name");
        body(&mut ck, name, &chains_of(case), &case["expected"]);
    }
    ck.assert_no_failures();
}

#[test]
fn scalar_diagnostics_match_arviz() {
    assert!(fixture()["cases"].as_array().expect("cases").len() >= 10);
    type Diagnostic = fn(&[Vec<f64>]) -> diag::Result<f64>;
    let scalars: [(&str, Diagnostic); 10] = [
        ("ess_bulk", diag::ess_bulk),
        ("ess_tail", diag::ess_tail),
        ("ess_mean", diag::ess_mean),
        ("ess_sd", diag::ess_sd),
        ("rhat_rank", diag::rhat),
        ("rhat_split", diag::rhat_split),
        ("mcse_mean", diag::mcse_mean),
        ("mcse_sd", diag::mcse_sd),
        ("mean", diag::mean),
        ("sd", diag::sd),
    ];
    check_every_case(|ck, name, x, e| {
        let want = |k: &str| num(&e[k]);
        for (k, f) in scalars {
            ck.check(name, k, f(x), want(k));
        }
        for p in ["0.05", "0.5", "0.95"] {
            let prob: f64 = p.parse().expect("prob");
            let k = format!("ess_quantile_{p}");
            ck.check(name, &k, diag::ess_quantile(x, prob), want(&k));
            let k = format!("mcse_quantile_{p}");
            ck.check(name, &k, diag::mcse_quantile(x, prob), want(&k));
        }
        for (k, prob) in [("q5", 0.05), ("q50", 0.5), ("q95", 0.95)] {
            ck.check(name, k, diag::quantile(x, prob), want(k));
        }
    });
}

#[test]
fn summary_matches_arviz_summary() {
    check_every_case(|ck, name, x, e| {
        // Interleave the chains with a second, shifted copy to exercise the Draws layout.
        let rows: Vec<Vec<f64>> =
            x.iter().map(|c| c.iter().flat_map(|&v| [v, 2.0 * v + 1.0]).collect()).collect();
        let draws = diag::Draws::new(&rows, 2).expect("layout");
        let table = diag::summarize(&["x", "y"], &draws).expect("summary");
        let s = &table[0];
        assert_eq!(s.name, "x");
        for (field, ours) in [
            ("mean", s.mean),
            ("sd", s.sd),
            ("mcse_mean", s.mcse_mean),
            ("mcse_sd", s.mcse_sd),
            ("ess_bulk", s.ess_bulk),
            ("ess_tail", s.ess_tail),
        ] {
            ck.check(
                name,
                &format!("summary_{field}"),
                Ok(ours),
                num(&e[format!("summary_{field}")]),
            );
        }
        // R̂: ArviZ's summary and rhat() agree except for odd-length chains whose tail R̂
        // dominates (see Summary::from_chains); ours follows rhat().
        ck.check(name, "summary.rhat", Ok(s.rhat), num(&e["rhat_rank"]));
        for (field, ours) in [("q5", s.q5), ("q50", s.q50), ("q95", s.q95)] {
            ck.check(name, &format!("summary.{field}"), Ok(ours), num(&e[field]));
        }
        // The second parameter is an increasing affine map of the first: rank-based
        // diagnostics are unchanged.
        let t = &table[1];
        ck.check(name, "y.ess_bulk", Ok(t.ess_bulk), num(&e["ess_bulk"]));
        ck.check(name, "y.ess_tail", Ok(t.ess_tail), num(&e["ess_tail"]));
    });
}

#[test]
fn coda_matches_the_reimplementation() {
    check_every_case(|ck, name, x, e| {
        ck.check(name, "coda_ess", diag::ess_coda(x), num(&e["coda_ess"]));
        for (c, per) in e["coda_chains"].as_array().expect("coda_chains").iter().enumerate() {
            let s = diag::spectrum0_ar(&x[c]).expect("spectrum0");
            let order = per["order"].as_u64().expect("order") as usize;
            if s.order != order {
                ck.failures.push(format!("{name} chain {c}: AR order {} vs {order}", s.order));
            }
            ck.check(name, &format!("spec0[{c}]"), Ok(s.spec), num(&per["spec0"]));
        }
    });
}

#[test]
fn autocorrelation_matches_arviz() {
    let fx = fixture();
    let acf = &fx["acf"];
    let case_name = acf["case"].as_str().expect("case");
    let chain = acf["chain"].as_u64().expect("chain") as usize;
    let case = fx["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .find(|c| c["name"] == case_name)
        .expect("acf case");
    let x = &chains_of(case)[chain];
    let mut ck = Checker::default();
    for (what, ours, theirs) in [
        ("autocov", diag::autocov(x).expect("autocov"), &acf["autocov"]),
        ("autocorr", diag::autocorr(x).expect("autocorr"), &acf["autocorr"]),
    ] {
        let theirs: Vec<f64> = theirs.as_array().expect("array").iter().map(num).collect();
        assert_eq!(ours.len(), theirs.len());
        // FFT rounding is absolute (~1e-16 of γ(0)); lags where the true value is ~0 are
        // compared with that floor.
        let scale = theirs[0].abs();
        for (k, (&o, &t)) in ours.iter().zip(&theirs).enumerate() {
            ck.checked += 1;
            if (o - t).abs() > REL_TOL * t.abs().max(o.abs()) + 1e-12 * scale {
                ck.failures.push(format!("{what}[{k}]: ours {o:e}, ArviZ {t:e}"));
            }
        }
    }
    ck.assert_no_failures();
}
