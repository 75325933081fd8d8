//! What the answer put on the terminal since its request began, so that a reply that broke off
//! mid-stream can be taken off the screen before it starts again: the restarted reply is then
//! shown once, not after the broken one.

/// The answer's output of the current request, while nothing else was printed among it.
#[derive(Debug, Default)]
pub(super) struct Shown {
    text: String,
    /// Something else (a status line, thinking) was printed after the answer began: its rows
    /// can no longer be told apart.
    mixed: bool,
}

impl Shown {
    /// A new request: nothing of it is shown yet.
    pub fn reset(&mut self) {
        self.text.clear();
        self.mixed = false;
    }

    /// The answer wrote `bytes`.
    pub fn wrote(&mut self, bytes: &[u8]) {
        if !self.mixed {
            self.text.push_str(&String::from_utf8_lossy(bytes));
        }
    }

    /// Something else was printed on the terminal.
    pub fn interrupted(&mut self) {
        if !self.text.is_empty() {
            self.mixed = true;
        }
    }

    /// Whether anything of the answer is on screen since the request began.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty() && !self.mixed
    }

    /// How many rows above the cursor's the answer's first row is, on a terminal `width`
    /// columns wide (lines longer than that wrap).
    fn rows_above(&self, width: usize) -> usize {
        let width = width.max(1);
        let mut lines: Vec<&str> = self.text.split('\n').collect();
        let last = lines.pop().unwrap_or_default();
        let full: usize = lines
            .iter()
            .map(|l| textwrap::core::display_width(l.trim_end_matches('\r')).div_ceil(width).max(1))
            .sum();
        // A cursor past the last column stays on its row until the next character.
        full + textwrap::core::display_width(last).saturating_sub(1) / width
    }

    /// The escape sequence that takes the answer off a terminal of `(columns, rows)`, when it
    /// can: not when something else was printed among it, nor when part of it has scrolled off
    /// the screen.
    pub fn eraser(&self, size: (usize, usize)) -> Option<String> {
        if self.mixed {
            return None;
        }
        let (width, height) = size;
        let up = self.rows_above(width);
        if up >= height {
            return None;
        }
        let up = if up > 0 { format!("\x1b[{up}A") } else { String::new() };
        Some(format!("\r{up}\x1b[J"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> Shown {
        let mut s = Shown::default();
        s.wrote(text.as_bytes());
        s
    }

    #[test]
    fn the_rows_counted_are_the_rows_on_screen() {
        assert_eq!(shown("Hello wor").eraser((80, 24)).unwrap(), "\r\x1b[J");
        assert_eq!(shown("# Title\n\nHello wor").eraser((80, 24)).unwrap(), "\r\x1b[2A\x1b[J");
        // Styles take no room; a line twice the width takes two rows; a line ending exactly at
        // the edge leaves the cursor on its row.
        assert_eq!(shown("\x1b[1mTitle\x1b[0m\nab").eraser((80, 24)).unwrap(), "\r\x1b[1A\x1b[J");
        assert_eq!(shown(&format!("{}\nx", "a".repeat(20))).eraser((10, 24)).unwrap(), "\r\x1b[2A\x1b[J");
        assert_eq!(shown(&"a".repeat(20)).eraser((10, 24)).unwrap(), "\r\x1b[1A\x1b[J");
    }

    #[test]
    fn what_cannot_be_told_apart_or_seen_is_not_erased() {
        let mut s = shown("Hello\n");
        s.interrupted();
        s.wrote(b"more");
        assert!(s.eraser((80, 24)).is_none(), "a status line was printed among it");
        assert!(shown(&"line\n".repeat(30)).eraser((80, 24)).is_none(), "part of it scrolled off");
        let mut s = shown("x");
        s.reset();
        assert!(s.is_empty());
    }
}
