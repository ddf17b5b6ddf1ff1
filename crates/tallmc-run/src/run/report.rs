//! The run report printed on stderr at the end of every `tallmc sample`, and the warnings
//! (in the words CmdStan and rstan users know) also written to summary.json.

use std::fmt::Write as _;

use tallmc_diagnostics::Summary;

use super::context::{Outcome, write_json};
use crate::spec::{RunSpec, SamplerKind};

/// R-hat above this means the chains have not mixed (Vehtari et al. 2021).
pub(crate) const RHAT_LIMIT: f64 = 1.01;
/// Bulk ESS below this many per chain makes means and quantiles unreliable (Vehtari et al. 2021).
pub(crate) const ESS_PER_CHAIN: f64 = 100.0;
/// A subsampling sampler that looks at this fraction of the data per iteration saves nothing
/// over its exact counterpart.
pub(crate) const DATA_FRACTION_LIMIT: f64 = 0.9;
/// A stochastic-gradient chain whose draws spread this many times wider than the Laplace
/// approximation (accurate for tall data) is dominated by its step size.
pub(crate) const SD_RATIO_LIMIT: f64 = 10.0;
/// Austerity draws spreading this many times wider than the Laplace approximation: its
/// approximate decisions, not the posterior, set the spread. (Measured on a 37,591-row,
/// 22-parameter collinear logistic regression: at ε = 0.05 every sd came out 1.9–2.1 times the
/// exact one; at ε = 0 the ratio was 0.93–1.04.)
pub(crate) const AUSTERITY_SD_RATIO_LIMIT: f64 = 1.5;
/// Rows of the parameter table.
const MAX_ROWS: usize = 8;

/// What the report and the warnings need to know about a finished (or interrupted) run.
pub(crate) struct RunFacts<'a> {
    pub(crate) sampler: SamplerKind,
    /// The sampler's name (`hmc-ecs`).
    pub(crate) sampler_name: String,
    pub(crate) n: usize,
    pub(crate) chains: usize,
    /// Draws asked for per chain.
    pub(crate) draws_asked: usize,
    /// Draws made per chain.
    pub(crate) draws_made: Vec<usize>,
    pub(crate) parameters: &'a [Summary],
    pub(crate) divergences: usize,
    /// Post-warmup transitions that stopped at the tree-depth limit, and the limit (NUTS only).
    pub(crate) depth_limit: Option<(usize, usize)>,
    /// Mean fraction of the N data points looked at per iteration (per proposal for the
    /// continuous-time samplers); `None` when it does not apply.
    pub(crate) data_fraction: Option<f64>,
    /// The most rows one step read (discrete-time kernels).
    pub(crate) max_rows: Option<u64>,
    /// What `data_fraction` is per: "iteration" or "proposal" (continuous time).
    pub(crate) step_word: &'static str,
    /// What `data_fraction` counts: "rows" (discrete-time kernels: the rows a step read) or
    /// "per-datum evaluations" (continuous time: terms, gradients and Hessians, so ZZ-Taylor's
    /// one row per proposal counts 3).
    pub(crate) data_unit: &'static str,
    pub(crate) evals_total: u64,
    pub(crate) evals_per_draw: f64,
    pub(crate) wall_seconds: f64,
    pub(crate) interrupted: bool,
    /// The output directory (chain_k.csv and summary.json).
    pub(crate) out_dir: Option<&'a std::path::Path>,
}

impl SamplerKind {
    /// What to change so that the sampler looks at less data per iteration.
    fn smaller_subsample_hint(self) -> &'static str {
        match self {
            Self::Austerity => "a larger --epsilon or a smaller --batch",
            Self::Confidence => {
                "a larger --delta, --cv (Taylor proxies) or a smaller --first-batch"
            }
            Self::Sgld | Self::Sghmc | Self::Sgnht | Self::Sbps | Self::Psbps => {
                "a smaller --batch"
            }
            Self::HmcEcs | Self::HmcEcsSigned => "a smaller --subsample",
            Self::Smh => "--order 2, or a proposal scale adapted to a higher acceptance",
            Self::Tunamh => "smh or mh-ss (control variates at the mode), or a smaller --chi",
            Self::MhSs => "smh --order 2",
            _ => "an exact sampler",
        }
    }
}

