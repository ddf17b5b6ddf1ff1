//! `tallmc convert`: [`tallmc_io::convert`] with a progress bar and a one-line report.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use tallmc_io::{ConvertOptions, ConvertProgress};
use tallmc_samplers::sinks::draws::row_file::thousands;

use crate::args::ConvertArgs;

/// Runs the conversion `a` describes.
pub(crate) fn run(a: &ConvertArgs) -> Result<()> {
    let bin = a.out.with_extension("bin");
    let json = a.out.with_extension("json");
    if !a.overwrite && (bin.exists() || json.exists()) {
        bail!(
            "--out {}: {} exists; choose another name or pass --overwrite",
            a.out.display(),
            if bin.exists() { bin.display() } else { json.display() }
        );
    }
    let options = ConvertOptions {
        response: a.response.clone(),
        columns: a.columns.clone(),
        y_npy: a.y_npy.clone(),
        ..ConvertOptions::default()
    };
    let start = Instant::now();
    let bar = (!a.no_progress && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new(1000);
        bar.set_style(
            ProgressStyle::with_template("converting [{bar:30}] {percent:>3}%  {msg}  ({elapsed})")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    });
    let mut on_chunk = |p: ConvertProgress| {
        if let Some(bar) = &bar {
            let done = (p.input as f64 + p.input_fraction) / p.inputs as f64;
            bar.set_position((1000.0 * done).round() as u64);
            let input = if p.inputs > 1 {
                format!(", input {} of {}", p.input + 1, p.inputs)
            } else {
                String::new()
            };
            bar.set_message(format!("{} rows{input}", thousands(p.rows)));
        }
    };
    let report = tallmc_io::convert(&a.inputs, &a.out, &options, &mut on_chunk);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let report = report?;
    let seconds = start.elapsed().as_secs_f64();
    let names = &report.covariate_names;
    let shown = if names.len() > 8 {
        format!("{}, … {}", names[..6].join(", "), names[names.len() - 1])
    } else {
        names.join(", ")
    };
    let mut err = std::io::stderr();
    writeln!(
        err,
        "tallmc convert: {} rows × {} covariates ({shown}) and y → {} (header {}) in {seconds:.1} s",
        thousands(report.rows),
        names.len(),
        report.bin.display(),
        report.json.display(),
    )?;
    if !report.skipped_columns.is_empty() {
        let list: Vec<String> =
            report.skipped_columns.iter().map(|(n, t)| format!("{n} ({t})")).collect();
        writeln!(
            err,
            "tallmc convert: left out, not numbers: {} (name the covariates with --columns to choose)",
            list.join(", ")
        )?;
    }
    Ok(())
}
