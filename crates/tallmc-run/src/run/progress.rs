//! Progress on stderr, drawn only when stderr is a terminal (never into a log file or a test's
//! captured output): a spinner through the setup (reading the data, Newton's method), then one
//! bar over every chain's iterations whose message counts the kernels' own setup passes (control
//! variates at θ*) until the first iteration is done.
//!
//! The same progress is also published to a [`RunProgress`] when the caller gives one
//! (`tallmc_run::run`'s `observer`): how the Python package draws its own bar where stderr is
//! not a terminal (a Jupyter notebook).
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

/// A run's progress, readable from another thread while the run goes on: the setup phase's
/// message, then the iterations done out of all chains' total.
#[derive(Debug, Default)]
pub struct RunProgress {
    message: Mutex<String>,
    done: AtomicUsize,
    total: AtomicUsize,
}

impl RunProgress {
    /// A progress record with nothing done yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The current message (the setup phase, empty once the chains run), the iterations done
    /// over every chain, and their total (0 until the first iteration is reported).
    pub fn snapshot(&self) -> (String, usize, usize) {
        let message = self.message.lock().map(|m| m.clone()).unwrap_or_default();
        (message, self.done.load(Ordering::Relaxed), self.total.load(Ordering::Relaxed))
    }

    fn set_message(&self, text: String) {
        if let Ok(mut m) = self.message.lock() {
            *m = text;
        }
    }
}

/// Where a run's progress goes: a bar on stderr if it is a terminal (unless `--no-progress`),
/// and the caller's [`RunProgress`] if there is one.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProgressTo {
    /// Draw on stderr when it is a terminal.
    pub(crate) terminal: bool,
    /// Publish here.
    pub(crate) observer: Option<Arc<RunProgress>>,
}

impl ProgressTo {
    /// A bar on stderr if requested and stderr is a terminal.
    fn terminal_bar(&self) -> Option<ProgressBar> {
        (self.terminal && std::io::stderr().is_terminal())
            .then(|| ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()))
    }
}

/// A thread that keeps `bar`'s message, and the observer's, at "`phase` · k.k passes over N
/// rows" (just the phase while N is not known, 0) until dropped.
struct PassTicker {
    phase: Arc<Mutex<String>>,
    rows: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl PassTicker {
    fn start(
        bar: Option<ProgressBar>, observer: Option<Arc<RunProgress>>, phase: &str, n: usize,
    ) -> Self {
        let phase = Arc::new(Mutex::new(phase.to_string()));
        let rows = Arc::new(AtomicUsize::new(n));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, r, s) = (Arc::clone(&phase), Arc::clone(&rows), Arc::clone(&stop));
        let first = rows_evaluated();
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                let what = p.lock().map(|g| g.clone()).unwrap_or_default();
                let n = r.load(Ordering::Relaxed);
                let message = if n == 0 {
                    what
                } else {
                    let passes = (rows_evaluated() - first) as f64 / n as f64;
                    format!("{what} · {passes:.1} passes over {n} rows")
                };
                if let Some(o) = &observer {
                    o.set_message(message.clone());
                }
                if let Some(bar) = &bar {
                    bar.set_message(message);
                    bar.tick();
                }
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
/// terminal only, and the same message for the observer; cleared when dropped.
pub(crate) struct SetupSpinner {
    bar: Option<ProgressBar>,
    ticker: Option<PassTicker>,
}

impl SetupSpinner {
    /// A spinner starting in phase `what` (before the data, and so N, are known).
    pub(crate) fn new(what: &str, to: &ProgressTo) -> Self {
        let bar = to.terminal_bar();
        if let Some(bar) = &bar {
            let style = ProgressStyle::with_template("{spinner} [{elapsed_precise}] setup: {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
        }
        let ticker = (bar.is_some() || to.observer.is_some())
            .then(|| PassTicker::start(bar.clone(), to.observer.clone(), what, 0));
        Self { bar, ticker }
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

/// One bar over every chain's iterations (warmup and draws), on a terminal, and the same
/// counts for the observer.
pub(crate) struct Bar {
    bar: Option<ProgressBar>,
    observer: Option<Arc<RunProgress>>,
    /// Iterations each chain has reported.
    done: Vec<AtomicUsize>,
    /// Counts the kernels' setup passes until the first iteration is reported.
    setup: Mutex<Option<PassTicker>>,
    /// Whether the first iteration has been reported (the setup message is gone).
    started: AtomicBool,
}

impl Bar {
    /// A bar for `chains` chains on data with `n` rows, drawn if stderr is a terminal, and
    /// published to the observer if there is one.
    pub(crate) fn new(chains: usize, n: usize, to: &ProgressTo) -> Self {
        let bar = to.terminal_bar();
        if let Some(bar) = &bar {
            let style = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {percent:>3}% (eta {eta}) {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
        }
        let setup = (bar.is_some() || to.observer.is_some()).then(|| {
            PassTicker::start(bar.clone(), to.observer.clone(), "setting up the chains", n)
        });
        Self {
            bar,
            observer: to.observer.clone(),
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
            if let Some(o) = &self.observer {
                o.set_message(String::new());
            }
        }
    }
}

impl Progress for Bar {
    fn update(&self, chain: usize, done: usize, total: usize) {
        if self.bar.is_none() && self.observer.is_none() {
            return;
        }
        let Some(seen) = self.done.get(chain) else { return };
        if !self.started.load(Ordering::Relaxed) {
            self.end_setup();
        }
        let length = self.done.len() * total;
        let added = done.saturating_sub(seen.swap(done, Ordering::Relaxed));
        if let Some(bar) = &self.bar {
            if bar.length() != Some(length as u64) {
                bar.set_length(length as u64);
            }
            bar.inc(added as u64);
        }
        if let Some(o) = &self.observer {
            o.total.store(length, Ordering::Relaxed);
            o.done.fetch_add(added, Ordering::Relaxed);
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.finish();
    }
}
