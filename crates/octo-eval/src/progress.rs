//! Progress on the terminal: a bar with passed / failed / errors / running, and a line per task
//! as it ends (printed plainly when stderr is not a terminal).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use octo_eval::report::{cost, outcome};
use octo_eval::results::Record;
use octo_eval::runner::{seconds, Progress};
use octo_eval::task::Task;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The bar and its counts.
pub struct Bar {
    bar: ProgressBar,
    passed: AtomicUsize,
    failed: AtomicUsize,
    errors: AtomicUsize,
    running: AtomicUsize,
}

impl Bar {
    /// A bar for `tasks` tasks.
    pub fn new(tasks: usize, _attempts: u32) -> Self {
        let bar = ProgressBar::with_draw_target(Some(tasks as u64), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}") {
            bar.set_style(style);
        }
        Self {
            bar,
            passed: AtomicUsize::new(0),
            failed: AtomicUsize::new(0),
            errors: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
        }
    }

    fn refresh(&self) {
        self.bar.set_message(format!(
            "passed {} · failed {} · errors {} · running {}",
            self.passed.load(Ordering::Relaxed),
            self.failed.load(Ordering::Relaxed),
            self.errors.load(Ordering::Relaxed),
            self.running.load(Ordering::Relaxed)
        ));
    }

    /// Clears the bar.
    pub fn done(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for Bar {
    fn started(&self, _task: &Task) {
        self.running.fetch_add(1, Ordering::Relaxed);
        self.refresh();
    }

    fn finished(&self, r: &Record) {
        self.running.fetch_sub(1, Ordering::Relaxed);
        let counter = match (&r.error_kind, r.passed) {
            (Some(_), _) => &self.errors,
            (None, true) => &self.passed,
            (None, false) => &self.failed,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let why =
            r.error.as_deref().map(|e| format!(": {}", e.lines().next().unwrap_or(""))).unwrap_or_default();
        let line = format!(
            "{:<10} {}  ({} attempt(s), {}, {}){why}",
            outcome(r),
            r.task,
            r.attempts.len(),
            seconds(r.wall_secs),
            cost(r.cost_usd)
        );
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
        self.bar.inc(1);
        self.refresh();
    }
}
