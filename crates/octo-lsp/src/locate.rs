//! Positions the model can give and read: a line and a symbol's name in, `path:line:col` and
//! the line's text out (the model rarely knows columns; octo finds them).

use serde_json::Value;
use std::path::Path;

/// The protocol position (0-based line, column in the server's encoding) of `symbol` on line
/// `line` (1-based) of `text`: its first whole-word occurrence, else its first occurrence, else
/// the line's first non-blank character when no symbol is given.
pub(crate) fn position(
    text: &str,
    line: u32,
    symbol: Option<&str>,
    utf8: bool,
) -> Result<(u32, u32), String> {
    let index = line.checked_sub(1).ok_or("lines are counted from 1")?;
    let Some(content) = text.lines().nth(index as usize) else {
        return Err(format!("the file has {} lines, not {line}", text.lines().count()));
    };
    let byte = match symbol.filter(|s| !s.is_empty()) {
        Some(sym) => find_word(content, sym).ok_or_else(|| {
            format!(
                "`{sym}` is not on line {line}, which reads: {}",
                content.trim().chars().take(200).collect::<String>()
            )
        })?,
        None => content.len() - content.trim_start().len(),
    };
    let prefix = &content[..byte];
    let col = if utf8 { prefix.len() } else { prefix.encode_utf16().count() };
    Ok((index, u32::try_from(col).unwrap_or(u32::MAX)))
}

fn find_word(line: &str, word: &str) -> Option<usize> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut first = None;
    for (i, _) in line.match_indices(word) {
        first.get_or_insert(i);
        let before = line[..i].chars().next_back().is_none_or(|c| !is_ident(c));
        let after = line[i + word.len()..].chars().next().is_none_or(|c| !is_ident(c));
        if before && after {
            return Some(i);
        }
    }
    first
}

/// A protocol position's column as a character count, on `content`'s line.
fn column(content: &str, col: u32, utf8: bool) -> usize {
    if utf8 {
        let mut b = (col as usize).min(content.len());
        while !content.is_char_boundary(b) {
            b -= 1;
        }
        return content[..b].chars().count();
    }
    let mut units = 0;
    for (n, c) in content.chars().enumerate() {
        if units >= col as usize {
            return n;
        }
        units += c.len_utf16();
    }
    content.chars().count()
}

/// A `Location` or `LocationLink` as `path:line:col  text of the line`, the path relative to
/// `workspace` when inside it.
pub(crate) fn location(v: &Value, workspace: &Path, utf8: bool) -> Option<String> {
    let uri = v.get("uri").or_else(|| v.get("targetUri"))?.as_str()?;
    let range = v.get("range").or_else(|| v.get("targetSelectionRange"))?;
    let line = range.pointer("/start/line")?.as_u64()?;
    let col = range.pointer("/start/character")?.as_u64()?;
    let path = crate::server::uri_path(uri)?;
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let content = text.lines().nth(usize::try_from(line).ok()?).unwrap_or_default();
    let col = column(content, u32::try_from(col).ok()?, utf8);
    let shown = path.strip_prefix(workspace).unwrap_or(&path);
    let snippet: String = content.trim().chars().take(160).collect();
    Some(format!("{}:{}:{}  {snippet}", shown.display(), line + 1, col + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_are_found_as_whole_words_in_either_encoding() {
        let text = "x = 1\nlet café_total = total + 1;\n";
        assert_eq!(position(text, 2, Some("total"), true), Ok((1, 18)));
        assert_eq!(position(text, 2, Some("total"), false), Ok((1, 17)));
        assert_eq!(position(text, 2, None, false), Ok((1, 0)));
        assert!(position(text, 9, None, false).unwrap_err().contains("2 lines"));
        assert!(position(text, 1, Some("nope"), false).unwrap_err().contains("x = 1"));
        assert!(position(text, 0, None, false).is_err());
        assert_eq!(column("é日x", 2, false), 2);
        assert_eq!(column("é日x", 5, true), 2);
    }
}
