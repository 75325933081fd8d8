//! Markdown tables (`| a | b |` rows under a `|---|---|` separator), laid out once all their
//! rows are in: columns padded to the widest cell as the terminal shows it (East Asian wide
//! characters take two columns), the header bold, the borders dim.

use super::inline::Inline;
use unicode_width::UnicodeWidthStr;

/// How a column's cells sit in it (from the separator's colons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Center,
    Right,
}

/// Whether a line could be a table row.
pub(super) fn is_row(line: &str) -> bool {
    line.trim_start().starts_with('|')
}

/// Whether a line is a table's separator row: `|---|:--:|--:|`.
pub(super) fn is_separator(line: &str) -> bool {
    let cells = cells(line);
    !cells.is_empty() && cells.iter().all(|c| align(c).is_some())
}

/// The alignment a separator cell asks for, or `None` if it is not one.
fn align(cell: &str) -> Option<Align> {
    let dashes = cell.trim_start_matches(':').trim_end_matches(':');
    if dashes.is_empty() || !dashes.chars().all(|c| c == '-') {
        return None;
    }
    Some(match (cell.starts_with(':'), cell.len() > 1 && cell.ends_with(':')) {
        (true, true) => Align::Center,
        (false, true) => Align::Right,
        _ => Align::Left,
    })
}

/// A row's cells, trimmed; `\|` is a pipe inside a cell.
fn cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = match t.strip_suffix('|') {
        Some(inner) if !inner.ends_with('\\') => inner,
        _ => t,
    };
    let mut cells = vec![String::new()];
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                push(&mut cells, '|');
            }
            '|' => cells.push(String::new()),
            c => push(&mut cells, c),
        }
    }
    cells.iter().map(|c| c.trim().to_owned()).collect()
}

fn push(cells: &mut [String], c: char) {
    if let Some(last) = cells.last_mut() {
        last.push(c);
    }
}

/// Lays out a table: `rows` are its lines (without newlines), a header then a separator then
/// the body. Returns the lines to print; each ends with a reset. A row with more cells than the
/// header widens the table rather than losing them.
pub(super) fn layout(rows: &[String]) -> Vec<String> {
    let indent = rows.first().map_or("", |r| &r[..r.len() - r.trim_start().len()]);
    let aligns: Vec<Align> = rows
        .get(1)
        .map(|s| cells(s).iter().map(|c| align(c).unwrap_or(Align::Left)).collect())
        .unwrap_or_default();
    let styled: Vec<Vec<String>> = rows
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(i, row)| cells(row).iter().map(|c| style_cell(c, i == 0)).collect())
        .collect();
    let columns = styled.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let mut widths = vec![1; columns];
    for row in &styled {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(visible_width(cell));
        }
    }
    let border = "\x1b[2m│\x1b[22m";
    let mut lines = Vec::with_capacity(rows.len());
    for (i, row) in styled.iter().enumerate() {
        let mut line = indent.to_owned();
        for (col, width) in widths.iter().enumerate() {
            let cell = row.get(col).map_or("", String::as_str);
            let gap = width.saturating_sub(visible_width(cell));
            let (left, right) = match aligns.get(col).copied().unwrap_or(Align::Left) {
                Align::Left => (0, gap),
                Align::Right => (gap, 0),
                Align::Center => (gap / 2, gap - gap / 2),
            };
            let last = col + 1 == columns;
            if col > 0 {
                line.push(' ');
                line.push_str(border);
                line.push(' ');
            }
            line.push_str(&" ".repeat(left));
            line.push_str(cell);
            if !last {
                line.push_str(&" ".repeat(right));
            }
        }
        line.push_str("\x1b[0m");
        lines.push(line);
        if i == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            lines.push(format!("{indent}\x1b[2m{}\x1b[0m", rule.join("─┼─")));
        }
    }
    lines
}

/// A cell's text with its inline Markdown styled; a header cell is bold throughout.
fn style_cell(text: &str, header: bool) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    if header {
        out.push_str("\x1b[1m");
    }
    let mut inline = Inline::new(header);
    inline.push(text, &mut out);
    inline.end(&mut out);
    if header {
        out.push_str("\x1b[22m");
    }
    out
}

/// How many terminal columns a styled string takes: its escape sequences take none.
pub(super) fn visible_width(s: &str) -> usize {
    strip_ansi(s).width()
}

/// `s` without its escape sequences (only the renderer's own `ESC [ … m` can be there: text from
/// outside is made inert before it arrives).
pub(super) fn strip_ansi(s: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_split_on_unescaped_pipes() {
        assert_eq!(cells("| a | b\\|c |"), ["a", "b|c"]);
        assert_eq!(cells("|a|b"), ["a", "b"]);
        assert_eq!(cells("| a \\|"), ["a |"]);
        assert_eq!(cells("|"), [""]);
    }

    #[test]
    fn separators_and_their_alignment() {
        assert!(is_separator("|---|:--:|--:|"));
        assert!(is_separator("| - |"));
        assert!(!is_separator("| a |"));
        assert!(!is_separator("| :: |"));
        assert_eq!(align(":-:"), Some(Align::Center));
        assert_eq!(align("-:"), Some(Align::Right));
        assert_eq!(align(":-"), Some(Align::Left));
    }
}
