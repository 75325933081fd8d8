//! Diagnostics as the model reads them: one compact line each, `path:line:col severity message`.

use lsp_types::{Diagnostic, DiagnosticSeverity};
use std::path::Path;

/// The longest message kept (its first line).
const MAX_MESSAGE: usize = 240;

/// The errors (and warnings, with `warnings`) in `items` for the file at `rel`, at most `max`
/// lines and a count of the rest; `None` when there are none to show.
pub(crate) fn diagnostics(
    server: &str,
    rel: &Path,
    items: &[Diagnostic],
    warnings: bool,
    max: usize,
) -> Option<String> {
    let mut shown: Vec<&Diagnostic> = items
        .iter()
        .filter(|d| match d.severity {
            Some(DiagnosticSeverity::ERROR) | None => true,
            Some(DiagnosticSeverity::WARNING) => warnings,
            _ => false,
        })
        .collect();
    if shown.is_empty() {
        return None;
    }
    shown.sort_by_key(|d| {
        (d.severity != Some(DiagnosticSeverity::ERROR), d.range.start.line, d.range.start.character)
    });
    let mut out = format!("\n\nThe language server ({server}) reports for this file:");
    for d in shown.iter().take(max) {
        out.push('\n');
        out.push_str(&line(rel, d));
    }
    if shown.len() > max {
        out.push_str(&format!("\n… and {} more", shown.len() - max));
    }
    Some(out)
}

/// One diagnostic's line (positions counted from 1).
pub(crate) fn line(rel: &Path, d: &Diagnostic) -> String {
    let severity = match d.severity {
        Some(DiagnosticSeverity::WARNING) => "warning",
        Some(DiagnosticSeverity::INFORMATION) => "info",
        Some(DiagnosticSeverity::HINT) => "hint",
        _ => "error",
    };
    let first = d.message.lines().next().unwrap_or_default().trim();
    let mut message: String = first.chars().take(MAX_MESSAGE).collect();
    if first.chars().count() > MAX_MESSAGE {
        message.push('…');
    }
    format!(
        "{}:{}:{} {severity} {message}",
        rel.display(),
        d.range.start.line + 1,
        d.range.start.character + 1
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn diag(line: u32, severity: DiagnosticSeverity, message: &str) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, 4), Position::new(line, 6)),
            severity: Some(severity),
            message: message.into(),
            ..Diagnostic::default()
        }
    }

    #[test]
    fn errors_first_capped_and_counted() {
        let mut items =
            vec![diag(9, DiagnosticSeverity::WARNING, "unused"), diag(2, DiagnosticSeverity::HINT, "h")];
        items.extend((0..25).map(|i| diag(i, DiagnosticSeverity::ERROR, "bad\nsecond line")));
        let got = diagnostics("pyright", Path::new("src/a.py"), &items, false, 20).unwrap();
        assert!(got.contains("\nsrc/a.py:1:5 error bad\n"), "{got}");
        assert!(!got.contains("second line") && !got.contains("unused") && !got.contains(" hint "), "{got}");
        assert!(got.ends_with("… and 5 more"), "{got}");
        let with = diagnostics("x", Path::new("a.py"), &items[..1], true, 20).unwrap();
        assert!(with.contains("a.py:10:5 warning unused"), "{with}");
        assert_eq!(diagnostics("x", Path::new("a.py"), &items[..2], false, 20), None);
    }
}
