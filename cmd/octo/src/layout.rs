//! Fitting text to the terminal's width: a line too long goes on under a hanging indent (under
//! its text, past a list marker or a number), and words are never broken, so a narrow terminal
//! never wraps a description to column 0 or splits a word. Two-column lists (`/help`) keep their
//! right column to itself. Off a terminal nothing is wrapped: a pipe gets the lines as they are.

use textwrap::{Options, WordSeparator, WordSplitter};

/// The narrowest width wrapped to; below it the terminal wraps as it will.
const NARROWEST: usize = 20;

/// The terminal's width in columns: stderr's (where status lines go), else stdout's; `None` off a
/// terminal.
pub fn width() -> Option<usize> {
    terminal_size::terminal_size_of(std::io::stderr())
        .or_else(|| terminal_size::terminal_size_of(std::io::stdout()))
        .map(|(w, _)| usize::from(w.0))
        .filter(|w| *w >= NARROWEST)
}

/// stdout's width when it is a terminal (lists printed there); `None` in a pipe.
pub fn stdout_width() -> Option<usize> {
    terminal_size::terminal_size_of(std::io::stdout())
        .map(|(w, _)| usize::from(w.0))
        .filter(|w| *w >= NARROWEST)
}

fn options(width: usize, indent: &str) -> Options<'_> {
    Options::new(width)
        .subsequent_indent(indent)
        .break_words(false)
        .word_separator(WordSeparator::AsciiSpace)
        .word_splitter(WordSplitter::NoHyphenation)
}

/// Where a line's continuation starts: under the text after its leading blanks and a list
/// marker (`- `, `• `, `3. `, `[x] `), else two columns in.
fn hanging_indent(line: &str) -> usize {
    let text = line.trim_start_matches(' ');
    let lead = line.len() - text.len();
    let marker = ["- ", "* ", "• ", "[ ] ", "[x] ", "[~] "]
        .iter()
        .find(|m| text.starts_with(**m))
        .map(|m| m.chars().count());
    let numbered = || {
        let digits = text.chars().take_while(char::is_ascii_digit).count();
        (digits > 0 && text[digits..].starts_with(". ")).then_some(digits + 2)
    };
    match marker.or_else(numbered) {
        Some(m) => lead + m,
        None if lead == 0 => 2,
        None => lead,
    }
}

/// `line` wrapped to `width` (unchanged when `None`, or when it fits), continuation lines under
/// a hanging indent; newlines inside it are kept.
pub fn fit(line: &str, width: Option<usize>) -> String {
    let Some(width) = width else { return line.to_owned() };
    line.split('\n')
        .map(|l| {
            if textwrap::core::display_width(l) <= width {
                return l.to_owned();
            }
            let indent = " ".repeat(hanging_indent(l).min(width / 2));
            textwrap::fill(l, options(width, &indent))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Rows of a name and what it is, in two columns: names padded to the widest (at most a third of
/// the width; a longer one gets a line of its own), descriptions wrapped under themselves.
pub fn columns(rows: &[(&str, &str)], indent: usize, width: Option<usize>) -> Vec<String> {
    let pad = " ".repeat(indent);
    let widest = rows.iter().map(|(n, _)| textwrap::core::display_width(n)).max().unwrap_or(0);
    let Some(width) = width else {
        return rows.iter().map(|(n, d)| format!("{pad}{n:<widest$} {d}")).collect();
    };
    let left = widest.min((width / 3).max(8));
    let hang = " ".repeat(indent + left + 1);
    let mut out = Vec::new();
    for (name, about) in rows {
        let name_width = textwrap::core::display_width(name);
        let text = if name_width <= left {
            format!("{pad}{name}{} {about}", " ".repeat(left - name_width))
        } else {
            out.push(format!("{pad}{name}"));
            format!("{hang}{about}")
        };
        out.push(textwrap::fill(&text, options(width, &hang)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widest_line(text: &str) -> usize {
        text.lines().map(textwrap::core::display_width).max().unwrap_or(0)
    }

    #[test]
    fn long_lines_wrap_under_their_text_and_words_stay_whole() {
        let line = "  3. 20261201-ab12  2 hours ago  4 turns  mock:claude-sonnet-4-5  Fix the failing test in the calculator";
        let got = fit(line, Some(60));
        assert!(widest_line(&got) <= 60, "{got}");
        assert!(got.lines().skip(1).all(|l| l.starts_with("     ") && !l.starts_with("      ")), "{got}");
        assert_eq!(got.split_whitespace().collect::<Vec<_>>(), line.split_whitespace().collect::<Vec<_>>());
        assert_eq!(fit("short", Some(60)), "short");
        assert_eq!(fit(line, None), line, "off a terminal, unchanged");
        let plain = fit(&"word ".repeat(30), Some(40));
        assert!(plain.lines().skip(1).all(|l| l.starts_with("  w")), "{plain}");
    }

    #[test]
    fn two_columns_keep_descriptions_to_their_side_at_every_width() {
        let rows = [
            ("/status", "what this session is: model, mode, context, usage"),
            (
                "/permissions [allow|ask|deny RULE | remove RULE]",
                "list the rules, or add or remove one for this session",
            ),
            ("/model [ENDPOINT[:MODEL]]", "show the model, or switch to another"),
        ];
        for width in [60, 80, 120] {
            let lines = columns(&rows, 2, Some(width));
            let text = lines.join("\n");
            assert!(widest_line(&text) <= width, "{width}: {text}");
            for l in text.lines() {
                assert!(l.starts_with("  "), "{width}: nothing at column 0: {l:?}");
            }
            for (_, about) in rows {
                assert!(text.split_whitespace().collect::<Vec<_>>().windows(3).count() > 0);
                let words: Vec<&str> = about.split_whitespace().collect();
                let all: Vec<&str> = text.split_whitespace().collect();
                assert!(
                    all.windows(words.len()).any(|w| w == words.as_slice()),
                    "{width}: {about} intact in {text}"
                );
            }
        }
    }

    #[test]
    fn markers_and_numbers_set_the_hanging_indent() {
        assert_eq!(hanging_indent("- item"), 2);
        assert_eq!(hanging_indent("  12. entry"), 6);
        assert_eq!(hanging_indent("    plain"), 4);
        assert_eq!(hanging_indent("plain"), 2);
        assert_eq!(hanging_indent("  [x] done"), 6);
    }
}
