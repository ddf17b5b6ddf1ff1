//! The figure of Fig. 4: the marginals of σ.

use super::*;
use crate::figure::{Axes, Figure, Histogram, Legend, Line, RefLine, equal_width_edges};

/// `fig4_sigma_marginals.svg`: per data set, the σ histograms of every sampler with the
/// closed-form density (top), and exact MH / confidence sampler zoomed on the closed form
/// (bottom).
pub(super) fn figures(toy: &Toy) -> Vec<(&'static str, Figure)> {
    let mut fig = Figure::new()
        .with_title("Fig. 4: posterior of σ — Austerity vs confidence sampler vs exact MH")
        .with_columns(toy.problems.len().max(1));
    let mut zoomed = Vec::new();
    for p in &toy.problems {
        let t = &p.truth;
        let all: Vec<f64> = p
            .runs
            .iter()
            .flat_map(|r| r.sigma_draws.iter().copied())
            .chain([t.sigma_mean - 5.0 * t.sigma_sd, t.sigma_mean + 5.0 * t.sigma_sd])
            .collect();
        let edges = equal_width_edges(&all, 80);
        let (lo, hi) =
            (edges.first().copied().unwrap_or(0.0), edges.last().copied().unwrap_or(1.0));
        let mut axes = Axes::new()
            .with_title(format!("{}: all samplers", p.data.label()))
            .with_x_label("σ")
            .with_y_label("density")
            .with_legend(Legend::TopRight);
        for r in &p.runs {
            axes.push(Histogram::new(&r.sigma_draws, edges.clone()).with_label(r.method.label()));
        }
        axes.push(Line::from_fn(lo, hi, 800, |s| t.sigma_density(s)).with_label("closed form"));
        axes.push(RefLine::vertical(t.sample_sd).with_label("sample sd"));
        fig.push(axes);
        let (zlo, zhi) = (t.sigma_mean - 5.0 * t.sigma_sd, t.sigma_mean + 5.0 * t.sigma_sd);
        let zedges: Vec<f64> = (0..=40).map(|k| zlo + (zhi - zlo) * k as f64 / 40.0).collect();
        let mut z = Axes::new()
            .with_title(format!("{}: exact MH and confidence sampler", p.data.label()))
            .with_x_label("σ")
            .with_y_label("density")
            .with_x_range(zlo, zhi)
            .with_legend(Legend::TopRight);
        for r in p.runs.iter().filter(|r| matches!(r.method, Method::ExactMh | Method::Confidence))
        {
            z.push(Histogram::new(&r.sigma_draws, zedges.clone()).with_label(r.method.label()));
        }
        z.push(Line::from_fn(zlo, zhi, 400, |s| t.sigma_density(s)).with_label("closed form"));
        zoomed.push(z);
    }
    for z in zoomed {
        fig.push(z);
    }
    vec![("fig4_sigma_marginals.svg", fig)]
}
