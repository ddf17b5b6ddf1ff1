//! One shape for every suite: a suite is a list of [`Part`]s, each of which summarizes what it
//! computed, states its [`Claim`]s (measured values, the rule that decides them and the verdict,
//! computed **once**) and draws its figures; one runner, [`run`], writes `summary.json` (with the
//! claims), `report.md` (the claims table rendered from the same [`Claim`] values, then each
//! part's section) and the figures. The tests in `tests/` assert on the same claims, so a report
//! verdict and a test can never disagree.

use std::fmt;
use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use crate::figure::Figure;
use crate::report::Report;
use crate::{Context, Error, Result};

/// The tolerance of every statistical claim, in Monte Carlo standard errors: an estimate
/// agrees with a reference when |z| < `Z_MAX` (z = difference ÷ its MCSE, combined MCSE for
/// two estimates), and an effect is shown when z > `Z_MAX`. The value of the tests'
/// `tallmc_testkit::Z_MAX`.
pub const Z_MAX: f64 = 4.0;

/// The z-score of two estimates a ± sa and b ± sb (standard errors): (a − b)/√(sa² + sb²), the
/// quantity [`Z_MAX`] bounds.
pub fn z(a: f64, sa: f64, b: f64, sb: f64) -> f64 {
    (a - b) / sa.hypot(sb)
}

/// A claim of a paper (or of the design) beside the measurement that decides it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Claim {
    /// Short stable name (tests refer to claims by it).
    pub id: &'static str,
    /// What the paper says (with its section or figure).
    pub paper: String,
    /// The measured numbers.
    pub measured: String,
    /// The rule that decides the verdict (thresholds from MCSEs where there is noise).
    pub criterion: String,
    /// Whether the measurement satisfies the criterion.
    pub holds: bool,
}

impl Claim {
    /// A claim.
    pub fn new(
        id: &'static str, paper: impl Into<String>, measured: impl Into<String>,
        criterion: impl Into<String>, holds: bool,
    ) -> Self {
        Self {
            id,
            paper: paper.into(),
            measured: measured.into(),
            criterion: criterion.into(),
            holds,
        }
    }

    /// The verdict column: "holds" or "does not hold", then the criterion.
    pub fn verdict(&self) -> String {
        let v = if self.holds { "holds" } else { "**does not hold**" };
        format!("{v} ({})", self.criterion)
    }
}

impl fmt::Display for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): {}; measured: {}; criterion: {}",
            self.id,
            if self.holds { "holds" } else { "does not hold" },
            self.paper,
            self.measured,
            self.criterion
        )
    }
}

/// One part of a suite (a figure or table of the paper): what it measured, as summary numbers,
/// claims, figures and a report section.
pub trait Part {
    /// Key of the part in the JSON summary and the claims table (e.g. `fig4_toy`).
    fn key(&self) -> &'static str;
    /// The JSON summary of the part (numbers only; the quick one is part of an insta snapshot).
    fn summary(&self) -> Value;
    /// The paper's claims beside the measurements, with verdicts.
    fn claims(&self) -> Vec<Claim>;
    /// The part's SVG figures, each with its file name.
    fn figures(&self) -> Vec<(&'static str, Figure)>;
    /// Appends the part's section to the report.
    fn report(&self, r: &mut Report);
}

/// A reproduction suite: its parts, computed together.
pub trait Suite: Sized {
    /// Name of the suite (`cargo xtask reproduce <name>`).
    const NAME: &'static str;
    /// Title of the report.
    const TITLE: &'static str;
    /// Header of the claims table's "paper" column (e.g. `paper (BDH 2014)`).
    const PAPER: &'static str;
    /// Runs every part.
    fn compute(ctx: &Context<'_>) -> Result<Self>;
    /// The parts, in report order.
    fn parts(&self) -> Vec<&dyn Part>;
    /// The JSON summary (the quick one is an insta snapshot after rounding; it holds numbers
    /// only, the claims are added by [`run`] to the file it writes).
    fn summary(&self) -> Value;
    /// The report's opening paragraph (mode, seed, cost convention).
    fn intro(&self) -> String;

    /// Every claim with the key of its part.
    fn claims(&self) -> Vec<(&'static str, Claim)> {
        self.parts()
            .into_iter()
            .flat_map(|p| p.claims().into_iter().map(move |c| (p.key(), c)))
            .collect()
    }

    /// The markdown report: title, introduction, the claims table, then each part's section.
    fn report(&self) -> Report {
        let mut r = Report::new(Self::TITLE);
        r.paragraph(&self.intro());
        r.section("Claims and measurements");
        r.table_of(
            &["part", Self::PAPER, "measured here", "verdict"],
            self.claims(),
            |(key, c)| {
                let verdict = c.verdict();
                vec![key.to_string(), c.paper, c.measured, verdict]
            },
        );
        for p in self.parts() {
            p.report(&mut r);
        }
        r
    }
}

/// Runs the suite `S`: computes it and, when the context asks for files, writes `summary.json`
/// (the summary plus a `claims` list), `report.md` and every part's figures into
/// `ctx.out_dir`. Returns the summary (without the claims).
pub fn run<S: Suite>(ctx: &Context<'_>) -> Result<Value> {
    let suite = S::compute(ctx)?;
    let summary = suite.summary();
    if ctx.write_files {
        let claims: Vec<Value> =
            suite.claims().into_iter().map(|(part, c)| json!({"part": part, "claim": c})).collect();
        let mut file = summary.clone();
        if let Value::Object(map) = &mut file {
            map.insert("claims".into(), Value::Array(claims));
        }
        let figures = suite.parts().iter().flat_map(|p| p.figures()).collect();
        write_outputs(ctx, &file, figures, &suite.report())?;
    }
    Ok(summary)
}

/// Writes a suite's files into `ctx.out_dir`: `summary.json`, the figures (each under its
/// name) and `report.md`.
pub fn write_outputs(
    ctx: &Context<'_>, summary: &Value, figures: Vec<(&'static str, Figure)>, report: &Report,
) -> Result<()> {
    write_json(&ctx.out_dir.join("summary.json"), summary)?;
    for (name, fig) in figures {
        save_figure(&fig, &ctx.out_dir.join(name))?;
    }
    report.save(&ctx.out_dir.join("report.md"))
}

/// Writes `value` as pretty JSON (with a final newline) to `path`.
pub fn write_json(path: &Path, value: &Value) -> Result<()> {
    let text = serde_json::to_string_pretty(value).unwrap_or_default() + "\n";
    std::fs::write(path, text).map_err(|source| Error::Write { path: path.into(), source })
}

/// Saves `fig` as SVG at `path`.
pub fn save_figure(fig: &Figure, path: &Path) -> Result<()> {
    fig.save(path).map_err(|source| Error::Write { path: path.into(), source })
}

/// Runs `f`, then notes on the context's reporter how long `what` of `suite` took.
pub fn timed<T>(
    ctx: &Context<'_>, suite: &str, what: &str, f: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let clock = std::time::Instant::now();
    let out = f()?;
    ctx.reporter.note(&format!("{suite}: {what} took {:.1} s", clock.elapsed().as_secs_f64()));
    Ok(out)
}
