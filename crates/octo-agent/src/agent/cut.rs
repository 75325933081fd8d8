//! A reply cut at the output limit: what the model is asked to go on, and whether its
//! continuation moved the answer on at all.

/// Asked after a reply that stopped at the output limit.
pub(super) const CONTINUE_PROMPT: &str =
    "Your reply was cut off at the output limit. Continue exactly where you stopped, without repeating anything.";

/// Whether a continuation `new` only repeats what `before` already said: a stretch from its
/// middle (up to 200 characters) is found in it.
pub(super) fn repeats(before: &str, new: &str) -> bool {
    let new = new.trim();
    let chars: Vec<char> = new.chars().collect();
    if chars.len() < 40 {
        return !new.is_empty() && before.contains(new);
    }
    let len = chars.len().min(200);
    let start = (chars.len() - len) / 2;
    let probe: String = chars[start..start + len].iter().collect();
    before.contains(&probe)
}

#[cfg(test)]
mod tests {
    use super::repeats;

    #[test]
    fn a_continuation_that_says_it_again_repeats_and_new_text_does_not() {
        let said = "- src/a.rs is the parser\n- src/b.rs is the lexer\n".repeat(5);
        assert!(repeats(&said, &"- src/a.rs is the parser\n- src/b.rs is the lexer\n".repeat(3)));
        assert!(!repeats(&said, "and src/c.rs holds the tests, which cover the grammar end to end."));
        assert!(!repeats(&said, "   "));
        assert!(repeats("part0 part1", "part1"));
    }
}
