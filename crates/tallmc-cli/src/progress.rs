//! Progress on stderr, drawn only when stderr is a terminal (never into a log file or a test's
//! captured output): a spinner through the setup (reading the data, Newton's method), then one
//! bar over every chain's iterations whose message counts the kernels' own setup passes (control
//! variates at θ*) until the first iteration is done.
//!
//! The setup is passes over all N rows, so its progress is counted in passes:
//! [`tallmc_core::full_data::rows_evaluated`] read every 200 ms, divided by N.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tallmc_core::full_data::rows_evaluated;
use tallmc_samplers::Progress;

/// How often the setup message is refreshed.
const TICK: Duration = Duration::from_millis(200);

/// A thread that keeps `bar`'s message at "`phase` · k.k passes over N rows" (just the phase
/// while N is not known, 0) until dropped.
struct PassTicker {
    phase: Arc<Mutex<String>>,
    rows: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl PassTicker {
    fn start(bar: ProgressBar, phase: &str, n: usize) -> Self {
        let phase = Arc::new(Mutex::new(phase.to_string()));
        let rows = Arc::new(AtomicUsize::new(n));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, r, s) = (Arc::clone(&phase), Arc::clone(&rows), Arc::clone(&stop));
        let first = rows_evaluated();
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                let what = p.lock().map(|g| g.clone()).unwrap_or_default();
                let n = r.load(Ordering::Relaxed);
                if n == 0 {
                    bar.set_message(what);
                } else {
                    let passes = (rows_evaluated() - first) as f64 / n as f64;
                    bar.set_message(format!("{what} · {passes:.1} passes over {n} rows"));
                }
                bar.tick();
                std::thread::sleep(TICK);
            }
        });
        Self { phase, rows, stop, thread: Some(thread) }
    }

    fn set_phase(&self, what: &str, n: usize) {
        if let Ok(mut p) = self.phase.lock() {
            *p = what.to_string();
        }
        self.rows.store(n, Ordering::Relaxed);
    }
}

impl Drop for PassTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A spinner through the setup ("finding the posterior mode · 2.0 passes over N rows"), on a
/// terminal only; cleared when dropped.
pub(crate) struct SetupSpinner {
    bar: Option<ProgressBar>,
    ticker: Option<PassTicker>,
}

impl SetupSpinner {
    /// A spinner starting in phase `what` (before the data, and so N, are known).
    pub(crate) fn on_terminal(what: &str, enabled: bool) -> Self {
        if !enabled || !std::io::stderr().is_terminal() {
            return Self { bar: None, ticker: None };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template("{spinner} [{elapsed_precise}] setup: {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        let ticker = PassTicker::start(bar.clone(), what, 0);
        Self { bar: Some(bar), ticker: Some(ticker) }
    }

    /// Moves to the next phase of the setup, counting passes over the `n` rows.
    pub(crate) fn phase(&self, what: &str, n: usize) {
        if let Some(t) = &self.ticker {
            t.set_phase(what, n);
        }
    }
}

impl Drop for SetupSpinner {
    fn drop(&mut self) {
        self.ticker = None;
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// One bar over every chain's iterations (warmup and draws).
pub(crate) struct Bar {
    bar: Option<ProgressBar>,
    /// Iterations each chain has reported.
    done: Vec<AtomicUsize>,
    /// Counts the kernels' setup passes until the first iteration is reported.
    setup: Mutex<Option<PassTicker>>,
    /// Whether the first iteration has been reported (the setup message is gone).
    started: AtomicBool,
}

impl Bar {
    /// A bar for `chains` chains on data with `n` rows if stderr is a terminal, otherwise one
    /// that draws nothing.
    pub(crate) fn on_terminal(chains: usize, n: usize, enabled: bool) -> Self {
        let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {percent:>3}% (eta {eta}) {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar
        });
        let setup = bar.as_ref().map(|b| PassTicker::start(b.clone(), "setting up the chains", n));
        Self {
            bar,
            done: (0..chains).map(|_| AtomicUsize::new(0)).collect(),
            setup: Mutex::new(setup),
            started: AtomicBool::new(false),
        }
    }

    /// Removes the bar (before the report is printed).
    pub(crate) fn finish(&self) {
        self.end_setup();
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    /// Stops counting setup passes and clears the message (once).
    fn end_setup(&self) {
        if !self.started.swap(true, Ordering::Relaxed) {
            if let Ok(mut s) = self.setup.lock() {
                *s = None;
            }
            if let Some(bar) = &self.bar {
                bar.set_message("");
            }
        }
    }
}

impl Progress for Bar {
    fn update(&self, chain: usize, done: usize, total: usize) {
        let Some(bar) = &self.bar else { return };
        let Some(seen) = self.done.get(chain) else { return };
        if !self.started.load(Ordering::Relaxed) {
            self.end_setup();
        }
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