/// The warnings of a run, one sentence each, in the words of CmdStan's and rstan's.
pub(crate) fn warnings(f: &RunFacts<'_>) -> Vec<String> {
    let mut w = Vec::new();
    if f.interrupted {
        let made = f.draws_made.iter().copied().min().unwrap_or(0);
        w.push(format!(
            "The run was interrupted after {made} of {} draws per chain: the summaries use the \
             draws made so far (every CSV file was cut to that many so that the chains line up).",
            f.draws_asked
        ));
    }
    let high_rhat: Vec<&Summary> = f.parameters.iter().filter(|p| p.rhat > RHAT_LIMIT).collect();
    if let Some(worst) = high_rhat.iter().map(|p| p.rhat).reduce(f64::max) {
        w.push(format!(
            "The largest R-hat is {}, indicating chains have not mixed (R-hat greater \
             than {RHAT_LIMIT} for {}). Running the chains for more iterations may help. See \
             https://mc-stan.org/misc/warnings.html#r-hat",
            rhat_text(worst),
            name_list(&high_rhat, |p| rhat_text(p.rhat))
        ));
    }
    let ess_limit = ESS_PER_CHAIN * f.chains as f64;
    let low_ess: Vec<&Summary> =
        f.parameters.iter().filter(|p| p.ess_bulk.is_nan() || p.ess_bulk < ess_limit).collect();
    if !low_ess.is_empty() {
        w.push(format!(
            "Bulk Effective Samples Size (ESS) is too low (fewer than {ESS_PER_CHAIN} per chain, \
             {ess_limit} in all, for {}), indicating posterior means and medians may be \
             unreliable. Running the chains for more iterations may help. See \
             https://mc-stan.org/misc/warnings.html#bulk-ess",
            name_list(&low_ess, |p| format!("{:.0}", p.ess_bulk))
        ));
    }
    if let Some((hits, max_depth)) = f.depth_limit
        && hits > 0
    {
        let total: usize = f.draws_made.iter().sum();
        w.push(format!(
            "{hits} of {total} transitions after warmup ({:.1}%) hit the maximum treedepth limit \
             of {max_depth} (2^{max_depth} − 1 leapfrog steps): those trajectories stopped before \
             turning around, which slows exploration. Increasing --max-depth may help. See \
             https://mc-stan.org/misc/warnings.html#maximum-treedepth",
            100.0 * hits as f64 / total.max(1) as f64
        ));
    }
    if f.divergences > 0 {
        let total: usize = f.draws_made.iter().sum();
        let hint = match f.sampler {
            SamplerKind::Hmc
            | SamplerKind::Nuts
            | SamplerKind::HmcEcs
            | SamplerKind::HmcEcsSigned => " Increasing --target-accept closer to 1 may help.",
            SamplerKind::Sgld | SamplerKind::Sghmc | SamplerKind::Sgnht => {
                " A smaller --step-size may help."
            }
            _ => "",
        };
        w.push(format!(
            "There were {} divergent transitions after warmup ({:.1}% of {total} draws): the \
             sampler could not explore the whole posterior and the draws may be biased.{hint} \
             See https://mc-stan.org/misc/warnings.html#divergent-transitions-after-warmup",
            f.divergences,
            100.0 * f.divergences as f64 / total.max(1) as f64
        ));
    }
    if let Some(fraction) = f.data_fraction
        && f.sampler.subsamples()
        && fraction >= DATA_FRACTION_LIMIT
    {
        w.push(format!(
            "tallmc sample {} looked at {:.0}% of the N = {} data points per {}: no saving over \
             exact MH (rwm or hmc cost about as much and are exact). Try {}.",
            f.sampler_name,
            100.0 * fraction,
            f.n,
            f.step_word,
            f.sampler.smaller_subsample_hint()
        ));
    }
    w
}

/// For the approximate samplers whose spread their own settings can inflate: a warning when
/// some parameter's sd exceeds a limit times its Laplace sd (`laplace_sd`, in parameter order)
/// — [`SD_RATIO_LIMIT`] for the uncorrected stochastic-gradient samplers (their step size sets
/// the spread), [`AUSTERITY_SD_RATIO_LIMIT`] for Austerity (its ε does).
pub(crate) fn too_wide(f: &RunFacts<'_>, laplace_sd: &[f64]) -> Option<String> {
    let (limit, cause) = if f.sampler.is_stochastic_gradient() {
        (
            SD_RATIO_LIMIT,
            "The step size, not the posterior, sets this chain's spread: try a smaller \
             --step-size (or --cv).",
        )
    } else if f.sampler == SamplerKind::Austerity {
        (
            AUSTERITY_SD_RATIO_LIMIT,
            "Austerity's approximate accept/reject decisions, not the posterior, widened the \
             draws: try a smaller --epsilon (0 is exact MH) or the confidence sampler.",
        )
    } else {
        return None;
    };
    let wide: Vec<(&Summary, f64)> = f
        .parameters
        .iter()
        .zip(laplace_sd)
        .map(|(p, s)| (p, p.sd / s))
        .filter(|(_, r)| *r > limit)
        .collect();
    let (worst, ratio) = wide.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1))?;
    let times = if ratio < 10.0 { format!("{ratio:.1}") } else { format!("{ratio:.0}") };
    Some(format!(
        "The draws spread far wider than the posterior: {} has sd {:.4e} where the Laplace \
         approximation has {:.4e} ({times} times; {} of {} parameters over {limit} times). \
         {cause}",
        worst.name,
        worst.sd,
        worst.sd / ratio,
        wide.len(),
        f.parameters.len()
    ))
}

