//! Watching a local model's answer for output that never ends on its own: one piece repeated
//! over and over (`1234567890123…`, the same list line again and again), or blank space. A small
//! model held to a format falls into this; generation is stopped instead of burning the cap.

/// The least of the answer's end that must repeat before it counts as a loop.
const LOOP_MIN: usize = 400;
/// The longest run that counts as one repeated piece (a digit pattern, a phrase, a list line
/// with a long path); a piece must repeat at least [`LOOP_TIMES`] times.
const LOOP_PERIOD: usize = 200;
const LOOP_TIMES: usize = 4;
/// A piece that repeats with only its numbers changing (`44. The same sentence…`, `45. The same
/// sentence…`) counts when it is at least this long: shorter ones are a real listing
/// (`module_1.rs`, `module_2.rs`, …).
const NUMBERED_MIN: usize = 60;

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
    if let Some(period) = period(bytes, 1) {
        let start = char_start(text, bytes.len() - period);
        return Some(format!("it repeated `{}` over and over", text[start..].escape_debug()));
    }
    // The same item again and again under a counter: compared with every run of digits as one
    // `#`, so `9.` and `10.` are alike.
    let from = char_start(text, bytes.len().saturating_sub(4 * LOOP_PERIOD * LOOP_TIMES));
    let numbered = without_numbers(&text[from..]);
    // The shortest repeating piece must itself be long: four short listing lines are not one
    // long repeated item.
    let p = period(numbered.as_bytes(), 1).filter(|&p| p >= NUMBERED_MIN)?;
    let start = char_start(&numbered, numbered.len() - p);
    Some(format!(
        "it repeated `{}` over and over, only its numbers (#) changing",
        numbered[start..].escape_debug()
    ))
}

/// The shortest piece, at least `min` bytes long, whose repetition the end of `bytes` is.
fn period(bytes: &[u8], min: usize) -> Option<usize> {
    (min..=LOOP_PERIOD).find(|&p| {
        let span = (p * LOOP_TIMES).max(LOOP_MIN);
        span <= bytes.len() && {
            let tail = &bytes[bytes.len() - span..];
            (p..tail.len()).all(|i| tail[i] == tail[i - p])
        }
    })
}

/// The start of the character `i` falls in.
fn char_start(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `text` with every run of ASCII digits as one `#`.
fn without_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !out.ends_with('#') {
                out.push('#');
            }
        } else {
            out.push(c);
        }
    }
    out
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

    #[test]
    fn the_same_item_under_a_counter_is_a_loop_and_a_numbered_list_is_not() {
        let counted: String = (1..=30)
            .map(|i| {
                format!(
                    "{i}. `README.php` - This file contains the main information about the repository.\n\n"
                )
            })
            .collect();
        let why = degenerate(&counted).unwrap();
        assert!(why.contains("README.php") && why.contains("numbers"), "{why}");
        let steps: String = (1..=30)
            .map(|i| {
                format!(
                    "{i}. Step {i}: open file_{i}.rs and check the function f{i} there before going on.\n"
                )
            })
            .collect();
        assert!(degenerate(&steps).is_some(), "only numbers changing, over a long line");
        let list = "1. Read the config and check the endpoint.\n2. Open the session and load its history.\n\
                    3. Build the tools, then the prompt.\n4. Send the first request and stream the answer.\n\
                    5. Run each tool call the model asks for, behind the gate.\n6. Save the turn and print a summary.\n\
                    7. Compact when the context is full.\n8. Stop the processes still running.\n";
        assert_eq!(degenerate(list), None, "a numbered list of different items");
    }
}
