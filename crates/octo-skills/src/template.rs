//! The body of a skill or command as a template: `$ARGUMENTS`, `$ARGUMENTS[N]` and `$N` (both from
//! 0, as Claude Code counts) filled
//! with what the user typed, `` !`command` `` spans whose output replaces them (run by the
//! application through its permission engine), and `@path` mentions whose file is included.
//!
//! The structure is read from the file before any argument is put in, so an argument can never
//! add a command of its own; inside a command an argument is never spliced into the text: it is a
//! shell variable (`OCTO_ARGUMENTS`, `OCTO_ARG_1`…, `OCTO_SKILL_DIR`), set single-quoted before
//! the command and expanded by the shell where the template names it.

use crate::error::{FileErrorKind, SkillFileError};

/// One piece of an expanded body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Text, arguments substituted.
    Text(String),
    /// A command to run; its output takes its place.
    Run(String),
    /// A file to include (`@path`, as written), when it exists.
    Include(String),
}

/// A parsed body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Run(String),
}

impl Template {
    /// Reads `body`: a `` !` `` without its closing backtick on the same line is an error naming
    /// the line (`first_line` is the body's first line in the file).
    pub fn parse(body: &str, first_line: usize) -> Result<Self, SkillFileError> {
        let mut pieces = Vec::new();
        let mut text = String::new();
        // A fenced block opened by a line "```!" runs as a whole, as Claude Code runs it.
        let mut block: Option<(usize, String)> = None;
        for (i, line) in body.split_inclusive('\n').enumerate() {
            if let Some((_, script)) = block.as_mut() {
                if line.trim() == "```" {
                    if let Some((_, script)) = block.take() {
                        if !text.is_empty() {
                            pieces.push(Piece::Text(std::mem::take(&mut text)));
                        }
                        pieces.push(Piece::Run(script.trim_end().to_owned()));
                    }
                } else {
                    script.push_str(line);
                }
                continue;
            }
            if line.trim_end() == "```!" {
                block = Some((first_line + i, String::new()));
                continue;
            }
            let mut rest = line;
            while let Some(at) = find_bang(rest) {
                text.push_str(&rest[..at]);
                let after = &rest[at + 2..];
                let Some(close) = after.find('`') else {
                    return Err(SkillFileError::new(
                        FileErrorKind::Template,
                        format!(
                            "line {}: the command started by !` is never closed by a backtick on the same line",
                            first_line + i
                        ),
                    ));
                };
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(Piece::Run(after[..close].to_owned()));
                rest = &after[close + 1..];
            }
            text.push_str(rest);
        }
        if let Some((line, _)) = block {
            return Err(SkillFileError::new(
                FileErrorKind::Template,
                format!("line {line}: the command block opened by ```! is never closed by a ``` line"),
            ));
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(Self { pieces })
    }

    /// Whether the body runs any command.
    pub fn runs_commands(&self) -> bool {
        self.pieces.iter().any(|p| matches!(p, Piece::Run(_)))
    }

    /// Fills in `arguments`. When the body names no argument and some were given, they are
    /// appended as `ARGUMENTS: …` (as Claude Code does). `dirs` replace `${CLAUDE_SKILL_DIR}`,
    /// `${OCTO_SKILL_DIR}` and `${CLAUDE_PLUGIN_ROOT}`; `mentions` turns `@path` words into [`Part::Include`] when `exists`
    /// says the file is there.
    pub fn expand(
        &self,
        arguments: &str,
        dir: Dirs<'_>,
        mentions: Option<&dyn Fn(&str) -> bool>,
    ) -> Vec<Part> {
        let args = split_args(arguments);
        let mut used = false;
        let mut parts = Vec::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) => {
                    let filled = substitute(t, arguments, &args, dir, &mut used, |_, v| v.to_owned());
                    match mentions {
                        Some(exists) => parts.extend(mention_parts(&filled, exists)),
                        None => parts.push(Part::Text(filled)),
                    }
                }
                Piece::Run(c) => {
                    // Inside a command a value is never spliced into the text: it becomes a shell
                    // variable, set (single-quoted) before the command and expanded by the shell
                    // where the template names it, whatever quotes surround it there.
                    let mut vars: Vec<(String, String)> = Vec::new();
                    let body = substitute(c, arguments, &args, dir, &mut used, |name, value| {
                        if !vars.iter().any(|(n, _)| n == name) {
                            vars.push((name.to_owned(), value.to_owned()));
                        }
                        format!("${{{name}}}")
                    });
                    let set: String = vars.iter().map(|(n, v)| format!("{n}={}; ", quote(v))).collect();
                    parts.push(Part::Run(format!("{set}{body}")));
                }
            }
        }
        if !used && !arguments.trim().is_empty() {
            parts.push(Part::Text(format!("\n\nARGUMENTS: {}", arguments.trim())));
        }
        merge_text(parts)
    }
}