/// "a (v), b (v), …": at most five names.
fn name_list(ps: &[&Summary], value: impl Fn(&Summary) -> String) -> String {
    let mut s = ps
        .iter()
        .take(5)
        .map(|p| format!("{} ({})", p.name, value(p)))
        .collect::<Vec<_>>()
        .join(", ");
    if ps.len() > 5 {
        let _ = write!(s, " and {} more", ps.len() - 5);
    }
    s
}

/// The parameters to show: all of them if few, otherwise the worst by R-hat and by bulk ESS,
/// in parameter order.
fn worst_rows(ps: &[Summary]) -> Vec<usize> {
    if ps.len() <= MAX_ROWS {
        return (0..ps.len()).collect();
    }
    let mut by_rhat: Vec<usize> = (0..ps.len()).collect();
    // NaN R-hat (one chain) sorts last.
    by_rhat.sort_by(|&a, &b| {
        let key = |i: usize| if ps[i].rhat.is_nan() { f64::NEG_INFINITY } else { ps[i].rhat };
        key(b).total_cmp(&key(a))
    });
    let mut by_ess: Vec<usize> = (0..ps.len()).collect();
    by_ess.sort_by(|&a, &b| ps[a].ess_bulk.total_cmp(&ps[b].ess_bulk));
    let mut rows: Vec<usize> = by_rhat[..MAX_ROWS / 2].to_vec();
    for i in by_ess {
        if rows.len() == MAX_ROWS {
            break;
        }
        if !rows.contains(&i) {
            rows.push(i);
        }
    }
    rows.sort_unstable();
    rows
}

/// An R-hat for a sentence: three decimals near 1, scientific notation for the huge values of
/// chains that never met (`2.4e14`, not `240000000000000.000`).
pub(crate) fn rhat_text(rhat: f64) -> String {
    if rhat.is_finite() && rhat.abs() >= 100.0 {
        format!("{rhat:.2e}")
    } else {
        format!("{rhat:.3}")
    }
}

/// `x` with about four significant digits, in a column of width 10.
fn num(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() {
        format!("{x:>10}")
    } else if a != 0.0 && !(1e-3..1e6).contains(&a) {
        format!("{x:>10.3e}")
    } else {
        let decimals = if a == 0.0 { 0 } else { (3 - a.log10().floor() as i32).clamp(0, 6) };
        format!("{x:>10.*}", decimals as usize)
    }
}

/// The report's text: the worst parameters, then divergences, data use, cost and time, then
/// the warnings.
pub(crate) fn render(f: &RunFacts<'_>, warnings: &[String]) -> String {
    let mut s = String::new();
    let made: usize = f.draws_made.iter().sum();
    let _ = writeln!(
        s,
        "tallmc: {} on {} chains, {made} draws{}",
        f.sampler_name,
        f.chains,
        if f.interrupted { " (interrupted)" } else { "" }
    );
    if f.parameters.is_empty() {
        let _ = writeln!(s, "  too few draws to summarize (ESS and R-hat need 4 per chain)");
    } else {
        let rows = worst_rows(f.parameters);
        let width = rows.iter().map(|&i| f.parameters[i].name.len()).max().unwrap_or(0).max(9);
        if rows.len() < f.parameters.len() {
            let _ = writeln!(
                s,
                "  the {} parameters with the highest R-hat or lowest bulk ESS, of {}:",
                rows.len(),
                f.parameters.len()
            );
        }
        let _ = writeln!(
            s,
            "  {:<width$} {:>10} {:>10} {:>10} {:>10}",
            "parameter", "mean", "sd", "ess_bulk", "r_hat"
        );
        for i in rows {
            let p = &f.parameters[i];
            let _ = writeln!(
                s,
                "  {:<width$} {} {} {:>10.0} {:>10}",
                p.name,
                num(p.mean),
                num(p.sd),
                p.ess_bulk,
                rhat_text(p.rhat)
            );
        }
    }
    let _ = writeln!(s, "  divergences: {} of {made} draws", f.divergences);
    if let Some(fraction) = f.data_fraction {
        let (word, percent) = (f.step_word, 100.0 * fraction);
        // Three decimals, or two significant digits below 0.01 % (a Poisson minibatch of a
        // fraction of a row on average would read 0.000 %).
        let shown = if percent >= 0.01 || percent == 0.0 {
            format!("{percent:.3}")
        } else {
            format!("{percent:.1e}")
        };
        let amount = fraction * f.n as f64;
        let most = f.max_rows.map(|m| format!(", at most {m}")).unwrap_or_default();
        let _ = writeln!(
            s,
            "  data per {word}: {shown}% of N = {} ({amount:.1} {} on average{most})",
            f.n, f.data_unit
        );
    }
    let _ = writeln!(
        s,
        "  per-datum evaluations: {} in all, {:.0} per draw",
        f.evals_total, f.evals_per_draw
    );
    let _ = writeln!(s, "  wall time: {:.2} s", f.wall_seconds);
    let last = match f.chains {
        1 => String::new(),
        k => format!(" … chain_{k}.csv"),
    };
    if let Some(dir) = f.out_dir {
        let _ = writeln!(s, "  output: {}: chain_1.csv{last}, summary.json", dir.display());
    }
    for w in warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    s
}

