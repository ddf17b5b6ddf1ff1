//! The paper's claims about Fig. 4 beside the measurements, each decided once (the report's
//! verdicts and the tests read the same [`Claim`] values).

use super::*;
use crate::audit::max_wrong_decisions;
use crate::part::{Claim, Z_MAX, z};
use crate::report::fmt_sig;

/// Relative bias of E(σ) that counts as "several percent" (BDH Fig. 4(c): "fails
/// dramatically"; measured −5.8 to −6.4 % with t₀ = 500 and −28 to −37 % with t₀ = 2 at seeds
/// 1, 101, …, 601, while the posterior's relative sd is 0.22 %).
pub const MIN_LOGNORMAL_BIAS: f64 = 0.02;
/// Relative shift of E(σ) read as Fig. 4(a)'s "off by 7 %" (less than half of it).
pub const MIN_GAUSSIAN_SHIFT: f64 = 0.03;
/// R-hat below which the confidence sampler's chains count as mixed.
pub const MAX_RHAT: f64 = 1.05;
/// Acceptance range of the exactness check's chains (the chains move and are tuned).
pub const EXACTNESS_ACCEPT: (f64, f64) = (0.2, 0.8);
/// Mean data fraction above which a sampler "essentially requires the whole data set".
pub const WHOLE_DATA_FRACTION: f64 = 0.95;

fn pct(x: f64) -> String {
    format!("{} %", fmt_sig(100.0 * x, 2))
}

impl MethodRun {
    /// z of the mean of σ against the closed form, in units of this run's MCSE.
    pub fn z_sigma_mean(&self, truth: &ClosedForm) -> f64 {
        (self.sigma.mean - truth.sigma_mean) / self.sigma.mcse_mean
    }

    /// The z-scores of the mean and sd of σ and μ against the closed form, then against
    /// `exact` (combined MCSE).
    pub fn z_scores(&self, truth: &ClosedForm, exact: &MethodRun) -> [f64; 8] {
        let (c, e, t) = (self, exact, truth);
        [
            (c.sigma.mean - t.sigma_mean) / c.sigma.mcse_mean,
            (c.sigma.sd - t.sigma_sd) / c.sigma.mcse_sd,
            (c.mu.mean - t.mu_mean) / c.mu.mcse_mean,
            (c.mu.sd - t.mu_sd) / c.mu.mcse_sd,
            z(c.sigma.mean, c.sigma.mcse_mean, e.sigma.mean, e.sigma.mcse_mean),
            z(c.sigma.sd, c.sigma.mcse_sd, e.sigma.sd, e.sigma.mcse_sd),
            z(c.mu.mean, c.mu.mcse_mean, e.mu.mean, e.mu.mcse_mean),
            z(c.mu.sd, c.mu.mcse_sd, e.mu.sd, e.mu.mcse_sd),
        ]
    }

    /// "mean of σ off by …": the relative bias, its z and the sd ratio, for the tables.
    fn bias_text(&self, truth: &ClosedForm) -> String {
        format!(
            "mean of σ off by {} ({} MCSE); sd of σ × {} of the closed form's",
            pct(self.sigma_relative_bias(truth)),
            fmt_sig(self.z_sigma_mean(truth), 3),
            fmt_sig(self.sigma.sd / truth.sigma_sd, 3)
        )
    }
}

impl DecisionAudit {
    /// Wrong decisions counted.
    pub fn wrong(&self) -> f64 {
        self.wrong_fraction * self.decisions as f64
    }
}

impl Toy {
    fn audit(&self, data: ToyData, m: Method) -> Option<&DecisionAudit> {
        self.audits.iter().find(|a| a.data == data && a.method == m)
    }

