//! The suite's [`Part`]s: Fig. 2 with the decision audit, Fig. 3, Figs. 5–6 and Figs. 7–8 —
//! each part's claims (the measured values, the rule that decides them and the verdict,
//! computed once), its figures and its report section.
//!
//! Tolerances come from the Monte Carlo error of each measured number (binomial sd of a rate,
//! MCSE from the ESS of a series, jackknife standard error over chains) and
//! [`Z_MAX`](crate::part::Z_MAX).

use serde_json::Value;

use super::PAPER_FIG3_IMPLIED_FRACTION;
use super::fig2::Fig2;
use super::fig3::Fig3;
use super::fig56::{self, Fig56, Method};
use super::fig78::{self, Fig78};
use crate::figure::Figure;
use crate::part::{Claim, Part, Z_MAX};
use crate::report::{Report, fmt_sig};

fn pct(x: f64) -> String {
    format!("{}%", fmt_sig(100.0 * x, 3))
}

/// √(p(1 − p)/n): the binomial sd of a rate p estimated from n decisions.
fn binomial_sd(p: f64, n: u64) -> f64 {
    (p * (1.0 - p) / n.max(1) as f64).sqrt()
}

/// The last value of a curve (NaN when it is empty, which fails every comparison).
fn last(v: &[f64]) -> f64 {
    v.last().copied().unwrap_or(f64::NAN)
}

/// A claim for a measurement that is missing (it cannot hold).
fn missing(id: &'static str, paper: &str, what: &str) -> Claim {
    Claim::new(id, paper, format!("{what} not measured"), "measured", false)
}

/// "About ε" at ε = 0.01: within a factor of 4 of ε, rejected only when the rate lies beyond a
/// bound by more than Z_MAX binomial sds computed at that bound.
pub const WRONG_RATE_FACTOR: f64 = 4.0;
/// "A small fraction of the data" at ε = 0.01: at least 20% less than the exact test's.
pub const SMALL_FRACTION: f64 = 0.8;

