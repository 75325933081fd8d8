//! Head-and-tail truncation of tool output.

/// Shortens `text` to at most about `max_bytes` bytes by keeping its head and tail and replacing
/// the middle with a marker that says how much was cut. Text within the limit is returned as is.
/// Cuts never split a UTF-8 character.
pub fn truncate_middle(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let head_end = floor_char_boundary(text, max_bytes / 2);
    let tail_start = ceil_char_boundary(text, text.len() - (max_bytes - max_bytes / 2));
    let (head, middle, tail) = (&text[..head_end], &text[head_end..tail_start], &text[tail_start..]);
    let lines = middle.bytes().filter(|&b| b == b'\n').count();
    format!(
        "{head}\n\n[... {} bytes ({lines} lines) cut from the middle of this output; \
         narrow the command or read the rest in smaller pieces ...]\n\n{tail}",
        middle.len()
    )
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_untouched() {
        assert_eq!(truncate_middle("hello", 5), "hello");
        assert_eq!(truncate_middle("", 0), "");
    }

    #[test]
    fn keeps_head_and_tail_and_says_what_was_cut() {
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let out = truncate_middle(&text, 200);
        assert!(out.starts_with("line 0\nline 1\n"));
        assert!(out.ends_with("line 999\n"));
        let cut = text.len() - 200;
        assert!(out.contains(&format!("[... {cut} bytes (")), "{out}");
        assert!(out.len() < 400);
    }

    #[test]
    fn never_splits_a_character() {
        let text = "é".repeat(100); // 200 bytes
        for cap in 0..200 {
            let out = truncate_middle(&text, cap);
            assert!(out.contains("cut from the middle"));
        }
    }
}
