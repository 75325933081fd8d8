//! Text from outside — the model's answer and thinking, tool output, file contents in diffs,
//! server error bodies, session titles — on its way to a terminal. Control characters and escape
//! sequences in it could move the cursor, recolour or clear the screen, retitle the window, write
//! the clipboard (OSC 52), plant links or hide text; so they are made visible (`^[`, `^G`) or
//! dropped. octo's own styling is added after this, and is the only escape output.
//!
//! Machine outputs (json, stream-json) never pass through here: JSON escaping covers them.

/// What happens to control characters and escape sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Shown in caret notation (`ESC` → `^[`, `BEL` → `^G`), so they are seen and inert: for a
    /// terminal.
    Visible,
    /// Dropped, whole sequences at a time: for text piped to a file or another program.
    Strip,
    /// Passed on as sent (`--raw`).
    Raw,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Text,
    /// After `ESC`.
    Esc,
    /// Inside a control sequence (`ESC [` …), until its final byte.
    Csi,
    /// Inside a string (`ESC ]`, `ESC P`, `ESC _`, `ESC ^`, `ESC X`), until `BEL` or `ESC \`.
    Str,
    /// An `ESC` inside a string: `\` ends the string.
    StrEsc,
}

/// A streaming filter: sequences may be split across the chunks it is fed.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    mode: Option<Mode>,
    state: State,
    /// A `\r` whose meaning depends on the next character (`\r\n` is a line end).
    cr: bool,
}

/// Bidirectional-text controls: they reorder what is shown, so text can read differently from
/// what it is.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

fn caret(c: char, out: &mut String) {
    match c {
        '\u{7f}' => out.push_str("^?"),
        c if (c as u32) < 0x20 => {
            out.push('^');
            out.push(char::from(b'@' + c as u8));
        }
        c => out.push_str(&format!("<U+{:04X}>", c as u32)),
    }
}

impl Filter {
    /// A filter in `mode`.
    pub fn new(mode: Mode) -> Self {
        Self { mode: Some(mode), ..Self::default() }
    }

    fn mode(&self) -> Mode {
        self.mode.unwrap_or(Mode::Visible)
    }

    /// Filters `input` onto `out`.
    pub fn push(&mut self, input: &str, out: &mut String) {
        if self.mode() == Mode::Raw {
            out.push_str(input);
            return;
        }
        for c in input.chars() {
            self.char(c, out);
        }
    }

    /// Ends the text: a pending `\r` or an unfinished sequence is settled.
    pub fn finish(&mut self, out: &mut String) {
        if std::mem::take(&mut self.cr) && self.mode() == Mode::Visible {
            out.push_str("^M");
        }
        self.state = State::Text;
    }

    fn char(&mut self, c: char, out: &mut String) {
        let visible = self.mode() == Mode::Visible;
        if std::mem::take(&mut self.cr) && c != '\n' && visible {
            out.push_str("^M");
        }
        if visible {
            // Shown, everything printable passes: the rest of a sequence is harmless text once
            // its ESC is shown as `^[`.
            match c {
                '\n' | '\t' => out.push(c),
                '\r' => self.cr = true,
                c if c.is_control() || is_bidi_control(c) => caret(c, out),
                c => out.push(c),
            }
            return;
        }
        self.state = match (self.state, c) {
            (State::Text, '\u{1b}') => State::Esc,
            // C1 forms of CSI and of the string introducers.
            (State::Text, '\u{9b}') => State::Csi,
            (State::Text, '\u{90}' | '\u{9d}' | '\u{98}' | '\u{9e}' | '\u{9f}') => State::Str,
            (State::Text, '\r') => {
                self.cr = true;
                State::Text
            }
            (State::Text, c) => {
                if c == '\n' || c == '\t' || !(c.is_control() || is_bidi_control(c)) {
                    out.push(c);
                }
                State::Text
            }
            (State::Esc, '[') => State::Csi,
            (State::Esc, ']' | 'P' | 'X' | '^' | '_') => State::Str,
            // Any other escape is two characters (ESC c, ESC 7, ESC (B needs one more: harmless).
            (State::Esc, _) => State::Text,
            (State::Csi, c) if ('\u{40}'..='\u{7e}').contains(&c) => State::Text,
            (State::Csi, _) => State::Csi,
            (State::Str, '\u{7}' | '\u{9c}') => State::Text,
            (State::Str, '\u{1b}') => State::StrEsc,
            (State::Str, _) => State::Str,
            (State::StrEsc, '\\') => State::Text,
            (State::StrEsc, _) => State::Str,
        };
    }
}

/// `text` filtered in one go.
pub fn clean(text: &str, mode: Mode) -> String {
    let mut f = Filter::new(mode);
    let mut out = String::with_capacity(text.len());
    f.push(text, &mut out);
    f.finish(&mut out);
    out
}

/// `text` made safe for a terminal (visible escapes).
pub fn visible(text: &str) -> String {
    clean(text, Mode::Visible)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "a\u{1b}[31mred\u{1b}[0m b\u{7}\u{0} \u{1b}]52;c;ZXZpbA==\u{7}c \u{1b}]0;title\u{1b}\\d \u{1b}]8;;http://x\u{7}link\u{1b}]8;;\u{7} \u{9b}2J\u{202e}e\r\nf\rg\u{1b}c";

    #[test]
    fn visible_mode_shows_every_control_and_leaves_no_escape() {
        let out = clean(HOSTILE, Mode::Visible);
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\u{9b}'), "{out:?}");
        assert!(out.starts_with("a^[[31mred^[[0m b^G^@ ^[]52;c;ZXZpbA==^Gc"), "{out:?}");
        assert!(out.contains("<U+009B>2J<U+202E>e\nf^Mg^[c"), "{out:?}");
        assert!(out.chars().all(|c| c == '\n' || !c.is_control()), "{out:?}");
    }

    #[test]
    fn strip_mode_drops_whole_sequences_even_when_split() {
        assert_eq!(clean(HOSTILE, Mode::Strip), "ared b c d link e\nfg");
        // Split at every character: the same result.
        let mut f = Filter::new(Mode::Strip);
        let mut out = String::new();
        for c in HOSTILE.chars() {
            f.push(&c.to_string(), &mut out);
        }
        f.finish(&mut out);
        assert_eq!(out, clean(HOSTILE, Mode::Strip));
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
    }

    #[test]
    fn raw_mode_and_plain_text_pass_unchanged() {
        assert_eq!(clean(HOSTILE, Mode::Raw), HOSTILE);
        let plain = "fn main() {\n\tprintln!(\"héllo — ✓\");\n}\r\n";
        assert_eq!(clean(plain, Mode::Visible), plain.replace("\r\n", "\n"));
        assert_eq!(clean(plain, Mode::Strip), plain.replace("\r\n", "\n"));
    }

    #[test]
    fn a_cr_split_from_its_lf_is_still_a_line_end() {
        let mut f = Filter::new(Mode::Visible);
        let mut out = String::new();
        f.push("one\r", &mut out);
        f.push("\ntwo", &mut out);
        f.finish(&mut out);
        assert_eq!(out, "one\ntwo");
    }
}
