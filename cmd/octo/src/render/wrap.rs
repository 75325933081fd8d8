//! Word wrapping for streamed text: a word that would pass the terminal's edge starts the next
//! line instead, under the line's hanging indent (its leading blanks, or past a list marker), so
//! paragraphs never break mid-word. Text arrives in arbitrary pieces, so the word being read is
//! held until a blank or a newline ends it; escape sequences take no columns and stay in place.
//! A word longer than a whole line is printed as it is (the terminal breaks it).

use unicode_width::UnicodeWidthChar;

/// Where an escape sequence is.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Esc {
    #[default]
    None,
    /// After ESC.
    Start,
    /// Inside `ESC [ …` until its final byte.
    Csi,
    /// Inside `ESC ] …` until BEL or `ESC \`.
    Osc,
    /// ESC inside an OSC: the `\` after it ends the sequence.
    OscEnd,
}

/// The wrapping state of the current line.
#[derive(Debug)]
pub(super) struct Wrap {
    width: usize,
    /// The cursor's column.
    col: usize,
    /// Where continuation lines start.
    indent: usize,
    /// The word being read (with any escapes inside it) and its width.
    word: String,
    word_width: usize,
    /// Blanks read before the word, printed with it (or dropped at a line break).
    blanks: usize,
    /// Only blanks so far on this line.
    leading: bool,
    /// No word printed yet on this line.
    first_word: bool,
    esc: Esc,
}

impl Wrap {
    /// Wrapping at `width` columns.
    pub(super) fn new(width: usize) -> Self {
        Self {
            width,
            col: 0,
            indent: 0,
            word: String::new(),
            word_width: 0,
            blanks: 0,
            leading: true,
            first_word: true,
            esc: Esc::None,
        }
    }

    /// Wraps `text` into `out`; a word still being read is held back.
    pub(super) fn push(&mut self, text: &str, out: &mut String) {
        for c in text.chars() {
            if self.escape(c) {
                self.leading = false;
                self.word.push(c);
                continue;
            }
            match c {
                '\n' => {
                    self.end_word(out);
                    out.push('\n');
                    self.new_line();
                }
                ' ' if self.leading => {
                    out.push(' ');
                    self.col += 1;
                    self.indent = self.col;
                }
                ' ' | '\t' => {
                    self.end_word(out);
                    self.blanks += 1;
                }
                c => {
                    self.leading = false;
                    self.word.push(c);
                    self.word_width += c.width().unwrap_or(0);
                }
            }
        }
    }

    /// Prints the word held back (the text ended, or something else is printed next).
    pub(super) fn flush(&mut self, out: &mut String) {
        self.end_word(out);
    }

    /// Text printed around the wrapping (a code line, a table): only the column is followed.
    pub(super) fn passed(&mut self, text: &str) {
        match text.rfind('\n') {
            Some(i) => {
                self.new_line();
                self.col = text[i + 1..].chars().filter_map(UnicodeWidthChar::width).sum();
            }
            None => self.col += text.chars().filter_map(UnicodeWidthChar::width).sum::<usize>(),
        }
    }

    fn new_line(&mut self) {
        self.col = 0;
        self.indent = 0;
        self.blanks = 0;
        self.leading = true;
        self.first_word = true;
    }

    /// Whether `c` belongs to an escape sequence (which takes no columns).
    fn escape(&mut self, c: char) -> bool {
        self.esc = match (self.esc, c) {
            (Esc::None, '\x1b') => Esc::Start,
            (Esc::None, _) => return false,
            (Esc::Start, '[') => Esc::Csi,
            (Esc::Start, ']') => Esc::Osc,
            (Esc::Start, _) => Esc::None,
            (Esc::Csi, c) if ('\x40'..='\x7e').contains(&c) => Esc::None,
            (Esc::Csi, _) => Esc::Csi,
            (Esc::Osc, '\x07') => Esc::None,
            (Esc::Osc, '\x1b') => Esc::OscEnd,
            (Esc::Osc, _) => Esc::Osc,
            (Esc::OscEnd, _) => Esc::None,
        };
        true
    }