/// The folders a template may name: its skill's (`${CLAUDE_SKILL_DIR}`) and its plugin's
/// (`${CLAUDE_PLUGIN_ROOT}`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Dirs<'a> {
    /// The skill's folder.
    pub skill: Option<&'a str>,
    /// The plugin's folder.
    pub plugin: Option<&'a str>,
}

/// The next `` !` `` in `s` that starts a command (at the start or after a space or bracket).
fn find_bang(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    (0..b.len().saturating_sub(1)).find(|&i| {
        b[i] == b'!'
            && b[i + 1] == b'`'
            && (i == 0 || b[i - 1].is_ascii_whitespace() || b"([{\"'>".contains(&b[i - 1]))
    })
}

/// Replaces the placeholders in `t`; `wrap` prepares a value (quoting inside commands).
fn substitute(
    t: &str,
    all: &str,
    args: &[String],
    dir: Dirs<'_>,
    used: &mut bool,
    mut wrap: impl FnMut(&str, &str) -> String,
) -> String {
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(r) = after.strip_prefix("ARGUMENTS") {
            *used = true;
            // `$ARGUMENTS[N]`: the Nth argument, from 0.
            if let Some((n, r2)) = r.strip_prefix('[').and_then(|x| x.split_once(']')) {
                if let Ok(n) = n.trim().parse::<usize>() {
                    out.push_str(&wrap(
                        &format!("OCTO_ARG_{}", n + 1),
                        args.get(n).map_or("", String::as_str),
                    ));
                    rest = r2;
                    continue;
                }
            }
            out.push_str(&wrap("OCTO_ARGUMENTS", all.trim()));
            rest = r;
            continue;
        }
        // `$N`: shorthand for `$ARGUMENTS[N]`, from 0 as Claude Code counts; one beyond the
        // arguments given stays as written (as Claude Code leaves it).
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            if let Some(value) =
                after[..digits].parse::<usize>().ok().and_then(|n| args.get(n).map(|v| (n, v)))
            {
                let (n, v) = value;
                *used = true;
                out.push_str(&wrap(&format!("OCTO_ARG_{}", n + 1), v));
                rest = &after[digits..];
                continue;
            }
        }
        if let (Some(d), Some(r)) = (
            dir.skill,
            after.strip_prefix("{CLAUDE_SKILL_DIR}").or_else(|| after.strip_prefix("{OCTO_SKILL_DIR}")),
        ) {
            out.push_str(&wrap("OCTO_SKILL_DIR", d));
            rest = r;
            continue;
        }
        if let (Some(d), Some(r)) = (dir.plugin, after.strip_prefix("{CLAUDE_PLUGIN_ROOT}")) {
            out.push_str(&wrap("CLAUDE_PLUGIN_ROOT", d));
            rest = r;
            continue;
        }
        out.push('$');
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Splits arguments like a shell: spaces separate, quotes group (an unclosed quote runs to the
/// end), a backslash escapes the next character.
pub fn split_args(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => cur.extend(chars.next()),
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                cur.extend(chars.next());
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// `s` as one shell word.
pub fn quote(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b)) {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Splits text at `@path` words whose file exists.
fn mention_parts(text: &str, exists: &dyn Fn(&str) -> bool) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut last = 0;
    let mut i = 0;
    let b = text.as_bytes();
    while i < b.len() {
        if b[i] == b'@' && (i == 0 || b[i - 1].is_ascii_whitespace() || b[i - 1] == b'(') {
            let end = text[i + 1..]
                .find(|c: char| c.is_whitespace() || c == ')' || c == ',' || c == '`')
                .map_or(text.len(), |e| i + 1 + e);
            let path = text[i + 1..end].trim_end_matches(['.', ':', ';']);
            if !path.is_empty() && exists(path) {
                parts.push(Part::Text(text[last..i].to_owned()));
                parts.push(Part::Include(path.to_owned()));
                last = i + 1 + path.len();
                i = last;
                continue;
            }
        }
        i += 1;
    }
    parts.push(Part::Text(text[last..].to_owned()));
    parts
}

fn merge_text(parts: Vec<Part>) -> Vec<Part> {
    let mut out: Vec<Part> = Vec::new();
    for p in parts {
        match (out.last_mut(), p) {
            (_, Part::Text(t)) if t.is_empty() => {}
            (Some(Part::Text(a)), Part::Text(t)) => a.push_str(&t),
            (_, p) => out.push(p),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(parts: &[Part]) -> String {
        parts
            .iter()
            .map(|p| match p {
                Part::Text(t) => t.clone(),
                Part::Run(c) => format!("<run {c}>"),
                Part::Include(f) => format!("<file {f}>"),
            })
            .collect()
    }

    #[test]
    fn arguments_fill_every_placeholder_and_stay_text() {
        let t = Template::parse(
            "Fix $ARGUMENTS; first $0, second $1, zeroth $ARGUMENTS[0], cost $9x, tenth [$ARGUMENTS[9]] $",
            1,
        )
        .unwrap();
        let parts = t.expand("\"a b\" 'it''s' \n!`rm -rf /`", Dirs::default(), None);
        assert_eq!(parts.len(), 1, "arguments never become commands: {parts:?}");
        let s = text(&parts);
        assert!(s.starts_with("Fix \"a b\" 'it''s' \n!`rm -rf /`; first a b, second its, zeroth a b"), "{s}");
        // `$9` beyond the arguments stays as written; `$ARGUMENTS[9]` is empty.
        assert!(s.ends_with("cost $9x, tenth [] $"), "{s}");
    }

    #[test]
    fn arguments_are_appended_when_not_named() {
        let t = Template::parse("Review the diff.\n", 1).unwrap();
        assert_eq!(
            text(&t.expand("src/lib.rs", Dirs::default(), None)),
            "Review the diff.\n\n\nARGUMENTS: src/lib.rs"
        );
        assert_eq!(text(&t.expand("  ", Dirs::default(), None)), "Review the diff.\n");
    }

    #[test]
    fn commands_are_found_and_arguments_in_them_quoted() {
        let t = Template::parse("Status:\n!`git status --short`\nLog: !`git log -n 3 $0` done\nnot!`x`\n", 4)
            .unwrap();
        assert!(t.runs_commands());
        let parts = t.expand("main; rm -rf ~", Dirs::default(), None);
        assert_eq!(
            text(&parts),
            "Status:\n<run git status --short>\nLog: <run OCTO_ARG_1='main;'; git log -n 3 ${OCTO_ARG_1}> done\nnot!`x`\n"
        );
        let err = Template::parse("ok\nthen !`git status\n", 7).unwrap_err();
        assert!(err.message.contains("line 8"), "{err}");
    }

    #[test]
    fn a_bang_fenced_block_runs_as_one_command() {
        let t = Template::parse("Context:\n```!\ngit status --short\ngit diff $0\n```\nNow review.\n", 3)
            .unwrap();
        assert_eq!(
            text(&t.expand("HEAD~1", Dirs::default(), None)),
            "Context:\n<run OCTO_ARG_1='HEAD~1'; git status --short\ngit diff ${OCTO_ARG_1}>Now review.\n"
        );
        // An ordinary fence is text.
        let t = Template::parse("```sh\nmake\n```\n", 1).unwrap();
        assert!(!t.runs_commands());
        let err = Template::parse("a\n```!\nls\n", 5).unwrap_err();
        assert!(err.message.contains("line 6") && err.message.contains("never closed"), "{}", err.message);
    }

    #[test]
    fn mentions_include_existing_files_only() {
        let t =
            Template::parse("Look at @src/lib.rs and @missing.rs, mail a@b.c (@src/lib.rs).\n", 1).unwrap();
        let parts = t.expand("", Dirs::default(), Some(&|p: &str| p == "src/lib.rs"));
        assert_eq!(
            text(&parts),
            "Look at <file src/lib.rs> and @missing.rs, mail a@b.c (<file src/lib.rs>).\n"
        );
    }

    #[test]
    fn skill_dir_and_quoting() {
        let t = Template::parse("run ${CLAUDE_SKILL_DIR}/x.sh !`sh ${CLAUDE_SKILL_DIR}/y.sh`", 1).unwrap();
        assert_eq!(
            text(&t.expand("", Dirs { skill: Some("/s k"), plugin: None }, None)),
            "run /s k/x.sh <run OCTO_SKILL_DIR='/s k'; sh ${OCTO_SKILL_DIR}/y.sh>"
        );
        // Whatever quotes surround it in the template, a value stays one literal value.
        let t = Template::parse("!`gh pr view \"$ARGUMENTS\"` and !`echo '$0'`", 1).unwrap();
        let parts = t.expand("$(curl x|sh) it's", Dirs::default(), None);
        assert_eq!(
            text(&parts),
            "<run OCTO_ARGUMENTS='$(curl x|sh) it'\\''s'; gh pr view \"${OCTO_ARGUMENTS}\"> and <run OCTO_ARG_1='$(curl'; echo '${OCTO_ARG_1}'>"
        );
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(split_args(r#"a "b \" c" 'd e' f\ g "open"#), ["a", "b \" c", "d e", "f g", "open"]);
    }
}
