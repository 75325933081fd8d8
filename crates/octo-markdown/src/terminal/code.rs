//! Fenced code for a terminal, highlighted line by line with syntect's bundled grammars as ANSI
//! colours, the parser's state carried from one line to the next within a block. The theme is
//! loaded the first time a line needs colour, never before.

use crate::code::{language, syntax};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;
use syntect::easy::HighlightLines;
use syntect::highlighting::{Color, Style, Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

/// A theme whose accent colours read on dark and light backgrounds alike; its default text
/// colour is left to the terminal.
const THEME: &str = "base16-ocean.dark";

/// What highlighting needs, loaded once.
struct Assets {
    syntaxes: &'static SyntaxSet,
    theme: Theme,
    /// The terminal takes 24-bit colour (`COLORTERM`); otherwise the 256-colour palette is used.
    truecolor: bool,
}

static ASSETS: OnceLock<Option<Assets>> = OnceLock::new();

/// The grammars and theme, loaded on first use (`None` if the theme is missing).
fn assets() -> Option<&'static Assets> {
    ASSETS
        .get_or_init(|| {
            let theme = ThemeSet::load_defaults().themes.remove(THEME)?;
            let truecolor = std::env::var("COLORTERM")
                .is_ok_and(|v| v.eq_ignore_ascii_case("truecolor") || v.eq_ignore_ascii_case("24bit"));
            Some(Assets { syntaxes: crate::code::syntaxes(), theme, truecolor })
        })
        .as_ref()
}

/// One fenced code block being highlighted.
#[derive(Default)]
pub struct CodeLines {
    /// The language named by the fence, lowercased (empty: none).
    lang: String,
    state: State,
}

#[derive(Default)]
enum State {
    /// No line has needed colour yet.
    #[default]
    Unstarted,
    Highlighting(Box<HighlightLines<'static>>),
    /// An unknown language, or the highlighter failed: lines are shown as they are.
    Plain,
}

impl fmt::Debug for CodeLines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            State::Unstarted => "unstarted",
            State::Highlighting(_) => "highlighting",
            State::Plain => "plain",
        };
        f.debug_struct("CodeLines").field("lang", &self.lang).field("state", &state).finish()
    }
}

impl CodeLines {
    /// A block opened by a fence whose info string (after the backticks) is `info`.
    pub fn new(info: &str) -> Self {
        Self { lang: language(info), state: State::Unstarted }
    }

    /// One complete line of the block (without its newline), in colour; a highlighted line ends
    /// with a reset, so no colour outlives it.
    pub fn line(&mut self, line: &str) -> String {
        if matches!(self.state, State::Unstarted) {
            self.state = start(&self.lang);
        }
        let (State::Highlighting(h), Some(assets)) = (&mut self.state, assets()) else {
            return line.to_owned();
        };
        if line.len() > crate::code::MAX_LINE {
            return line.to_owned();
        }
        let with_newline = format!("{line}\n");
        // A grammar rule the regex engine cannot run panics inside syntect; that must cost the
        // block its colours, not the session.
        let ranges = catch_unwind(AssertUnwindSafe(|| h.highlight_line(&with_newline, assets.syntaxes)));
        match ranges {
            Ok(Ok(ranges)) => escape(&ranges, assets),
            _ => {
                self.state = State::Plain;
                line.to_owned()
            }
        }
    }
}

/// Starts highlighting a block in `lang`: loads the grammars if need be.
fn start(lang: &str) -> State {
    if lang.is_empty() {
        return State::Plain;
    }
    let Some(assets) = assets() else {
        return State::Plain;
    };
    match syntax(assets.syntaxes, lang) {
        Some(syntax) => State::Highlighting(Box::new(HighlightLines::new(syntax, &assets.theme))),
        None => State::Plain,
    }
}

/// ANSI escapes for highlighted ranges. Text in the theme's default colour keeps the terminal's
/// own, so plain code reads on any background.
fn escape(ranges: &[(Style, &str)], assets: &Assets) -> String {
    let default = assets.theme.settings.foreground;
    let mut out = String::new();
    // Starting in the terminal's colour: `Some(None)`.
    let mut current = Some(None);
    for (style, text) in ranges {
        let text = text.trim_end_matches(['\n', '\r']);
        if text.is_empty() {
            continue;
        }
        let fg = Some(style.foreground).filter(|fg| Some(*fg) != default);
        if current != Some(fg) {
            match fg {
                None => out.push_str("\x1b[39m"),
                Some(c) if assets.truecolor => {
                    out.push_str(&format!("\x1b[38;2;{};{};{}m", c.r, c.g, c.b));
                }
                Some(c) => out.push_str(&format!("\x1b[38;5;{}m", ansi256(c))),
            }
            current = Some(fg);
        }
        out.push_str(text);
    }
    out.push_str("\x1b[0m");
    out
}

/// The nearest colour of the 256-colour palette: its 6×6×6 cube or its grey ramp.
fn ansi256(c: Color) -> u8 {
    fn step(v: u8) -> u8 {
        match v {
            0..48 => 0,
            48..115 => 1,
            _ => (v - 35) / 40,
        }
    }
    fn level(step: u8) -> u8 {
        if step == 0 {
            0
        } else {
            55 + 40 * step
        }
    }
    fn distance(c: Color, r: u8, g: u8, b: u8) -> u32 {
        let d = |a: u8, b: u8| u32::from(a.abs_diff(b)).pow(2);
        d(c.r, r) + d(c.g, g) + d(c.b, b)
    }
    let (r, g, b) = (step(c.r), step(c.g), step(c.b));
    let cube = distance(c, level(r), level(g), level(b));
    let average = (u16::from(c.r) + u16::from(c.g) + u16::from(c.b)) / 3;
    let grey_step = u8::try_from(average.saturating_sub(3) / 10).unwrap_or(23).min(23);
    let grey = 8 + 10 * grey_step;
    if distance(c, grey, grey, grey) < cube {
        232 + grey_step
    } else {
        16 + 36 * r + 6 * g + b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palette_approximation_picks_cube_and_grey() {
        let rgb = |r, g, b| Color { r, g, b, a: 0xff };
        assert_eq!(ansi256(rgb(0, 0, 0)), 16);
        assert_eq!(ansi256(rgb(255, 255, 255)), 231);
        assert_eq!(ansi256(rgb(255, 0, 0)), 196);
        assert_eq!(ansi256(rgb(0x80, 0x80, 0x80)), 244);
        assert_eq!(ansi256(rgb(0xb4, 0x8e, 0xad)), 139);
    }
}