/// Ends a run: writes its summary (`file`) to summary.json when the run has an output
/// directory, prints the report unless told not to, and returns how the run ended with the
/// summary as JSON.
pub(crate) fn deliver<T: serde::Serialize>(
    spec: &RunSpec, file: &T, facts: &RunFacts<'_>, warnings: &[String],
) -> anyhow::Result<(Outcome, serde_json::Value)> {
    if let Some(dir) = &spec.output.dir {
        write_json(&dir.join("summary.json"), file)?;
    }
    if spec.execution.report {
        print(facts, warnings);
    }
    let outcome = if facts.interrupted { Outcome::Interrupted } else { Outcome::Finished };
    Ok((outcome, serde_json::to_value(file)?))
}

/// Prints the report on stderr (a closed stderr is not an error of the run).
pub(crate) fn print(f: &RunFacts<'_>, warnings: &[String]) {
    use std::io::Write as _;
    let _ = std::io::stderr().write_all(render(f, warnings).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(name: &str, rhat: f64, ess: f64) -> Summary {
        Summary {
            name: name.into(),
            mean: 1.0,
            sd: 0.1,
            q5: 0.8,
            q50: 1.0,
            q95: 1.2,
            mcse_mean: 0.01,
            mcse_sd: 0.01,
            ess_bulk: ess,
            ess_tail: ess,
            rhat,
        }
    }

    fn facts(ps: &[Summary]) -> RunFacts<'_> {
        RunFacts {
            sampler: SamplerKind::Austerity,
            sampler_name: "austerity".into(),
            n: 1000,
            chains: 4,
            draws_asked: 1000,
            draws_made: vec![1000; 4],
            parameters: ps,
            divergences: 0,
            depth_limit: None,
            data_fraction: Some(0.1),
            max_rows: Some(120),
            step_word: "iteration",
            data_unit: "rows",
            evals_total: 10,
            evals_per_draw: 1.0,
            wall_seconds: 1.0,
            interrupted: false,
            out_dir: Some(std::path::Path::new("out")),
        }
    }

    #[test]
    fn a_healthy_run_has_no_warnings() {
        let ps = [summary("mu", 1.001, 2000.0)];
        assert!(warnings(&facts(&ps)).is_empty());
    }

    #[test]
    fn the_table_shows_the_worst_eight() {
        let ps: Vec<Summary> = (0..20)
            .map(|i| summary(&format!("theta.{i}"), 1.0 + i as f64 * 1e-4, 5000.0))
            .collect();
        let mut ps = ps;
        ps[3].ess_bulk = 10.0;
        let rows = worst_rows(&ps);
        assert_eq!(rows.len(), MAX_ROWS);
        assert!(rows.contains(&3) && rows.contains(&19));
        let text = render(&facts(&ps), &[]);
        assert!(text.contains("theta.3 ") && !text.contains("theta.4 "), "{text}");
        assert!(
            text.contains("  output: out: chain_1.csv … chain_4.csv, summary.json\n"),
            "{text}"
        );
    }

    #[test]
    fn numbers_keep_four_significant_digits() {
        assert_eq!(num(1.23456).trim(), "1.235");
        assert_eq!(num(-0.0123456).trim(), "-0.01235");
        assert_eq!(num(12345.6).trim(), "12346");
        assert_eq!(num(1.5e-7).trim(), "1.500e-7");
    }

    /// Chains that never met have huge R-hats: a sentence shows them in scientific notation,
    /// not as 980685769208198.500.
    #[test]
    fn huge_r_hats_are_written_in_scientific_notation() {
        assert_eq!(rhat_text(1.0123), "1.012");
        assert_eq!(rhat_text(980685769208198.5), "9.81e14");
        assert_eq!(rhat_text(f64::NAN), "NaN");
        let ps = [summary("mu", 980685769208198.5, 2000.0)];
        let w = warnings(&facts(&ps)).join(" ");
        assert!(w.contains("The largest R-hat is 9.81e14") && w.contains("mu (9.81e14)"), "{w}");
    }
}