impl Part for Fig2 {
    fn key(&self) -> &'static str {
        "fig2"
    }

    fn summary(&self) -> Value {
        super::to(self)
    }

    fn claims(&self) -> Vec<Claim> {
        let mut out = Vec::new();
        let (Some(r0), Some(r1), Some(r5), Some(r20)) =
            (self.row(0.0), self.row(0.01), self.row(0.05), self.row(0.2))
        else {
            return vec![missing("fig2_rows", "Fig. 2", "ε ∈ {0, 0.01, 0.05, 0.2}")];
        };
        out.push(Claim::new(
            "eps0_exact_mh",
            "\"ε = 0 corresponds to the exact MH algorithm\" (decision audit)",
            format!(
                "ε = 0: {} ± {} of the data per test, {} wrong decisions of {}",
                pct(r0.data_fraction),
                pct(r0.data_fraction_mcse),
                r0.wrong,
                r0.decisions
            ),
            "every test uses all N values and no decision differs from the exact test's (exact; bit for bit in `tests/minibatch_exactness.rs`)",
            r0.wrong == 0 && r0.data_fraction == 1.0 && r0.data_fraction_mcse == 0.0,
        ));
        let eps = 0.01;
        let n = r1.decisions;
        out.push(Claim::new(
            "fig2_eps001_uses_less_data",
            "Fig. 2: \"The amount of data required drops off very fast as ε is increased\" — at ε = 0.01 a clearly smaller part of the data",
            format!(
                "ε = 0.01: {} ± {} (MCSE) of the data per test; paper's Fig. 3 implies ≤ {}",
                pct(r1.data_fraction),
                pct(r1.data_fraction_mcse),
                pct(PAPER_FIG3_IMPLIED_FRACTION[0].1)
            ),
            format!("fraction + Z_MAX·MCSE ≤ {SMALL_FRACTION}"),
            r1.data_fraction + Z_MAX * r1.data_fraction_mcse <= SMALL_FRACTION,
        ));
        let (lo, hi) = (eps / WRONG_RATE_FACTOR, WRONG_RATE_FACTOR * eps);
        let (lower, upper) = (lo + Z_MAX * binomial_sd(lo, n), hi + Z_MAX * binomial_sd(hi, n));
        out.push(Claim::new(
            "fig2_wrong_rate_about_epsilon",
            "Fig. 2: \"… even though the error does not increase much\": the wrong-decision rate is about ε at ε = 0.01",
            format!(
                "{} ± {} (binomial sd; {} of {} decisions; ESS-based MCSE {}) = {}·ε",
                pct(r1.wrong_rate),
                pct(r1.wrong_binomial_sd),
                r1.wrong,
                n,
                pct(r1.wrong_mcse),
                fmt_sig(r1.wrong_rate / eps, 2)
            ),
            format!(
                "within a factor {WRONG_RATE_FACTOR} of ε, up to Z_MAX binomial sds at the bound: {} ≤ rate ≤ {}",
                fmt_sig(lower, 3),
                fmt_sig(upper, 3)
            ),
            r1.wrong_rate >= lower && r1.wrong_rate <= upper,
        ));
        let sd_eps = binomial_sd(eps, n);
        let z = (r1.wrong_rate - eps) / sd_eps.max(f64::MIN_POSITIVE);
        out.push(Claim::new(
            "fig2_wrong_rate_equals_epsilon",
            "Fig. 2 (black line y = ε): the wrong-decision rate is ε — 1% at ε = 0.01",
            format!(
                "{} = {}·ε, z = {} binomial sds (at ε) from 1% (ε bounds the error of each look of the sequential t-test under a CLT approximation, not of the whole sequence of looks)",
                pct(r1.wrong_rate),
                fmt_sig(r1.wrong_rate / eps, 2),
                fmt_sig(z, 2)
            ),
            "|rate − ε| ≤ Z_MAX binomial sds at ε",
            z.abs() <= Z_MAX,
        ));
        let rows: Vec<_> = self.rows.iter().filter(|r| r.epsilon >= 0.01).collect();
        let steps: Vec<String> = rows
            .windows(2)
            .map(|w| {
                let (a, b) = (w[0], w[1]);
                format!(
                    "ε = {} → {}: data −{} (z = {}), wrong +{} (z = {})",
                    a.epsilon,
                    b.epsilon,
                    pct(a.data_fraction - b.data_fraction),
                    fmt_sig(
                        (a.data_fraction - b.data_fraction)
                            / a.data_fraction_mcse.hypot(b.data_fraction_mcse),
                        2
                    ),
                    pct(b.wrong_rate - a.wrong_rate),
                    fmt_sig(
                        (b.wrong_rate - a.wrong_rate)
                            / a.wrong_binomial_sd.hypot(b.wrong_binomial_sd),
                        2
                    )
                )
            })
            .collect();
        out.push(Claim::new(
            "fig2_data_falls_errors_rise",
            "Fig. 2: as ε grows the test uses less data and makes more wrong decisions",
            steps.join("; "),
            "from ε = 0.01 on (≥ 4 values), each step: fall of the fraction > Z_MAX combined MCSEs and rise of the rate > Z_MAX combined binomial sds",
            rows.len() >= 4
                && rows.windows(2).all(|w| {
                    let (a, b) = (w[0], w[1]);
                    a.data_fraction - b.data_fraction
                        > Z_MAX * a.data_fraction_mcse.hypot(b.data_fraction_mcse)
                        && b.wrong_rate - a.wrong_rate
                            > Z_MAX * a.wrong_binomial_sd.hypot(b.wrong_binomial_sd)
                }),
        ));
        out.push(Claim::new(
            "fig2_data_halved_by_eps02",
            "Fig. 2: \"The amount of data required drops off very fast as ε is increased even though the error does not increase much.\"",
            format!(
                "data used: {} (ε = 0), {} (0.01), {} (0.05), {} (0.2); wrong decisions: {} (0.01), {} (0.05), {} (0.2)",
                pct(r0.data_fraction),
                pct(r1.data_fraction),
                pct(r5.data_fraction),
                pct(r20.data_fraction),
                pct(r1.wrong_rate),
                pct(r5.wrong_rate),
                pct(r20.wrong_rate)
            ),
            format!(
                "fraction at ε = 0.2 + Z_MAX·MCSE < ½ × ε = 0's, and wrong rate at ε = 0.01 + Z_MAX binomial sds < {}",
                pct(0.05)
            ),
            r20.data_fraction + Z_MAX * r20.data_fraction_mcse < 0.5 * r0.data_fraction
                && r1.wrong_rate + Z_MAX * r1.wrong_binomial_sd < 0.05,
        ));
        let implied: Vec<String> = PAPER_FIG3_IMPLIED_FRACTION
            .iter()
            .map(|(e, f)| {
                let m = self.row(*e).map_or("—".into(), |r| pct(r.data_fraction));
                format!("ε = {e}: paper ≤ {}, measured {m}", pct(*f))
            })
            .collect();
        out.push(Claim::new(
            "fig3_legend_implied_fraction",
            "Fig. 3 legend (samples T in 400 s): data fraction ≤ T(0)/T(ε)",
            implied.join("; "),
            "every measured fraction − Z_MAX·MCSE ≤ the paper's bound",
            PAPER_FIG3_IMPLIED_FRACTION.iter().all(|(e, f)| {
                self.row(*e).is_some_and(|r| r.data_fraction - Z_MAX * r.data_fraction_mcse <= *f)
            }),
        ));
        out
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        vec![("fig2_data_and_errors.svg", self.figure())]
    }

    fn report(&self, r: &mut Report) {
        fig2_section(self, r);
    }
}

