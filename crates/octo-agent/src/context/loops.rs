//! Noticing when the model repeats itself: the same call, or the same short pattern of calls.

/// Tracks the calls of one turn.
#[derive(Debug, Default)]
pub(crate) struct LoopDetector {
    calls: Vec<String>,
}

/// What to do about the latest call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Fine,
    /// Tell the model it is repeating itself.
    Warn(String),
    /// Stop the turn.
    Stop(String),
}

impl LoopDetector {
    /// Records a call (`name` + canonical arguments) and judges the repetition it completes.
    pub(crate) fn record(
        &mut self,
        name: &str,
        input: &serde_json::Value,
        warn: usize,
        stop: usize,
    ) -> Verdict {
        self.calls.push(format!("{name} {input}"));
        let n = self.calls.len();
        // Periods 1 to 3: the tail made of the same 1-, 2- or 3-call pattern, repeated.
        for period in 1..=3usize {
            if n < period * warn.max(1) {
                continue;
            }
            let pattern = &self.calls[n - period..];
            let mut reps = 0;
            while reps * period + period <= n
                && self.calls[n - (reps + 1) * period..n - reps * period] == *pattern
            {
                reps += 1;
            }
            let what = if period == 1 {
                format!("`{name}` with the same arguments")
            } else {
                format!("the same sequence of {period} calls")
            };
            if reps >= stop.max(1) {
                return Verdict::Stop(format!("stopped: the model called {what} {reps} times in a row"));
            }
            if reps >= warn.max(1) {
                return Verdict::Warn(format!(
                    "Warning: you have called {what} {reps} times in a row and keep getting the same result. Change \
                     your approach, or stop and tell the user what is blocking you."
                ));
            }
        }
        Verdict::Fine
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repeated_calls_warn_then_stop() {
        let mut d = LoopDetector::default();
        let v: Vec<Verdict> = (0..5).map(|_| d.record("grep", &json!({"pattern": "x"}), 3, 5)).collect();
        assert_eq!(v[1], Verdict::Fine);
        assert!(matches!(v[2], Verdict::Warn(_)));
        assert!(matches!(v[4], Verdict::Stop(_)));
    }

    #[test]
    fn patterns_are_noticed_and_variety_is_fine() {
        let mut d = LoopDetector::default();
        let mut last = Verdict::Fine;
        for i in 0..6 {
            last = d.record(if i % 2 == 0 { "read_file" } else { "grep" }, &json!({}), 3, 5);
        }
        assert!(matches!(last, Verdict::Warn(ref m) if m.contains("sequence of 2")), "{last:?}");
        let mut d = LoopDetector::default();
        for i in 0..10 {
            assert_eq!(d.record("read_file", &json!({"path": i}), 3, 5), Verdict::Fine);
        }
    }
}
