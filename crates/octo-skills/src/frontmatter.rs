//! The YAML block between `---` lines at the top of a skill or command file, read with a real
//! YAML parser, and the fields octo (and Claude Code) use from it.

use crate::error::{FileErrorKind, SkillFileError};
use yaml_serde::Value;

/// The fields of a frontmatter block. Unknown fields are ignored, as Claude Code does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Front {
    /// `name`.
    pub name: Option<String>,
    /// `description` (whitespace runs collapsed).
    pub description: Option<String>,
    /// `allowed-tools`: a list, or one string separated by commas or spaces.
    pub allowed_tools: Vec<String>,
    /// `argument-hint`.
    pub argument_hint: Option<String>,
    /// `model`.
    pub model: Option<String>,
    /// `disable-model-invocation`.
    pub disable_model_invocation: bool,
    /// `user-invocable` (default true).
    pub user_invocable: bool,
}

/// A file split into its frontmatter text and its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split<'a> {
    /// The YAML between the fences, if the file starts with one.
    pub yaml: Option<&'a str>,
    /// Everything after the closing fence (the whole file without frontmatter).
    pub body: &'a str,
    /// The line the body starts on (1-based), for messages.
    pub body_line: usize,
}

/// Splits `text` at its frontmatter fences. A file that opens a fence and never closes it is an
/// error.
pub fn split(text: &str) -> Result<Split<'_>, SkillFileError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first_end = text.find('\n').unwrap_or(text.len());
    if text[..first_end].trim_end() != "---" {
        return Ok(Split { yaml: None, body: text, body_line: 1 });
    }
    let mut offset = (first_end + 1).min(text.len());
    let mut line = 2;
    while offset < text.len() {
        let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
        let l = text[offset..end].trim_end();
        if l == "---" || l == "..." {
            let body_start = (end + 1).min(text.len());
            return Ok(Split {
                yaml: Some(&text[first_end + 1..offset]),
                body: &text[body_start..],
                body_line: line + 1,
            });
        }
        offset = end + 1;
        line += 1;
    }
    Err(SkillFileError::new(
        FileErrorKind::Frontmatter,
        "the frontmatter opened by `---` on line 1 is never closed by another `---` line",
    ))
}

/// Parses a frontmatter block.
pub fn parse(yaml: &str) -> Result<Front, SkillFileError> {
    fields(yaml).map_err(|message| SkillFileError::new(FileErrorKind::Frontmatter, message))
}

/// The fields of a frontmatter block.
fn fields(yaml: &str) -> Result<Front, String> {
    let value = value(yaml)?;
    let map = match value {
        Value::Mapping(m) => m,
        Value::Null => return Ok(Front { user_invocable: true, ..Front::default() }),
        _ => return Err("the frontmatter is not a YAML mapping of `field: value` lines".into()),
    };
    let get = |key: &str| map.get(key).filter(|v| !v.is_null());
    let text = |key: &str| -> Result<Option<String>, String> {
        match get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(Value::Bool(b)) => Ok(Some(b.to_string())),
            Some(_) => Err(format!("`{key}` must be text")),
        }
    };
    let flag = |key: &str, default: bool| -> Result<bool, String> {
        match get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(true),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(false),
            Some(_) => Err(format!("`{key}` must be true or false")),
        }
    };
    let allowed_tools = match get("allowed-tools").or_else(|| get("allowed_tools")) {
        None => Vec::new(),
        Some(Value::String(s)) => split_tools(s),
        Some(Value::Sequence(items)) => {
            let mut out = Vec::new();
            for item in items {
                match item {
                    Value::String(s) => out.extend(split_tools(s)),
                    _ => return Err("`allowed-tools` must be a list of tool names".into()),
                }
            }
            out
        }
        Some(_) => return Err("`allowed-tools` must be a tool list (`Read, Grep, Bash(git:*)`)".into()),
    };
    Ok(Front {
        name: text("name")?.map(|s| s.trim().to_owned()),
        description: text("description")?.map(|d| d.split_whitespace().collect::<Vec<_>>().join(" ")),
        allowed_tools,
        argument_hint: match get("argument-hint") {
            // `[file]` is a one-item YAML list: keep the brackets the author wrote.
            Some(Value::Sequence(items)) => Some(
                items
                    .iter()
                    .map(|i| match i {
                        Value::String(s) => format!("[{s}]"),
                        _ => "[…]".to_owned(),
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            _ => text("argument-hint")?,
        },
        model: text("model")?.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty() && s != "inherit"),
        disable_model_invocation: flag("disable-model-invocation", false)?,
        user_invocable: flag("user-invocable", true)?,
    })
}

/// A frontmatter block as a YAML value. Claude Code's own plugins write values YAML cannot
/// read — an unquoted `description:` holding `: ` and `<example>` blocks, `argument-hint:
/// [pr-number] [priority]` — and Claude Code accepts them, so when the whole block is not YAML it
/// is read line by line: each unindented `key: rest` line is one field whose value is `rest`
/// read as YAML when that gives a plain value or a list, else `rest` as written; indented lines
/// below a key belong to it.
pub fn value(yaml: &str) -> Result<Value, SkillFileError> {
    match yaml_serde::from_str(yaml) {
        Ok(v) => Ok(v),
        Err(e) => lenient(yaml).ok_or_else(|| {
            SkillFileError::new(FileErrorKind::Frontmatter, format!("the frontmatter is not valid YAML: {e}"))
        }),
    }
}

/// The line-by-line reading of [`value`]; `None` when a line is neither `key: value` nor part of
/// the value above it.
fn lenient(yaml: &str) -> Option<Value> {
    let mut fields: Vec<(String, String, Vec<&str>)> = Vec::new();
    for line in yaml.lines() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t', '-']) {
            fields.last_mut()?.2.push(line);
            continue;
        }
        let (key, rest) = line.split_once(':')?;
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return None;
        }
        fields.push((key.to_owned(), rest.trim().to_owned(), Vec::new()));
    }
    let mut map = yaml_serde::Mapping::new();
    for (key, rest, below) in fields {
        let v = if rest.is_empty() && !below.is_empty() {
            yaml_serde::from_str(&below.join("\n")).unwrap_or_else(|_| Value::String(joined(&below)))
        } else {
            let mut text = rest;
            if !below.is_empty() {
                text = format!("{text} {}", joined(&below));
            }
            match yaml_serde::from_str::<Value>(&text) {
                Ok(v @ (Value::Bool(_) | Value::Number(_) | Value::Null | Value::Sequence(_))) => v,
                Ok(Value::String(s)) if !text.contains(": ") => Value::String(s),
                _ => Value::String(text),
            }
        };
        map.insert(Value::String(key), v);
    }
    Some(Value::Mapping(map))
}

