//! Claude Code's `CLAUDE_ENV_FILE`: a file a SessionStart hook writes `export NAME=value` lines
//! into, for every later command. Claude Code sources it in the shell before each command; octo
//! reads its assignments instead (the file is read again for each command, so later lines count):
//! `NAME=value` with or without `export`, the value bare, in single quotes (literal) or in double
//! quotes, `$NAME` and `${NAME}` expanded from the environment built so far. Any other line (a
//! command, a function, a comment) is left out: nothing in the file runs.

use std::ffi::OsString;
use std::path::Path;

/// The most of the file read.
const MAX_BYTES: u64 = 256 * 1024;

/// The assignments in the file at `path`, in order, expanded against `env` (updated as they
/// apply). A missing or unreadable file assigns nothing.
pub fn apply(path: &Path, env: &mut Vec<(OsString, OsString)>) {
    use std::io::Read as _;
    let mut text = String::new();
    let Ok(f) = std::fs::File::open(path) else { return };
    if f.take(MAX_BYTES).read_to_string(&mut text).is_err() {
        return;
    }
    for line in text.lines() {
        if let Some((name, value)) = assignment(line, env) {
            env.retain(|(k, _)| k.to_str() != Some(name.as_str()));
            env.push((name.into(), value.into()));
        }
    }
}

/// `export NAME=value` (or without `export`), with the value expanded; `None` for other lines.
fn assignment(line: &str, env: &[(OsString, OsString)]) -> Option<(String, String)> {
    let line = line.trim();
    let line = line.strip_prefix("export ").map_or(line, str::trim_start);
    let (name, raw) = line.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    if !(first.is_ascii_alphabetic() || first == '_') || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return None;
    }
    Some((name.to_owned(), value(raw, env)?))
}

/// A shell word of quoted and bare parts; `None` when it is more than one word or not closed.
fn value(raw: &str, env: &[(OsString, OsString)]) -> Option<String> {
    let mut out = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let mut closed = false;
                for q in chars.by_ref() {
                    if q == '\'' {
                        closed = true;
                        break;
                    }
                    out.push(q);
                }
                if !closed {
                    return None;
                }
            }
            '"' => {
                let mut inner = String::new();
                let mut closed = false;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => {
                            closed = true;
                            break;
                        }
                        '\\' => inner.push(chars.next()?),
                        _ => inner.push(q),
                    }
                }
                if !closed {
                    return None;
                }
                out.push_str(&expand(&inner, env)?);
            }
            '$' => {
                let mut rest: String = String::from("$");
                while let Some(&n) = chars.peek() {
                    if n.is_whitespace() || n == '"' || n == '\'' {
                        break;
                    }
                    rest.push(n);
                    chars.next();
                }
                out.push_str(&expand(&rest, env)?);
            }
            '#' if out.is_empty() => return Some(String::new()),
            c if c.is_whitespace() => {
                // A trailing comment is allowed; another word is not an assignment we read.
                let rest: String = chars.collect();
                return (rest.trim().is_empty() || rest.trim_start().starts_with('#')).then_some(out);
            }
            ';' | '&' | '|' | '`' | '(' | ')' | '<' | '>' => return None,
            '\\' => out.push(chars.next()?),
            c => out.push(c),
        }
    }
    Some(out)
}

/// `text` with `$NAME` and `${NAME}` replaced by their values (empty when unset); `None` for
/// other expansions (`$(…)`, `${NAME:-…}`).
fn expand(text: &str, env: &[(OsString, OsString)]) -> Option<String> {
    let lookup = |name: &str| {
        env.iter()
            .rev()
            .find(|(k, _)| k.to_str() == Some(name))
            .map(|(_, v)| v.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, tail) = if let Some(braced) = after.strip_prefix('{') {
            let end = braced.find('}')?;
            (&braced[..end], &braced[end + 1..])
        } else {
            let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return None;
        }
        out.push_str(&lookup(name));
        rest = tail;
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect()
    }

    #[test]
    fn assignments_are_read_and_nothing_else_runs() {
        let t = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let f = t.path().join("env");
        let text = "export NODE_ENV=production\nexport PATH=\"$HOME/.local/bin:$PATH\"\nQUOTED='a $b c'\n# a comment\nexport BRACED=${HOME}/x # why\ntouch /tmp/pwned\nexport BAD=$(id)\nexport TWO=a b\nexport A-B=1\nexport ESC=\"say \\\"hi\\\"\"\n";
        std::fs::write(&f, text).unwrap_or_else(|e| panic!("{e}"));
        let mut env = env_of(&[("PATH", "/bin"), ("HOME", "/h")]);
        apply(&f, &mut env);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.to_string_lossy().into_owned());
        assert_eq!(get("NODE_ENV").as_deref(), Some("production"));
        assert_eq!(get("PATH").as_deref(), Some("/h/.local/bin:/bin"));
        assert_eq!(get("QUOTED").as_deref(), Some("a $b c"));
        assert_eq!(get("BRACED").as_deref(), Some("/h/x"));
        assert_eq!(get("ESC").as_deref(), Some("say \"hi\""));
        for absent in ["BAD", "TWO", "A-B"] {
            assert_eq!(get(absent), None, "{absent}");
        }
        apply(&t.path().join("missing"), &mut env);
    }
}