/// Fig. 3: the steepest slope of log risk against log evaluations over the last decade that
/// still counts as variance-dominated. A stationary chain's risk after t steps is σ²τ_t/t,
/// τ_t = 1 + 2Σ_{k<t}(1 − k/t)ρ_k, whose log–log slope −1 + d log τ_t / d log t lies in
/// (−1, 0) and tends to −1; for the quick exact chain (integrated autocorrelation time ≈ 110
/// steps, last decade ≈ 164 → 1,640 steps) an AR(1) chain gives ≈ −0.85, and a curve flattening
/// because bias takes over would tend to 0.
pub const SLOPE_MAX: f64 = -0.6;
/// Fig. 3: the least factor by which every risk falls over the last decade (1/t gives 10).
pub const DECADE_FALL: f64 = 3.0;

impl Part for Fig3 {
    fn key(&self) -> &'static str {
        "fig3"
    }

    fn summary(&self) -> Value {
        super::to(self)
    }

    fn claims(&self) -> Vec<Claim> {
        let mut out = Vec::new();
        let Some(c0) = self.curve(0.0) else {
            return vec![missing("fig3_eps0", "Fig. 3", "the ε = 0 curve")];
        };
        out.push(Claim::new(
            "fig3_eps0_uses_all_data",
            "\"ε = 0 corresponds to the exact MH algorithm\" (Fig. 3's chains)",
            format!("ε = 0: {} of the data per test", pct(c0.data_fraction)),
            "fraction = 1 (to 1e-12)",
            (c0.data_fraction - 1.0).abs() < 1e-12,
        ));
        let (s, se) = (c0.slope_last_decade, c0.slope_jackknife_se);
        out.push(Claim::new(
            "fig3_eps0_risk_slope",
            "Fig. 3: log risk falls on a straight line while variance dominates (risk ∝ τ_t/t: slope in [−1, 0), tending to −1)",
            format!(
                "slopes over the last decade ± jackknife se: {} (ε = 0 runs {} steps per chain)",
                self.curves
                    .iter()
                    .map(|c| format!(
                        "ε = {}: {} ± {}",
                        c.epsilon,
                        fmt_sig(c.slope_last_decade, 2),
                        fmt_sig(c.slope_jackknife_se, 1)
                    ))
                    .collect::<Vec<_>>()
                    .join("; "),
                fmt_sig(c0.steps, 3)
            ),
            format!("ε = 0: −1 − Z_MAX·se ≤ slope ≤ {SLOPE_MAX}"),
            s >= -1.0 - Z_MAX * se && s <= SLOPE_MAX,
        ));
        let decade = |c: &super::fig3::RiskCurve| {
            c.evals
                .iter()
                .position(|&e| e >= self.budget as f64 / 10.0 * 0.999)
                .and_then(|j| c.risk.get(j).copied())
                .map_or(f64::NAN, |early| early / last(&c.risk))
        };
        out.push(Claim::new(
            "fig3_risk_falls_over_last_decade",
            "Fig. 3: the risk of every ε keeps falling with the evaluations (variance-dominated)",
            format!(
                "risk a decade before the budget ÷ risk at the budget: {}",
                self.curves
                    .iter()
                    .map(|c| format!("ε = {}: {}", c.epsilon, fmt_sig(decade(c), 2)))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            format!("every ε: factor > {DECADE_FALL} (1/t gives 10)"),
            !self.curves.is_empty() && self.curves.iter().all(|c| decade(c) > DECADE_FALL),
        ));
        let share: Vec<String> = self
            .curves
            .iter()
            .map(|c| {
                format!(
                    "ε = {}: bias² {} ± {} of risk {}",
                    c.epsilon,
                    fmt_sig(last(&c.bias2), 2),
                    fmt_sig(c.bias2_jackknife_se, 2),
                    fmt_sig(last(&c.risk), 2)
                )
            })
            .collect();
        out.push(Claim::new(
            "fig3_variance_dominates",
            "Fig. 3: \"even after collecting a lot of samples, the risk is still dominated by the variance\"",
            format!("at the budget: {}", share.join("; ")),
            "every ε: bias² + Z_MAX·jackknife se < ½ risk",
            self.curves
                .iter()
                .all(|c| last(&c.bias2) + Z_MAX * c.bias2_jackknife_se < 0.5 * last(&c.risk)),
        ));
        let best = self.curves.iter().min_by(|x, y| last(&x.risk).total_cmp(&last(&y.risk)));
        out.push(Claim::new(
            "fig3_min_risk_at_positive_epsilon",
            "Fig. 3: \"The minimum risk after a finite amount of computational time is obtained with ε > 0\"",
            format!(
                "lowest risk at the budget ({} evaluations per chain): ε = {} ({}); ε = 0: {}",
                fmt_sig(self.budget as f64, 3),
                best.map_or(f64::NAN, |b| b.epsilon),
                fmt_sig(best.map_or(f64::NAN, |b| last(&b.risk)), 3),
                fmt_sig(last(&c0.risk), 3)
            ),
            format!(
                "the lowest risk has ε > 0 (the ordering is not tested for significance: {} chains per ε)",
                self.chains
            ),
            best.is_some_and(|b| b.epsilon > 0.0),
        ));
        out
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        vec![("fig3_risk.svg", self.figure())]
    }

    fn report(&self, r: &mut Report) {
        fig3_section(self, r);
    }
}

