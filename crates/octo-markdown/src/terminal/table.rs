//! A table laid out for a terminal once all its rows are in: columns padded to the widest cell
//! as the terminal shows it (East Asian wide characters take two columns), the borders dim.

use pulldown_cmark::Alignment;
use unicode_width::UnicodeWidthStr;

/// The lines of a table whose first row is the header (cells already styled); each line ends
/// with a reset.
pub(super) fn layout(rows: &[Vec<String>], aligns: &[Alignment]) -> Vec<String> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let mut widths = vec![1; columns];
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(visible_width(cell));
        }
    }
    let border = "\x1b[2m│\x1b[22m";
    let mut lines = Vec::with_capacity(rows.len() + 1);
    for (i, row) in rows.iter().enumerate() {
        let mut line = String::new();
        for (col, width) in widths.iter().enumerate() {
            let cell = row.get(col).map_or("", String::as_str);
            let gap = width.saturating_sub(visible_width(cell));
            let (left, right) = match aligns.get(col).copied().unwrap_or(Alignment::None) {
                Alignment::Left | Alignment::None => (0, gap),
                Alignment::Right => (gap, 0),
                Alignment::Center => (gap / 2, gap - gap / 2),
            };
            if col > 0 {
                line.push(' ');
                line.push_str(border);
                line.push(' ');
            }
            line.push_str(&" ".repeat(left));
            line.push_str(cell);
            if col + 1 < columns {
                line.push_str(&" ".repeat(right));
            }
        }
        line.push_str("\x1b[0m");
        lines.push(line);
        if i == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            lines.push(format!("\x1b[2m{}\x1b[0m", rule.join("─┼─")));
        }
    }
    lines
}

/// How many terminal columns a styled string takes: its escape sequences take none.
pub fn visible_width(s: &str) -> usize {
    strip_ansi(s).width()
}

/// `s` without its `ESC [ … m` style sequences (the only escapes the renderer writes: text from
/// outside must be made inert before it is rendered).
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