    /// The claims of Fig. 4, the decision audit and the exactness check.
    pub(super) fn all_claims(&self) -> Vec<Claim> {
        let mut claims = Vec::new();
        let not_run = || "not run".to_string();
        if let Some(p) = self.problem(ToyData::Gaussian) {
            let t = &p.truth;
            let a2 = p.run(Method::AusterityT2);
            let shifted = a2.is_some_and(|r| {
                r.sigma_relative_bias(t).abs() >= MIN_GAUSSIAN_SHIFT
                    && r.z_sigma_mean(t).abs() > Z_MAX
            });
            claims.push(Claim::new(
                "fig4a_austerity_shifts_the_sigma_marginal",
                "Fig. 4(a): Austerity (ε = 0.05, t₀ = 2) on N(0, 0.1²) data: the maximum of the σ marginal is off by 7 % from the empirical value",
                a2.map_or_else(not_run, |r| r.bias_text(t)),
                format!("|relative bias of E(σ)| ≥ {} and more than {Z_MAX} MCSE", pct(MIN_GAUSSIAN_SHIFT)),
                shifted,
            ));
            // t₀ = 500 against t₀ = 2: |shift| and sd of σ both smaller, by more than Z_MAX
            // combined MCSE.
            let better = match (a2, p.run(Method::AusterityT500)) {
                (Some(a), Some(b)) => {
                    let shift = ((a.sigma.mean - t.sigma_mean).abs()
                        - (b.sigma.mean - t.sigma_mean).abs())
                        / a.sigma.mcse_mean.hypot(b.sigma.mcse_mean);
                    let sd = z(a.sigma.sd, a.sigma.mcse_sd, b.sigma.sd, b.sigma.mcse_sd);
                    Some((shift, sd))
                }
                _ => None,
            };
            claims.push(Claim::new(
                "fig4b_first_batch_500_is_better",
                "Fig. 4(b): starting each iteration at t = 500 gives better agreement and a smaller support",
                match (p.run(Method::AusterityT500), better) {
                    (Some(r), Some((shift, sd))) => format!(
                        "{}; against t₀ = 2: shift smaller by {} and sd smaller by {} combined MCSE",
                        r.bias_text(t),
                        fmt_sig(shift, 2),
                        fmt_sig(sd, 2)
                    ),
                    _ => not_run(),
                },
                format!("|shift| and sd of σ both smaller than t₀ = 2's by more than {Z_MAX} combined MCSE"),
                better.is_some_and(|(shift, sd)| shift > Z_MAX && sd > Z_MAX),
            ));
        }
        if let Some(p) = self.problem(ToyData::Lognormal) {
            let t = &p.truth;
            let (a2, a5) = (p.run(Method::AusterityT2), p.run(Method::AusterityT500));
            // t₀ = 500 mixes well enough for its MCSE to be a unit (σ ESS ≈ 25–260 at seeds
            // 1–601); t₀ = 2's chains are nearly stuck (σ ESS ≈ 6–46, R-hat up to 1.5), so only
            // the size of its bias is judged.
            let biased = |r: &MethodRun| r.sigma_relative_bias(t).abs() > MIN_LOGNORMAL_BIAS;
            let holds = a5.is_some_and(|r| biased(r) && r.z_sigma_mean(t).abs() > Z_MAX)
                && a2.is_some_and(biased);
            claims.push(Claim::new(
                "fig4c_austerity_fails_on_lognormal_data",
                "Fig. 4(c): on logN(0, 2) data Austerity fails dramatically",
                format!(
                    "t₀ = 2: {}. t₀ = 500: {}",
                    a2.map_or_else(not_run, |r| r.bias_text(t)),
                    a5.map_or_else(not_run, |r| r.bias_text(t))
                ),
                format!(
                    "|relative bias of E(σ)| > {} for both; for t₀ = 500 also more than {Z_MAX} of its MCSE (t₀ = 2's chains are nearly stuck, their MCSE is no unit)",
                    pct(MIN_LOGNORMAL_BIAS)
                ),
                holds,
            ));
        }
        let fmt_audit = |data: ToyData, m: Method| {
            self.audit(data, m).map_or("–".into(), |a| {
                format!(
                    "{} of {} (compatible up to {})",
                    pct(a.wrong_fraction),
                    a.decisions,
                    fmt_sig(
                        max_wrong_decisions(a.decisions, CONFIDENCE_DELTA) / a.decisions as f64,
                        2
                    )
                )
            })
        };
        let conf_ok = ToyData::ALL.iter().all(|&d| {
            self.audit(d, Method::Confidence)
                .is_some_and(|a| a.wrong() <= max_wrong_decisions(a.decisions, CONFIDENCE_DELTA))
        });
        claims.push(Claim::new(
            "confidence_decisions_wrong_with_probability_at_most_delta",
            "§3: the confidence sampler's decisions are wrong with probability ≤ δ = 0.01",
            ToyData::ALL
                .iter()
                .map(|&d| format!("{}: {}", d.label(), fmt_audit(d, Method::Confidence)))
                .collect::<Vec<_>>()
                .join("; "),
            "wrong decisions (same u, same θ′ as exact MH) ≤ the largest count compatible with Binomial(decisions, δ) at level 1e-6 (Bernstein), on both data sets",
            conf_ok,
        ));
        let aust_count = |d: ToyData, m: Method| {
            self.audit(d, m)
                .map_or("–".into(), |a| format!("{} of {}", pct(a.wrong_fraction), a.decisions))
        };
        let aust_bad = [Method::AusterityT2, Method::AusterityT500].iter().all(|&m| {
            self.audit(ToyData::Lognormal, m).is_some_and(|a| {
                a.wrong() > max_wrong_decisions(a.decisions, 2.0 * AUSTERITY_EPSILON)
            })
        });
        claims.push(Claim::new(
            "austerity_error_not_controlled_by_epsilon",
            "§4.1: Austerity's asymptotic confidence intervals give no control of the error",
            ToyData::ALL
                .iter()
                .map(|&d| {
                    format!(
                        "{}: wrong decisions — t₀ = 2: {}, t₀ = 500: {}",
                        d.label(),
                        aust_count(d, Method::AusterityT2),
                        aust_count(d, Method::AusterityT500)
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
            "on logN(0, 2) data, both t₀: wrong decisions above the largest count compatible with Binomial(decisions, 2ε) at level 1e-6 (Bernstein)",
            aust_bad,
        ));
        claims.push(self.agreement_claim());
        claims.push(self.exact_mh_claim());
        let frac_rows: Vec<String> = self
            .problems
            .iter()
            .filter_map(|p| {
                let c = p.run(Method::Confidence)?;
                let a = p.run(Method::AusterityT2)?;
                Some(format!(
                    "{}: confidence {} of the data per iteration ({} × exact MH's evaluations), Austerity t₀ = 2 {}",
                    p.data.label(),
                    pct(c.data_fraction),
                    fmt_sig(c.evals_per_iteration / TOY_N as f64, 3),
                    pct(a.data_fraction)
                ))
            })
            .collect();
        let lognormal_all = self
            .problem(ToyData::Lognormal)
            .and_then(|p| p.run(Method::Confidence))
            .is_some_and(|c| c.data_fraction > WHOLE_DATA_FRACTION);
        claims.push(Claim::new(
            "confidence_needs_the_whole_lognormal_data",
            "…at the price of a larger average number of samples per iteration; logN(0, 2) essentially requires the whole data set",
            frac_rows.join("; "),
            format!(
                "confidence sampler's mean data fraction on logN(0, 2) > {} (at n = 10⁵ the Gaussian data need almost all of it too)",
                pct(WHOLE_DATA_FRACTION)
            ),
            lognormal_all,
        ));
        claims.push(self.exactness_claim());
        claims
    }

    /// The confidence sampler against the closed form and exact MH, both data sets.
    fn agreement_claim(&self) -> Claim {
        let mut all_within = !self.problems.is_empty();
        let rows: Vec<String> = self
            .problems
            .iter()
            .map(|p| {
                let (Some(c), Some(e)) = (p.run(Method::Confidence), p.run(Method::ExactMh)) else {
                    all_within = false;
                    return format!("{}: not run", p.data.label());
                };
                let zs = c.z_scores(&p.truth, e);
                all_within &= zs.iter().all(|v| v.abs() < Z_MAX) && c.sigma.rhat < MAX_RHAT;
                let f = |v: f64| fmt_sig(v, 2);
                format!(
                    "{}: z vs closed form σ mean {}, sd {}, μ mean {}, sd {}; z vs exact MH σ mean {}, sd {}, μ mean {}, sd {}; σ R-hat {}",
                    p.data.label(),
                    f(zs[0]), f(zs[1]), f(zs[2]), f(zs[3]), f(zs[4]), f(zs[5]), f(zs[6]), f(zs[7]),
                    fmt_sig(c.sigma.rhat, 3)
                )
            })
            .collect();
        Claim::new(
            "confidence_matches_closed_form_and_exact_mh",
            "In each example the confidence sampler produces significantly better estimates of the marginal",
            rows.join("; "),
            format!(
                "mean and sd of σ and μ within {Z_MAX} MCSE of the closed form and {Z_MAX} combined MCSE of exact MH, on both data sets; σ R-hat < {MAX_RHAT}"
            ),
            all_within,
        )
    }

    /// Exact MH against the closed form: validates the truth and the MCSEs the other claims use.
    fn exact_mh_claim(&self) -> Claim {
        let mut holds = !self.problems.is_empty();
        let rows: Vec<String> = self
            .problems
            .iter()
            .map(|p| match p.run(Method::ExactMh) {
                Some(e) => {
                    let zs = e.z_sigma_mean(&p.truth);
                    holds &= zs.abs() < Z_MAX;
                    format!("{}: z = {}", p.data.label(), fmt_sig(zs, 2))
                }
                None => {
                    holds = false;
                    format!("{}: not run", p.data.label())
                }
            })
            .collect();
        Claim::new(
            "exact_mh_matches_closed_form",
            "(design) exact MH's mean of σ agrees with the closed-form posterior (validates the truth and the MCSEs)",
            rows.join("; "),
            format!("|z| of exact MH's E(σ) against the closed form < {Z_MAX}, on both data sets"),
            holds,
        )
    }

    /// ε = 0 and δ → 0 reproduce the exact test's chains bit for bit.
    fn exactness_claim(&self) -> Claim {
        let rows: Vec<String> = self
            .exactness
            .iter()
            .map(|e| {
                format!(
                    "{}: Austerity ε = 0 identical: {}; confidence δ = 1e-300 identical: {} ({} chains × {} iterations, acceptance {}, {} of its decisions stopped before N)",
                    e.data.label(),
                    e.austerity_identical,
                    e.confidence_identical,
                    e.chains,
                    e.warmup + e.draws,
                    fmt_sig(e.accept, 2),
                    pct(e.confidence_early_stops)
                )
            })
            .collect();
        let (lo, hi) = EXACTNESS_ACCEPT;
        let holds = self.exactness.len() == ToyData::ALL.len()
            && self.exactness.iter().all(|e| {
                e.austerity_identical && e.confidence_identical && e.accept > lo && e.accept < hi
            });
        Claim::new(
            "epsilon_zero_and_delta_to_zero_are_exact",
            "(design) ε = 0 and δ → 0 recover exact MH decision for decision (same seed → same chain)",
            rows.join("; "),
            format!(
                "both chains identical to the exact test's, bit for bit, on both data sets; the exact chains' acceptance in ({lo}, {hi})"
            ),
            holds,
        )
    }
}
