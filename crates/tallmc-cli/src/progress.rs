//! A progress bar on stderr, drawn only when stderr is a terminal (never into a log file or a
//! test's captured output).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tallmc_samplers::Progress;

/// One bar over every chain's iterations (warmup and draws).
pub(crate) struct Bar {
    bar: Option<ProgressBar>,
    /// Iterations each chain has reported.
    done: Vec<AtomicUsize>,
}

impl Bar {
    /// A bar for `chains` chains if stderr is a terminal, otherwise one that draws nothing.
    pub(crate) fn on_terminal(chains: usize) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {percent:>3}% (eta {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar
        });
        Self { bar, done: (0..chains).map(|_| AtomicUsize::new(0)).collect() }
    }

    /// Removes the bar (before the report is printed).
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Progress for Bar {
    fn update(&self, chain: usize, done: usize, total: usize) {
        let Some(bar) = &self.bar else { return };
        let Some(seen) = self.done.get(chain) else { return };
        let length = (self.done.len() * total) as u64;
        if bar.length() != Some(length) {
            bar.set_length(length);
        }
        let before = seen.swap(done, Ordering::Relaxed);
        bar.inc(done.saturating_sub(before) as u64);
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.finish();
    }
}
