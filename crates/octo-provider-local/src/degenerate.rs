//! Watching a local model's answer for output that never ends on its own: one piece repeated
//! over and over (`1234567890123…`, the same list line again and again), or blank space. A small
//! model held to a format falls into this; generation is stopped instead of burning the cap.

/// The least of the answer's end that must repeat before it counts as a loop.
const LOOP_MIN: usize = 400;
/// The longest run that counts as one repeated piece (a digit pattern, a phrase, a list line
/// with a long path); a piece must repeat at least [`LOOP_TIMES`] times.
const LOOP_PERIOD: usize = 200;
const LOOP_TIMES: usize = 4;

/// Whether the answer has degenerated: its end is one piece repeated (`1234567890123…`, the
/// same line again and again) over at least [`LOOP_MIN`] bytes and [`LOOP_TIMES`] times, or
/// [`LOOP_MIN`] bytes of blank space. Such an answer never ends on its own; it only burns the
/// output cap.
pub(crate) fn degenerate(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    if bytes.len() < LOOP_MIN {
        return None;
    }
    if bytes[bytes.len() - LOOP_MIN..].iter().all(u8::is_ascii_whitespace) {
        return Some("nothing but blank space".to_owned());
    }
    let period = (1..=LOOP_PERIOD).find(|&p| {
        let span = (p * LOOP_TIMES).max(LOOP_MIN);
        span <= bytes.len() && {
            let tail = &bytes[bytes.len() - span..];
            (p..tail.len()).all(|i| tail[i] == tail[i - p])
        }
    })?;
    let mut start = bytes.len() - period;
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    Some(format!("it repeated `{}` over and over", text[start..].escape_debug()))
}

#[cfg(test)]
mod tests {
    use super::degenerate;

    #[test]
    fn loops_and_blank_runs_are_degenerate_and_prose_is_not() {
        let digits = format!("{{\"tool_call\": {{\"arguments\": {{\"id\": \"{}", "1234567890".repeat(90));
        let paths = format!(
            "The files:\n{}",
            "- `/tmp/t46/workspace/my_repo.git/my_repo.git/my_repo.git`\n".repeat(20)
        );
        assert!(degenerate(&paths).unwrap().contains("my_repo.git"), "a long repeated line");
        assert!(degenerate(&digits).unwrap().contains("1234567890"), "{:?}", degenerate(&digits));
        assert!(degenerate(&"the same line\n".repeat(70)).is_some());
        assert!(degenerate(&format!("ok{}", " ".repeat(900))).unwrap().contains("blank"));
        let listing: String = (0..60).map(|i| format!("- src/module_{i}.rs\n")).collect();
        assert_eq!(degenerate(&listing), None, "similar lines are not a loop");
        let prose = "A hash map stores values under keys and finds them again in constant time on average. ".repeat(3)
            + "It hashes each key to a bucket; collisions are chained or probed. Resizing keeps the load low, and a good hash spreads keys evenly so that lookups stay fast even as the table grows.";
        assert_eq!(degenerate(&prose), None);
        assert_eq!(degenerate("short"), None);
    }
}