/// Indented continuation lines as one line of text.
fn joined(lines: &[&str]) -> String {
    lines.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ")
}

/// Splits `Read, Grep Bash(git diff *)` into entries: commas and spaces separate, except inside
/// parentheses.
pub fn split_tools(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut cur)),
            c if c.is_whitespace() && depth == 0 => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter().map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_split_and_unclosed_ones_are_errors() {
        let s = split("---\nname: x\n---\nbody\n").unwrap();
        assert_eq!(s.yaml, Some("name: x\n"));
        assert_eq!(s.body, "body\n");
        assert_eq!(s.body_line, 4);
        assert_eq!(split("no front\n").unwrap().yaml, None);
        assert!(split("---\nname: x\nbody").is_err());
        assert_eq!(split("---\n---\n").unwrap().yaml, Some(""));
    }

    #[test]
    fn values_yaml_cannot_read_are_taken_as_claude_code_takes_them() {
        // As pr-review-toolkit's agents write them: unquoted, with `: ` and `<example>` blocks.
        let f = parse(
            "name: code-reviewer\ndescription: Use this agent when code was written. Examples: <example>Context: a change. user: \"Review it\" assistant: \"I'll use it\"</example>\nmodel: opus\ncolor: green\ntools: Read, Grep\n",
        )
        .unwrap();
        assert_eq!(f.name.as_deref(), Some("code-reviewer"));
        let d = f.description.unwrap();
        assert!(d.starts_with("Use this agent when") && d.ends_with("</example>"), "{d}");
        assert_eq!(f.model.as_deref(), Some("opus"));
        // A value continued on indented lines, a list below its key, flags and names with spaces.
        let f = parse(
            "name: Writing Hookify Rules\ndescription: Write rules: the\n  second line\nallowed-tools:\n  - Read\n  - Bash(git:*)\nuser-invocable: false\n",
        )
        .unwrap();
        assert_eq!(f.name.as_deref(), Some("Writing Hookify Rules"));
        assert_eq!(f.description.as_deref(), Some("Write rules: the second line"));
        assert_eq!(f.allowed_tools, ["Read", "Bash(git:*)"]);
        assert!(!f.user_invocable);
    }

    #[test]
    fn fields_in_every_spelling_claude_code_accepts() {
        let f = parse(
            "name: review\ndescription: >\n  Reviews code\n  carefully.\nallowed-tools: Read, Grep Bash(git diff *)\nuser-invocable: false\ndisable-model-invocation: \"true\"\nmodel: inherit\n",
        )
        .unwrap();
        assert_eq!(f.name.as_deref(), Some("review"));
        assert_eq!(f.description.as_deref(), Some("Reviews code carefully."));
        assert_eq!(f.allowed_tools, ["Read", "Grep", "Bash(git diff *)"]);
        assert!(!f.user_invocable && f.disable_model_invocation);
        assert_eq!(f.model, None);
        let f = parse("allowed-tools:\n  - Read\n  - Bash(git:*)\n").unwrap();
        assert_eq!(f.allowed_tools, ["Read", "Bash(git:*)"]);
        assert!(parse("name: x\nnot a field\n").unwrap_err().message.contains("not valid YAML"));
        assert_eq!(parse("argument-hint: [file]\n").unwrap().argument_hint.as_deref(), Some("[file]"));
        let f = parse("name: x\nargument-hint: [pr-number] [priority]\n").unwrap();
        assert_eq!(f.argument_hint.as_deref(), Some("[pr-number] [priority]"));
        assert!(parse("argument-hint: [a] [b]\n[oops\n").is_err());
        assert!(parse("- a\n- b\n").is_err());
        assert!(parse("name: {a: 1}\n").unwrap_err().message.contains("`name` must be text"));
    }
}