/// Figs. 5–6: "a huge bias" of SGLD at the large step: draws at least this much too wide
/// (E(θ − μ)²/var, up to Z_MAX MCSEs).
pub const HUGE_BIAS_RATIO: f64 = 1.5;
/// Figs. 5–6: "a huge variance" of the exact-MH correction: its L1 error at the budget is more
/// than this multiple of uncorrected SGLD's.
pub const MH_NOISE_FACTOR: f64 = 2.0;

impl Part for Fig56 {
    fn key(&self) -> &'static str {
        "fig5_6"
    }

    fn summary(&self) -> Value {
        super::to(self)
    }

    fn claims(&self) -> Vec<Claim> {
        let mut out = Vec::new();
        let fin = |s: usize, m: Method| self.curve(s, m).map_or(f64::NAN, |c| last(&c.l1));
        let (Some(sg), Some(mh)) = (self.curve(0, Method::Sgld), self.curve(0, Method::Mh)) else {
            return vec![missing("fig5_large_step", "Fig. 5", "SGLD and MH at the large step")];
        };
        let step = self.steps.first().map_or(f64::NAN, |s| s.factor);
        let bias = format!(
            "large step (h = {step} λ_min): SGLD's pooled variances are {}× the truth on average (E(θ−μ)²/var = {} ± {} MCSE; pooled L1 error {}, {} of Σ var; truth's own error {})",
            fmt_sig(sg.mean_variance_ratio, 3),
            fmt_sig(sg.second_moment_ratio, 3),
            fmt_sig(sg.second_moment_ratio_mcse, 2),
            fmt_sig(sg.pooled_l1, 3),
            pct(sg.pooled_l1 / self.sum_variance),
            fmt_sig(self.truth_l1_floor, 2)
        );
        out.push(Claim::new(
            "fig5_sgld_biased_at_large_step",
            "Fig. 5: \"when the step size is large SGLD has a … bias\" (its draws spread more than the posterior)",
            bias.clone(),
            "E(θ−μ)²/var − 1 > Z_MAX·MCSE",
            sg.second_moment_ratio - 1.0 > Z_MAX * sg.second_moment_ratio_mcse,
        ));
        out.push(Claim::new(
            "fig5_sgld_bias_is_huge",
            "Fig. 5: \"when the step size is large SGLD has a huge bias\"",
            bias,
            format!("E(θ−μ)²/var − Z_MAX·MCSE > {HUGE_BIAS_RATIO}"),
            sg.second_moment_ratio - Z_MAX * sg.second_moment_ratio_mcse > HUGE_BIAS_RATIO,
        ));
        out.push(Claim::new(
            "fig5_mh_correction_is_noisy",
            "Fig. 5: \"While the MH test can correct this, the MH test introduces a huge variance\"",
            format!(
                "large step: exact MH accepts {} of the SGLD proposals, {} steps per chain; L1 error at the budget {} (SGLD {})",
                pct(mh.accept),
                fmt_sig(mh.steps, 3),
                fmt_sig(fin(0, Method::Mh), 3),
                fmt_sig(fin(0, Method::Sgld), 3)
            ),
            format!("MH's L1 error at the budget > {MH_NOISE_FACTOR} × SGLD's"),
            fin(0, Method::Mh) > MH_NOISE_FACTOR * fin(0, Method::Sgld),
        ));
        let aust: Vec<f64> =
            fig56::EPSILONS.iter().map(|&e| fin(0, Method::Austerity(e))).collect();
        let measured = fig56::EPSILONS
            .iter()
            .map(|&e| {
                let c = self.curve(0, Method::Austerity(e));
                format!(
                    "ε = {e}: error {} (accept {}, data {} per test)",
                    fmt_sig(fin(0, Method::Austerity(e)), 3),
                    c.map_or("—".into(), |c| pct(c.accept)),
                    c.map_or("—".into(), |c| pct(c.test_data_fraction))
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
            + &format!(
                "; MH {}; SGLD {}",
                fmt_sig(fin(0, Method::Mh), 3),
                fmt_sig(fin(0, Method::Sgld), 3)
            );
        let paper = "Fig. 5: \"Our method on the other hand can reduce the bias while at the same time maintaining a low variance\"";
        out.push(Claim::new(
            "fig5_austerity_less_error_than_mh",
            format!("{paper} — less error than the exact-MH correction (the variance claim)"),
            measured.clone(),
            "every ε: L1 error at the budget < MH's (no Monte Carlo error of the L1 errors is measured)",
            aust.iter().all(|&x| x < fin(0, Method::Mh)),
        ));
        out.push(Claim::new(
            "fig5_austerity_less_error_than_sgld",
            format!("{paper} — less error than uncorrected SGLD (the bias claim)"),
            measured,
            "every ε: L1 error at the budget < SGLD's (no Monte Carlo error of the L1 errors is measured)",
            aust.iter().all(|&x| x < fin(0, Method::Sgld)),
        ));
        if let Some(small) = self.steps.get(1) {
            let best = small.curves.iter().min_by(|x, y| last(&x.l1).total_cmp(&last(&y.l1)));
            let sg1 = self.curve(1, Method::Sgld);
            out.push(Claim::new(
                "fig6_sgld_fastest_at_small_step",
                "Fig. 6: \"when the step size is small, the bias in SGLD is small. Since SGLD is very fast, it can reduce the error quicker than other methods\"",
                format!(
                    "small step: SGLD's pooled variances {}× the truth (E(θ−μ)²/var = {} ± {}); lowest error at the budget: {} ({}); SGLD {}",
                    fmt_sig(sg1.map_or(f64::NAN, |c| c.mean_variance_ratio), 3),
                    fmt_sig(sg1.map_or(f64::NAN, |c| c.second_moment_ratio), 3),
                    fmt_sig(sg1.map_or(f64::NAN, |c| c.second_moment_ratio_mcse), 2),
                    best.map_or("—".into(), |b| b.method.label()),
                    fmt_sig(best.map_or(f64::NAN, |b| last(&b.l1)), 3),
                    fmt_sig(fin(1, Method::Sgld), 3)
                ),
                "SGLD has the lowest L1 error at the budget (no Monte Carlo error of the L1 errors is measured)",
                best.is_some_and(|b| b.method == Method::Sgld),
            ));
        }
        out
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        vec![("fig5_6_sgld_variance_error.svg", self.figure())]
    }

    fn report(&self, r: &mut Report) {
        fig56_section(self, r);
    }
}

/// Fig. 7: the paper's bound on the largest |empirical − exact| conditional at ε = 0.01.
pub const PAPER_MAX_ERROR: f64 = 0.01;
/// Fig. 8: the bias floor of every ε ≥ 0.05 is more than this multiple of exact Gibbs' error
/// at the budget.
pub const FLOOR_FACTOR: f64 = 2.0;

impl Part for Fig78 {
    fn key(&self) -> &'static str {
        "fig7_8"
    }

    fn summary(&self) -> Value {
        super::to(self)
    }

    fn claims(&self) -> Vec<Claim> {
        let mut out = Vec::new();
        let g = self;
        if let Some(c) = g.conditional_error(0.01) {
            let bound = PAPER_MAX_ERROR + Z_MAX * c.max_binomial_sd;
            out.push(Claim::new(
                "fig7_max_error_eps001",
                "Fig. 7: \"When ε = 0.01, the observed maximum error is within 0.01\"",
                format!(
                    "max |empirical − exact| = {} over {} pairs (binomial sd ≤ {}, {} repetitions each; D = {})",
                    fmt_sig(c.max_abs_error, 2),
                    g.points.len(),
                    fmt_sig(c.max_binomial_sd, 2),
                    c.reps,
                    g.sizes.d
                ),
                format!(
                    "≥ 15 pairs and max |error| ≤ {PAPER_MAX_ERROR} + Z_MAX × the largest binomial sd = {}",
                    fmt_sig(bound, 3)
                ),
                g.points.len() >= 15 && c.max_abs_error <= bound,
            ));
        } else {
            out.push(missing("fig7_max_error_eps001", "Fig. 7", "ε = 0.01"));
        }
        let large: Vec<_> = g.conditional_errors.iter().filter(|c| c.epsilon >= 0.05).collect();
        out.push(Claim::new(
            "fig7_bias_direction",
            "Fig. 7: \"It tends to under estimate at large probabilities and over estimate on the other end\"",
            format!(
                "mean empirical − exact ± binomial sd: {}",
                g.conditional_errors
                    .iter()
                    .map(|c| format!(
                        "ε = {}: {} ± {} (P > ½), {} ± {} (P < ½)",
                        c.epsilon,
                        fmt_sig(c.mean_error_above_half, 2),
                        fmt_sig(c.mean_error_above_half_sd, 1),
                        fmt_sig(c.mean_error_below_half, 2),
                        fmt_sig(c.mean_error_below_half_sd, 1)
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            "every ε ≥ 0.05: mean error < −Z_MAX sd over the pairs with P > ½ and > Z_MAX sd over those with P < ½ (at ε = 0.01 the bias is below the noise)",
            !large.is_empty()
                && large.iter().all(|c| {
                    c.mean_error_above_half < -Z_MAX * c.mean_error_above_half_sd
                        && c.mean_error_below_half > Z_MAX * c.mean_error_below_half_sd
                }),
        ));
        let Some(ex) = g.curve(None) else {
            out.push(missing("fig8_exact_gibbs", "Fig. 8", "exact Gibbs' curve"));
            return out;
        };
        let early = |c: &fig78::JointCurve| c.l1.get(c.l1.len() / 3).copied().unwrap_or(f64::NAN);
        let at_end = |c: &fig78::JointCurve| last(&c.l1);
        let line = |f: &dyn Fn(&fig78::JointCurve) -> f64| {
            g.curves
                .iter()
                .map(|c| format!("{}: {}", c.label(), fmt_sig(f(c), 3)))
                .collect::<Vec<_>>()
                .join("; ")
        };
        out.push(Claim::new(
            "fig8_small_epsilon_faster_early",
            "Fig. 8: \"For small ε … more samples in the same amount of time … so the error decays faster in the beginning\"",
            format!(
                "L1 at {} evaluations: {} (the test needs most of the {} factors of a variable, so small ε buys few extra sweeps)",
                fmt_sig(ex.evals.get(ex.evals.len() / 3).copied().unwrap_or(f64::NAN), 2),
                line(&early),
                fmt_sig(g.factors_per_variable as f64, 3)
            ),
            "every ε ≤ 0.05: L1 at a third of the budget < exact Gibbs' (no Monte Carlo error of the L1 errors is measured)",
            g.curves
                .iter()
                .filter(|c| c.epsilon.is_some_and(|e| e <= 0.05))
                .all(|c| early(c) < early(ex)),
        ));
        let floors: Vec<f64> =
            g.curves.iter().filter(|c| c.epsilon.is_some_and(|e| e >= 0.05)).map(at_end).collect();
        let exact = at_end(ex);
        out.push(Claim::new(
            "fig8_bias_floor_above_exact_gibbs",
            "Fig. 8: \"these plots converge towards their bias floor while the exact Gibbs sampler out-performs all the approximate methods\" (at long run times)",
            format!(
                "L1 at the budget ({} evaluations): {} (truth's own error ≈ {})",
                fmt_sig(g.sizes.budget as f64, 2),
                line(&at_end),
                fmt_sig(g.truth_l1_floor, 2)
            ),
            format!(
                "every ε ≥ 0.05 (≥ 5 values): L1 at the budget > {FLOOR_FACTOR} × exact Gibbs', and rising with ε"
            ),
            floors.len() >= 5
                && floors.iter().all(|&l| l > FLOOR_FACTOR * exact)
                && floors.windows(2).all(|w| w[1] > w[0]),
        ));
        out
    }

    fn figures(&self) -> Vec<(&'static str, Figure)> {
        vec![
            ("fig7_conditionals.svg", self.figure_conditionals()),
            ("fig8_joint_error.svg", self.figure_joint()),
        ]
    }

    fn report(&self, r: &mut Report) {
        fig78_section(self, r);
    }
}

fn fig2_section(f: &Fig2, r: &mut Report) {
    r.section("(a) Fig. 2 — data used and wrong decisions against ε");
    r.paragraph(&format!(
        "Random walk θ′ = θ + s L z with L Lᵀ the Laplace covariance and s = {} (tuned by a {}-step \
         warmup of the exact chain from the mode; acceptance {} over its second half). {} chains × \
         {} decisions per ε, started at draws from the Laplace approximation; Austerity mini-batch \
         m = {} (first batch m). A decision is wrong when it differs from the exact test's on the \
         same u and proposal.",
        fmt_sig(f.scale, 4),
        f.tune_warmup,
        pct(f.tune_accept),
        f.chains,
        f.steps,
        f.test_batch
    ));
    r.table_of(
        &[
            "ε",
            "data used ± MCSE",
            "wrong ± binomial sd",
            "wrong / decisions",
            "wrong MCSE (ESS)",
            "accept",
        ],
        f.rows.iter(),
        |x| {
            vec![
                x.epsilon.to_string(),
                format!("{} ± {}", pct(x.data_fraction), pct(x.data_fraction_mcse)),
                format!("{} ± {}", pct(x.wrong_rate), pct(x.wrong_binomial_sd)),
                format!("{} / {}", x.wrong, x.decisions),
                pct(x.wrong_mcse),
                pct(x.accept),
            ]
        },
    );
    r.image("Fig. 2", "fig2_data_and_errors.svg");
}

fn fig3_section(f: &Fig3, r: &mut Report) {
    r.section("(b) Fig. 3 — risk of the predictive mean against evaluations");
    r.paragraph(&format!(
        "{} chains per ε, each given {} per-datum evaluations, started at Laplace draws; the \
         predictive mean uses one draw per ≥ {} evaluations. Truth: {} importance draws from the \
         Laplace approximation (ESS {}); largest MCSE of a true probability {}, so the truth adds \
         about {} to every risk. Risk = bias² + variance with variance = s² over the chains and \
         bias² = (p̄ − p)² − s²/C, the unbiased estimate of one chain's squared bias (so it can be \
         slightly negative when the bias is below the noise).",
        f.chains,
        fmt_sig(f.budget as f64, 3),
        f.thin_evals,
        f.truth_draws,
        fmt_sig(f.truth_ess, 4),
        fmt_sig(f.truth_max_mcse, 2),
        fmt_sig(f.truth_risk_floor, 2)
    ));
    r.table_of(
        &[
            "ε",
            "steps per chain",
            "data per test",
            "accept",
            "risk",
            "bias² ± jackknife se",
            "variance",
            "slope (last decade) ± jackknife se",
        ],
        f.curves.iter(),
        |c| {
            let last = |v: &Vec<f64>| fmt_sig(v.last().copied().unwrap_or(f64::NAN), 3);
            vec![
                c.epsilon.to_string(),
                fmt_sig(c.steps, 4),
                pct(c.data_fraction),
                pct(c.accept),
                last(&c.risk),
                format!("{} ± {}", last(&c.bias2), fmt_sig(c.bias2_jackknife_se, 2)),
                last(&c.variance),
                format!(
                    "{} ± {}",
                    fmt_sig(c.slope_last_decade, 3),
                    fmt_sig(c.slope_jackknife_se, 2)
                ),
            ]
        },
    );
    r.image("Fig. 3", "fig3_risk.svg");
}

fn fig56_section(f: &Fig56, r: &mut Report) {
    r.section("(c) Figs. 5–6 — SGLD, MH-corrected and Austerity-corrected SGLD");
    r.paragraph(&format!(
        "KDD99-like logistic regression, N = {}, d = {}; SGLD minibatch n = Austerity mini-batch \
         m = {} (N/20). Step sizes h = c·λ_min with λ_min = {} the smallest eigenvalue of the \
         Laplace covariance (largest true variance {}). {} chains per method and step size, each \
         given {} evaluations, started at Laplace draws. Truth: {} importance draws (ESS {}) with \
         the Laplace moments as control variates; its own expected L1 error ≈ {} (Σ var = {}).",
        f.n,
        f.d,
        f.batch,
        fmt_sig(f.lambda_min, 3),
        fmt_sig(f.max_variance, 3),
        f.chains,
        fmt_sig(f.budget as f64, 3),
        f.truth_draws,
        fmt_sig(f.truth_ess, 4),
        fmt_sig(f.truth_l1_floor, 2),
        fmt_sig(f.sum_variance, 3)
    ));
    for s in &f.steps {
        let rows: Vec<Vec<String>> = s
            .curves
            .iter()
            .map(|c| {
                vec![
                    c.method.label(),
                    fmt_sig(c.l1.last().copied().unwrap_or(f64::NAN), 3),
                    fmt_sig(c.pooled_l1, 3),
                    fmt_sig(c.mean_variance_ratio, 3),
                    format!(
                        "{} ± {}",
                        fmt_sig(c.second_moment_ratio, 3),
                        fmt_sig(c.second_moment_ratio_mcse, 2)
                    ),
                    pct(c.accept),
                    fmt_sig(c.steps, 3),
                    fmt_sig(c.evals_per_step, 4),
                    pct(c.test_data_fraction),
                ]
            })
            .collect();
        r.paragraph(&format!("**h = {} λ_min = {}**", s.factor, fmt_sig(s.step_size, 3)));
        r.table(
            &[
                "method",
                "L1 error (mean over chains)",
                "pooled L1",
                "pooled var / true var",
                "E(θ−μ)²/var ± MCSE",
                "accept",
                "steps per chain",
                "evals per step",
                "data per test",
            ],
            &rows,
        );
    }
    r.image("Figs. 5-6", "fig5_6_sgld_variance_error.svg");
}

fn fig78_section(g: &Fig78, r: &mut Report) {
    let s = &g.sizes;
    r.section("(d) Figs. 7–8 — approximate Gibbs on the three-way MRF");
    r.paragraph(&format!(
        "D = {} variables, N_i = {} factors (pairs) per variable, Austerity mini-batch m = {} pairs. \
         Truth: {} exact Gibbs chains × {} sweeps (after {} burn-in) from random states; flip rate \
         {}, bulk ESS of the number of ones {}, R-hat {}; L1 distance between two reference chains \
         {} (truth's own error ≈ {}). Fig. 7: {} (state, variable) pairs from the reference chains, \
         spread over {} probability bins, {} repetitions each ({} at ε = 0.01). Fig. 8: {} chains per method from \
         random states, {} factor evaluations each, {} random 5-variable subsets.",
        s.d,
        g.factors_per_variable,
        s.batch,
        s.reference_chains,
        s.reference_sweeps,
        s.reference_burn_in,
        pct(g.reference_flip_rate),
        fmt_sig(g.reference_ess, 3),
        fmt_sig(g.reference_rhat, 4),
        fmt_sig(g.reference_split_l1, 3),
        fmt_sig(g.truth_l1_floor, 2),
        g.points.len(),
        s.pair_bins,
        s.reps,
        s.reps_smallest_epsilon,
        s.chains,
        fmt_sig(s.budget as f64, 3),
        s.subsets
    ));
    r.table_of(
        &[
            "ε",
            "max abs error",
            "max binomial sd",
            "mean error (P > ½)",
            "mean error (P < ½)",
            "factors used",
        ],
        g.conditional_errors.iter(),
        |c| {
            vec![
                c.epsilon.to_string(),
                fmt_sig(c.max_abs_error, 3),
                fmt_sig(c.max_binomial_sd, 2),
                fmt_sig(c.mean_error_above_half, 2),
                fmt_sig(c.mean_error_below_half, 2),
                pct(c.fraction_used),
            ]
        },
    );
    r.image("Fig. 7", "fig7_conditionals.svg");
    r.table_of(
        &["method", "L1 error at the budget", "sweeps per chain", "factors used per update"],
        g.curves.iter(),
        |c| {
            vec![
                c.label(),
                fmt_sig(c.l1.last().copied().unwrap_or(f64::NAN), 3),
                fmt_sig(c.sweeps, 4),
                pct(c.fraction_used),
            ]
        },
    );
    r.image("Fig. 8", "fig8_joint_error.svg");
}
