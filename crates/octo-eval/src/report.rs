//! The summary of a run: pass@1 … pass@N overall and per language, errors apart (a task that
//! could not be scored is neither passed nor failed), tokens, cost and time; as a table for the
//! terminal and as Markdown with a row per task.

use crate::results::Record;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Pass counts of one group of tasks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Group {
    /// Tasks with a record.
    pub tasks: usize,
    /// Tasks that could not be scored.
    pub errors: usize,
    /// `passed[k]`: passed within `k + 1` attempts.
    pub passed: Vec<usize>,
}

impl Group {
    fn add(&mut self, r: &Record, attempts: usize) {
        self.tasks += 1;
        self.passed.resize(attempts, 0);
        if r.error_kind.is_some() {
            self.errors += 1;
            return;
        }
        if let Some(n) = r.passed_in() {
            for k in (n - 1)..attempts {
                self.passed[k] += 1;
            }
        }
    }

    /// Tasks scored.
    pub fn scored(&self) -> usize {
        self.tasks - self.errors
    }

    /// pass@`k` in percent (`None` when nothing was scored).
    pub fn rate(&self, k: usize) -> Option<f64> {
        let n = self.scored();
        (n > 0).then(|| self.passed.get(k - 1).copied().unwrap_or(0) as f64 * 100.0 / n as f64)
    }
}

/// A run's figures.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Attempts per task.
    pub attempts: usize,
    /// All tasks.
    pub all: Group,
    /// By language.
    pub languages: BTreeMap<String, Group>,
    /// Input, output and cached tokens (octo's runs).
    pub tokens: (u64, u64, u64),
    /// USD, `None` when some task's price is unknown or the agent reports none.
    pub cost_usd: Option<f64>,
    /// Seconds, summed over tasks.
    pub wall_secs: f64,
}

/// Sums `records` of a run with `attempts` attempts per task.
pub fn summarize<'a>(records: impl IntoIterator<Item = &'a Record>, attempts: usize) -> Summary {
    let attempts = attempts.max(1);
    let mut s = Summary { attempts, cost_usd: Some(0.0), ..Summary::default() };
    for r in records {
        s.all.add(r, attempts);
        s.languages.entry(r.language.clone()).or_default().add(r, attempts);
        s.tokens.0 += r.tokens_in.unwrap_or(0);
        s.tokens.1 += r.tokens_out.unwrap_or(0);
        s.tokens.2 += r.tokens_cached.unwrap_or(0);
        s.cost_usd = s.cost_usd.zip(r.cost_usd).map(|(a, b)| a + b);
        s.wall_secs += r.wall_secs;
    }
    s.all.passed.resize(attempts, 0);
    s
}

fn pct(rate: Option<f64>) -> String {
    rate.map_or_else(|| "-".to_owned(), |r| format!("{r:.1}%"))
}

/// `$0.0123`, or `unknown`.
pub fn cost(c: Option<f64>) -> String {
    c.map_or_else(|| "unknown".to_owned(), |c| format!("${c:.4}"))
}

/// What a task came to in words: `pass@1`, `fail`, `error (endpoint)`.
pub fn outcome(r: &Record) -> String {
    match (&r.error_kind, r.passed_in()) {
        (Some(k), _) => format!("error ({k})"),
        (None, Some(n)) => format!("pass@{n}"),
        (None, None) => "fail".to_owned(),
    }
}

impl Summary {
    fn rows(&self) -> Vec<(String, &Group)> {
        let mut rows: Vec<(String, &Group)> = self.languages.iter().map(|(l, g)| (l.clone(), g)).collect();
        rows.push(("all".to_owned(), &self.all));
        rows
    }

    fn head(&self) -> Vec<String> {
        let mut h = vec!["language".to_owned(), "tasks".to_owned()];
        h.extend((1..=self.attempts).map(|k| format!("pass@{k}")));
        h.push("errors".to_owned());
        h
    }

    fn cells(&self, g: &Group) -> Vec<String> {
        let mut c = vec![g.tasks.to_string()];
        c.extend((1..=self.attempts).map(|k| pct(g.rate(k))));
        c.push(g.errors.to_string());
        c
    }

    fn totals(&self) -> String {
        format!(
            "tokens: {} in, {} out, {} cached · cost: {} · time: {}",
            self.tokens.0,
            self.tokens.1,
            self.tokens.2,
            cost(self.cost_usd),
            crate::runner::seconds(self.wall_secs)
        )
    }

    /// The table for the terminal.
    pub fn table(&self) -> String {
        let head = self.head();
        let rows: Vec<Vec<String>> = self
            .rows()
            .into_iter()
            .map(|(name, g)| std::iter::once(name).chain(self.cells(g)).collect())
            .collect();
        let widths: Vec<usize> = (0..head.len())
            .map(|i| rows.iter().map(|r| r[i].len()).chain([head[i].len()]).max().unwrap_or(0))
            .collect();
        let line = |cells: &[String]| {
            let mut l = String::new();
            for (i, c) in cells.iter().enumerate() {
                if i == 0 {
                    let _ = write!(l, "{c:<w$}", w = widths[i]);
                } else {
                    let _ = write!(l, "  {c:>w$}", w = widths[i]);
                }
            }
            l.trim_end().to_owned()
        };
        let mut out = line(&head) + "\n";
        for r in &rows {
            out += &(line(r) + "\n");
        }
        out + &self.totals() + "\n"
    }

    /// The summary and a row per task, as Markdown.
    pub fn markdown<'a>(&self, title: &str, records: impl IntoIterator<Item = &'a Record>) -> String {
        let head = self.head();
        let mut out =
            format!("# {title}\n\n| {} |\n|{}|\n", head.join(" | "), vec!["---"; head.len()].join("|"));
        for (name, g) in self.rows() {
            let _ = writeln!(out, "| {name} | {} |", self.cells(g).join(" | "));
        }
        let _ = writeln!(out, "\n{}\n", self.totals());
        out.push_str("| task | result | attempts | turns | cost | time |\n|---|---|---|---|---|---|\n");
        for r in records {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                r.task,
                outcome(r),
                r.attempts.len(),
                r.turns.map_or_else(|| "-".to_owned(), |t| t.to_string()),
                cost(r.cost_usd),
                crate::runner::seconds(r.wall_secs)
            );
        }
        out
    }
}
