//! Two runs side by side: per task, which passed where; the tasks one run won and lost; and a
//! two-sided sign test on those, so a difference of a few tasks is not read as a better agent.

use crate::results::Results;
use std::fmt::Write;

/// The comparison of run A with run B.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    /// Tasks A passed and B failed.
    pub wins: Vec<String>,
    /// Tasks A failed and B passed.
    pub losses: Vec<String>,
    /// Tasks both passed.
    pub both: usize,
    /// Tasks both failed.
    pub neither: usize,
    /// Tasks in only one run, or an error in either: not compared.
    pub left_out: Vec<String>,
}

impl Comparison {
    /// Compares by each task's final result.
    pub fn of(a: &Results, b: &Results) -> Self {
        let mut c = Self::default();
        let ids: std::collections::BTreeSet<&String> = a.records.keys().chain(b.records.keys()).collect();
        for id in ids {
            match (a.records.get(id), b.records.get(id)) {
                (Some(x), Some(y)) if x.error_kind.is_none() && y.error_kind.is_none() => {
                    match (x.passed, y.passed) {
                        (true, false) => c.wins.push(id.clone()),
                        (false, true) => c.losses.push(id.clone()),
                        (true, true) => c.both += 1,
                        (false, false) => c.neither += 1,
                    }
                }
                _ => c.left_out.push(id.clone()),
            }
        }
        c
    }

    /// The sign test's two-sided p-value for wins against losses (ties left out).
    pub fn p_value(&self) -> f64 {
        sign_test(self.wins.len(), self.losses.len())
    }

    /// The comparison in words.
    pub fn text(&self, a: &str, b: &str) -> String {
        let mut out = format!(
            "A: {a}\nB: {b}\n{} won by A, {} won by B, {} passed by both, {} failed by both",
            self.wins.len(),
            self.losses.len(),
            self.both,
            self.neither
        );
        if !self.left_out.is_empty() {
            let _ = write!(out, ", {} not compared (missing or an error in one run)", self.left_out.len());
        }
        let p = self.p_value();
        let verdict =
            if p < 0.05 { "a difference unlikely to be chance" } else { "no significant difference" };
        let _ = writeln!(out, "\nsign test: p = {p:.3} ({verdict})");
        for w in &self.wins {
            let _ = writeln!(out, "  A only: {w}");
        }
        for l in &self.losses {
            let _ = writeln!(out, "  B only: {l}");
        }
        out
    }
}

/// Two-sided sign test: the chance of a split at least this uneven if either side were as likely
/// to win each task (1 when there is nothing to compare).
pub fn sign_test(wins: usize, losses: usize) -> f64 {
    let n = wins + losses;
    if n == 0 {
        return 1.0;
    }
    let k = wins.min(losses);
    // Sum of C(n, i) / 2^n for i in 0..=k, computed in logs to stay finite for large n.
    let ln_choose = |n: usize, i: usize| -> f64 { ln_fact(n) - ln_fact(i) - ln_fact(n - i) };
    let tail: f64 = (0..=k).map(|i| (ln_choose(n, i) - n as f64 * std::f64::consts::LN_2).exp()).sum();
    (2.0 * tail).min(1.0)
}

fn ln_fact(n: usize) -> f64 {
    (2..=n).map(|i| (i as f64).ln()).sum()
}

#[cfg(test)]
mod tests {
    use super::sign_test;

    #[test]
    fn the_sign_test_matches_the_binomial_tails() {
        assert!((sign_test(0, 0) - 1.0).abs() < 1e-12);
        assert!((sign_test(3, 3) - 1.0).abs() < 1e-12);
        // 8 wins, 0 losses: 2 / 256.
        assert!((sign_test(8, 0) - 2.0 / 256.0).abs() < 1e-12);
        // 9 against 1: 2 * 11 / 1024.
        assert!((sign_test(1, 9) - 22.0 / 1024.0).abs() < 1e-12);
        assert!(sign_test(300, 200) < 1e-4);
    }
}
