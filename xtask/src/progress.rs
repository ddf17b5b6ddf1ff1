//! Progress bars (indicatif) for the suites.

use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use tallmc_reproduce::{Reporter, Task};
use tallmc_samplers::Progress;

/// One bar per task, stacked.
pub struct Bars {
    multi: MultiProgress,
}

impl Bars {
    pub fn new() -> Self {
        Self { multi: MultiProgress::new() }
    }
}

struct Bar(ProgressBar);

impl Progress for Bar {
    fn update(&self, _chain: usize, _done: usize, _total: usize) {
        self.0.inc(1);
    }
}

impl Task for Bar {
    fn advance(&self, n: u64) {
        self.0.inc(n);
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

impl Reporter for Bars {
    fn task(&self, label: &str, total: u64) -> Box<dyn Task + '_> {
        let bar = self.multi.add(ProgressBar::new(total));
        bar.set_style(
            ProgressStyle::with_template(
                "{msg:40} [{bar:30}] {percent:>3}% {elapsed_precise} eta {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_message(label.to_string());
        bar.enable_steady_tick(Duration::from_millis(500));
        Box::new(Bar(bar))
    }

    fn note(&self, message: &str) {
        let _ = self.multi.println(message);
    }
}
