//! Claude Code's `@path` imports in `CLAUDE.md`: a word starting with `@` that names a file
//! (relative to the importing file, `~/…` in the user's home, or absolute) brings that file's
//! text in. As in Claude Code, words inside code spans and fenced code blocks are not imports,
//! and a word that names no file (`@someone`, `@types/node`) is left as text.

use std::path::{Path, PathBuf};

/// The `@path` words of `text`, in order, each once (outside code spans and fenced blocks).
pub(crate) fn mentions(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced || trimmed.starts_with("@include ") {
            continue;
        }
        // Every other backtick-delimited stretch is code.
        for (i, outside) in line.split('`').enumerate() {
            if i % 2 == 1 {
                continue;
            }
            for word in words(outside) {
                if !out.contains(&word) {
                    out.push(word);
                }
            }
        }
    }
    out
}

/// The `@…` words of a stretch of prose: `@` at the start or after a space or an opening
/// bracket, up to a space or a closing mark; trailing punctuation is not part of the path.
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = s.as_bytes();
    for (i, _) in s.match_indices('@') {
        if i > 0 && !matches!(bytes[i - 1], b' ' | b'\t' | b'(' | b'[' | b'"' | b'\'') {
            continue;
        }
        let rest = &s[i + 1..];
        let end =
            rest.find(|c: char| c.is_whitespace() || matches!(c, ')' | ']' | '"' | '\'' | '<' | '>' | ','));
        let word = rest[..end.unwrap_or(rest.len())].trim_end_matches(['.', ':', ';', '!', '?']);
        if !word.is_empty() && word != "include" {
            out.push(word.to_owned());
        }
    }
    out
}

/// The file `word` names, from the folder `dir` of the importing file; `None` when it names no
/// file.
pub(crate) fn resolve(word: &str, dir: &Path, user_home: Option<&Path>) -> Option<PathBuf> {
    let path = match word.strip_prefix("~/") {
        Some(rest) => user_home?.join(rest),
        None if Path::new(word).is_absolute() => PathBuf::from(word),
        None => dir.join(word),
    };
    path.is_file().then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_outside_code_are_mentions() {
        let text = "See @README.md for an overview and @docs/git.md.\nMail me@example.com, ping @alice\n`@not/this` and\n```\n@nor/this\n```\n(@~/.claude/mine.md)\n@include other.md\n";
        assert_eq!(mentions(text), ["README.md", "docs/git.md", "alice", "~/.claude/mine.md"]);
    }
}