    /// Prints the word read so far: on this line when it fits, else on the next under the indent.
    fn end_word(&mut self, out: &mut String) {
        if self.word.is_empty() {
            return;
        }
        let fits = self.col + self.blanks + self.word_width <= self.width;
        if !fits && self.col > self.indent && self.indent + self.word_width <= self.width {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', self.indent));
            self.col = self.indent;
        } else {
            out.extend(std::iter::repeat_n(' ', self.blanks));
            self.col += self.blanks;
        }
        self.blanks = 0;
        self.leading = false;
        out.push_str(&self.word);
        self.col += self.word_width;
        if self.col > self.width {
            // The terminal broke a word longer than the line.
            self.col %= self.width.max(1);
        }
        if std::mem::take(&mut self.first_word) && is_marker(&self.word) && self.indent + 8 < self.width {
            self.indent = self.col + 1;
        }
        self.word.clear();
        self.word_width = 0;
    }
}

/// Whether `word` (without its escapes) is a list marker: `-`, `*`, `+`, `•`, `3.`, `3)`.
fn is_marker(word: &str) -> bool {
    let mut plain = String::with_capacity(word.len());
    let mut w = Wrap::new(usize::MAX);
    for c in word.chars() {
        if !w.escape(c) {
            plain.push(c);
        }
    }
    matches!(plain.as_str(), "-" | "*" | "+" | "•")
        || plain
            .strip_suffix(['.', ')'])
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrap(pieces: &[&str], width: usize) -> String {
        let mut w = Wrap::new(width);
        let mut out = String::new();
        for p in pieces {
            w.push(p, &mut out);
        }
        w.flush(&mut out);
        out
    }

    #[test]
    fn words_move_to_the_next_line_whole_in_any_chunking() {
        let text = "A hash map stores values under keys and finds them again in constant time.";
        let whole = wrap(&[text], 20);
        assert!(whole.lines().all(|l| l.chars().count() <= 20), "{whole}");
        assert_eq!(whole.split_whitespace().collect::<Vec<_>>(), text.split_whitespace().collect::<Vec<_>>());
        let chars: Vec<String> = text.chars().map(String::from).collect();
        let pieces: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(wrap(&pieces, 20), whole, "streamed a character at a time, the same");
    }

    #[test]
    fn list_items_and_indented_lines_hang_under_their_text() {
        let got =
            wrap(&["- first item that is long enough to wrap around\n  12. numbered entry wraps too\n"], 24);
        let lines: Vec<&str> = got.lines().collect();
        assert_eq!(lines[0], "- first item that is");
        assert!(lines[1].starts_with("  long"), "{got}");
        assert!(lines.iter().any(|l| l.starts_with("      ") && !l.starts_with("       ")), "{got}");
    }

    #[test]
    fn escapes_take_no_columns_and_stay_in_place() {
        let got = wrap(&["\x1b[1mbold\x1b[0m words ", "\x1b]8;;http://x\x07link\x1b]8;;\x07 more"], 15);
        assert!(got.starts_with("\x1b[1mbold\x1b[0m words"), "{got:?}");
        assert!(got.contains("\x1b]8;;http://x\x07link\x1b]8;;\x07"), "{got:?}");
        let mut strip = Wrap::new(usize::MAX);
        let first: String = got.lines().next().unwrap().chars().filter(|c| !strip.escape(*c)).collect();
        assert_eq!(first, "bold words link", "{got:?}");
        assert_eq!(got.lines().nth(1), Some("more"));
    }

    #[test]
    fn a_quote_bar_or_other_wide_first_word_is_not_a_marker() {
        let got = wrap(&["\x1b[2m│\x1b[0m quoted text that wraps", "\n日本 word word word"], 12);
        assert_eq!(got.lines().nth(1), Some("text that"), "{got:?}");
        assert!(!is_marker("│") && !is_marker("日.") && is_marker("12.") && !is_marker("."));
    }

    #[test]
    fn a_word_longer_than_the_line_is_printed_as_it_is() {
        let long = "x".repeat(30);
        let got = wrap(&[&format!("see {long} here")], 20);
        assert!(got.contains(&long), "{got}");
    }
}
