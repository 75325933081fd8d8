//! Claude Code's tool names, as skills, commands, agent files and hooks write them
//! (`Read`, `Edit`, `Bash(git:*)`, `WebFetch(domain:docs.rs)`), mapped to octo's tools and
//! permission rules, and calls shown to hooks written for Claude Code. Nothing here is a
//! hand-kept table: each built-in tool declares the names it answers to
//! ([`octo_agent::ToolMeta::aliases`]), the tool it comes with ([`octo_agent::ToolMeta::follows`]),
//! the arguments Claude Code names differently ([`octo_agent::ToolMeta::renamed_args`]) and those
//! it gives in milliseconds ([`octo_agent::ToolMeta::millisecond_args`]); the mapping is read from
//! the default registry. octo's own names and `mcp__server__tool` names pass through.

use octo_agent::{Subject, ToolMeta};
use std::sync::OnceLock;

/// An `allowed-tools` entry that names no tool, or is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AllowedToolError {
    /// `Bash(git` without its `)`.
    #[error("`{0}` has no closing parenthesis")]
    Unclosed(String),
    /// A name octo has no tool for.
    #[error("`{0}` is no tool octo has")]
    NoTool(String),
}

/// Claude Code's names for octo tools that are not built in here, and so are not in the
/// registry this module reads: the sub-agent tool (octo-app; Claude Code calls it `Task`, and
/// `Agent` since 2.1) and the skill tool (octo-skills).
pub const OUTSIDE: &[(&str, &str)] = &[("Task", "task"), ("Agent", "task"), ("Skill", "skill")];

/// The built-in tools' names and metadata, in the order the model sees them (read once, when
/// first asked).
fn builtin() -> &'static [(String, ToolMeta)] {
    static TABLE: OnceLock<Vec<(String, ToolMeta)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let registry = crate::default_registry(crate::ToolsConfig::default());
        registry.names().filter_map(|n| registry.meta(n).map(|m| (n.to_owned(), m.clone()))).collect()
    })
}

/// The permission rules (`terminal(git*)`, `read_file`) that one `allowed-tools` entry stands
/// for: the tools that answer to its name (the first takes the specifier) and the tools that
/// come with them. An entry naming no tool octo has is an error that says so.
pub fn rules_for(entry: &str) -> Result<Vec<String>, AllowedToolError> {
    rules_for_at(entry, false)
}

/// [`rules_for`] for an entry of the user's own `~/.claude/settings.json`: there a path that
/// starts with `/` is the home's (`Read(/src/**)` is `~/src/**`), as Claude Code reads it
/// relative to the folder holding the settings' `.claude`.
pub fn rules_for_user_settings(entry: &str) -> Result<Vec<String>, AllowedToolError> {
    rules_for_at(entry, true)
}

/// [`rules_for`] for a deny or ask entry (`in_home`: of the user's own settings): one with a
/// specifier narrows the main tool alone (`Bash(rm:*)` leaves reading a command's output and
/// stopping it alone); a whole tool takes its companions with it.
pub fn narrowing_rules_for(entry: &str, in_home: bool) -> Result<Vec<String>, AllowedToolError> {
    let mut rules = rules_for_at(entry, in_home)?;
    if rules.first().is_some_and(|r| r.contains('(')) {
        rules.truncate(1);
    }
    Ok(rules)
}

/// An `--allowedTools` entry's rules, or with `deny` a `--disallowedTools` entry's (narrowing:
/// `Bash(rm:*)` leaves a command's output and stopping it alone).
pub fn flag_rules_for(entry: &str, deny: bool) -> Result<Vec<String>, AllowedToolError> {
    if deny {
        narrowing_rules_for(entry, false)
    } else {
        rules_for(entry)
    }
}

fn rules_for_at(entry: &str, in_home: bool) -> Result<Vec<String>, AllowedToolError> {
    let entry = entry.trim();
    let (tool, spec) = match entry.find('(') {
        Some(i) if entry.ends_with(')') => (&entry[..i], Some(entry[i + 1..entry.len() - 1].trim())),
        Some(_) => return Err(AllowedToolError::Unclosed(entry.to_owned())),
        None => (entry, None),
    };
    let table = builtin();
    let main: Vec<&(String, ToolMeta)> =
        table.iter().filter(|(_, m)| m.aliases.iter().any(|a| a == tool)).collect();
    let Some((first, first_meta)) = main.first().copied() else {
        if table.iter().any(|(n, _)| n == tool) || tool.starts_with("mcp__") {
            return Ok(vec![entry.to_owned()]);
        }
        if let Some((_, octo)) = OUTSIDE.iter().find(|(claude, _)| *claude == tool) {
            return Ok(vec![(*octo).to_owned()]);
        }
        return Err(AllowedToolError::NoTool(tool.to_owned()));
    };
    let companions =
        table.iter().filter(|(_, m)| m.follows.as_deref() == Some(first.as_str())).map(|(n, _)| n);
    let rest = main[1..].iter().map(|(n, _)| n).chain(companions).cloned();
    let spec = spec.filter(|s| !s.is_empty() && *s != "*");
    let head = match spec {
        None => first.clone(),
        Some(spec) => format!("{first}({})", specifier(&first_meta.subject, spec, in_home)),
    };
    Ok(std::iter::once(head).chain(rest).collect())
}

/// A Claude Code specifier in octo's rule syntax: a command's `git:*` (the old prefix form) is
/// the prefix `git*`; a URL's `domain:docs.rs` is the host `docs.rs`.
fn specifier(subject: &Subject, spec: &str, in_home: bool) -> String {
    match subject {
        Subject::Command { .. } => {
            spec.strip_suffix(":*").map_or_else(|| spec.to_owned(), |p| format!("{p}*"))
        }
        Subject::Url { .. } => spec.strip_prefix("domain:").unwrap_or(spec).to_owned(),
        Subject::Path { .. } => match spec.strip_prefix('/').filter(|r| in_home && !r.starts_with('/')) {
            Some(rest) => format!("~/{rest}"),
            None => path_specifier(spec),
        },
        _ => spec.to_owned(),
    }
}

/// A Claude Code path specifier, which follows gitignore's reading, in octo's glob syntax (a
/// relative glob is the workspace's): `//etc/x` is the absolute `/etc/x`; `/src/**` and
/// `./src/**` are the project's `src/**`; a bare name without a slash (`.env`, `*.pem`)
/// matches at any depth (`**/.env`); `~/` stays the home.
fn path_specifier(spec: &str) -> String {
    if let Some(abs) = spec.strip_prefix("//") {
        return format!("/{abs}");
    }
    if spec.starts_with("~/") {
        return spec.to_owned();
    }
    let mut rel = spec;
    while let Some(r) = rel.strip_prefix("./") {
        rel = r;
    }
    if let Some(r) = rel.strip_prefix('/') {
        return r.to_owned();
    }
    let body = rel.trim_end_matches('/');
    if body.contains('/') || body.starts_with("**") {
        rel.to_owned()
    } else {
        format!("**/{rel}")
    }
}

/// The names Claude Code gives an octo tool (`terminal` is `Bash`), for matching hook and
/// settings files written for Claude Code; empty for tools it does not have.
pub fn claude_names(tool: &str) -> &'static [String] {
    builtin().iter().find(|(n, _)| n == tool).map_or(&[], |(_, m)| m.aliases.as_slice())
}

/// The built-in tool `tool`'s metadata.
fn meta_of(tool: &str) -> Option<&'static ToolMeta> {
    builtin().iter().find(|(n, _)| n == tool).map(|(_, m)| m)
}

/// A call as Claude Code's hooks see it: the Claude Code name and the arguments under the names
/// and units the tool declares for it (`read_file`'s `path` is `file_path`; `Bash`'s `timeout` is
/// in milliseconds, octo's in seconds); `None` for a tool Claude Code does not have (it keeps
/// octo's name and arguments).
pub fn hook_call(tool: &str, input: &serde_json::Value) -> Option<(String, serde_json::Value)> {
    let meta = meta_of(tool)?;
    // An edit with a list of edits is Claude Code's MultiEdit (one of the tool's names).
    let multi = input.get("edits").is_some() && meta.aliases.iter().any(|a| a == "MultiEdit");
    let name = if multi { "MultiEdit" } else { meta.aliases.first()?.as_str() };
    let mut out = input.clone();
    if let Some(obj) = out.as_object_mut() {
        for (ours, theirs) in &meta.renamed_args {
            if let Some(v) = obj.remove(ours) {
                obj.insert(theirs.clone(), v);
            }
        }
        for field in &meta.millisecond_args {
            if let Some(secs) = obj.get(field).and_then(serde_json::Value::as_f64) {
                obj.insert(field.clone(), serde_json::json!((secs * 1000.0).round() as u64));
            }
        }
    }
    Some((name.to_owned(), out))
}

/// A hook's `updatedInput` in octo's names for `tool`: Claude Code's names and units taken
/// back (a hook written for Claude Code answers in them); octo's own names pass through.
pub fn hook_input(tool: &str, updated: serde_json::Value) -> serde_json::Value {
    let mut out = updated;
    let Some(meta) = meta_of(tool).filter(|m| !m.aliases.is_empty()) else { return out };
    if let Some(obj) = out.as_object_mut() {
        for (ours, theirs) in &meta.renamed_args {
            if let Some(v) = obj.remove(theirs) {
                obj.insert(ours.clone(), v);
            }
        }
        for field in &meta.millisecond_args {
            if let Some(ms) = obj.get(field).and_then(serde_json::Value::as_f64) {
                obj.insert(field.clone(), serde_json::json!(((ms / 1000.0).ceil() as u64).max(1)));
            }
        }
    }
    out
}

/// What a PostToolUse hook sees as `tool_response`, in the shape Claude Code gives that kind of
/// tool (a command: `stdout`, `stderr`, `interrupted`; a file tool Claude Code has: `filePath`,
/// `success`), with octo's own `output` and `is_error` beside.
pub fn hook_response(
    tool: &str,
    input: &serde_json::Value,
    output: &str,
    is_error: bool,
) -> serde_json::Value {
    let mut r = serde_json::json!({"output": output, "is_error": is_error});
    let Some(obj) = r.as_object_mut() else { return r };
    let Some(meta) = meta_of(tool).filter(|m| !m.aliases.is_empty()) else { return r };
    match &meta.subject {
        Subject::Command { .. } => {
            obj.insert("stdout".into(), output.into());
            obj.insert("stderr".into(), "".into());
            obj.insert("interrupted".into(), false.into());
            obj.insert("isImage".into(), false.into());
        }
        Subject::Path { field, .. } if meta.renamed_args.iter().any(|(_, theirs)| theirs == "file_path") => {
            if let Some(p) = input.get(field) {
                obj.insert("filePath".into(), p.clone());
            }
            obj.insert("success".into(), (!is_error).into());
        }
        _ => {}
    }
    r
}

#[cfg(test)]
mod tests {
    use super::{
        claude_names, hook_call, hook_input, narrowing_rules_for, rules_for, rules_for_user_settings,
    };

    #[test]
    fn hook_calls_speak_claude_code_and_come_back_as_octo() {
        let (name, input) =
            hook_call("write_file", &serde_json::json!({"path": "a.rs", "content": "x"})).unwrap();
        assert_eq!(
            (name.as_str(), &input),
            ("Write", &serde_json::json!({"file_path": "a.rs", "content": "x"}))
        );
        let (name, input) =
            hook_call("terminal", &serde_json::json!({"command": "ls", "timeout": 5})).unwrap();
        assert_eq!((name.as_str(), &input["timeout"]), ("Bash", &serde_json::json!(5000)));
        let edits = serde_json::json!({"path": "a", "edits": [{"old_string": "a", "new_string": "b"}]});
        assert_eq!(hook_call("edit_file", &edits).unwrap().0, "MultiEdit");
        assert_eq!(hook_call("edit_file", &serde_json::json!({"path": "a"})).unwrap().0, "Edit");
        assert_eq!(hook_call("octo_only_tool", &serde_json::json!({})), None);
        let back = hook_input("terminal", serde_json::json!({"command": "ls -la", "timeout": 1500}));
        assert_eq!(back, serde_json::json!({"command": "ls -la", "timeout": 2}));
        let back = hook_input(
            "edit_file",
            serde_json::json!({"file_path": "b.rs", "old_string": "x", "new_string": "y"}),
        );
        assert_eq!(back["path"], "b.rs");
        assert_eq!(
            hook_input("octo_only_tool", serde_json::json!({"file_path": 1})),
            serde_json::json!({"file_path": 1})
        );
    }

    #[test]
    fn responses_take_the_shape_of_the_tool_kind() {
        let bash = super::hook_response("terminal", &serde_json::json!({"command": "ls"}), "a\n", false);
        assert_eq!((bash["stdout"].as_str(), bash["interrupted"].as_bool()), (Some("a\n"), Some(false)));
        let read = super::hook_response("read_file", &serde_json::json!({"path": "a.rs"}), "x", false);
        assert_eq!((read["filePath"].as_str(), read["success"].as_bool()), (Some("a.rs"), Some(true)));
        let own = super::hook_response("octo_only_tool", &serde_json::json!({}), "x", true);
        assert_eq!(own, serde_json::json!({"output": "x", "is_error": true}));
        let (_, id) = hook_call("terminal_output", &serde_json::json!({"id": "b1"})).unwrap();
        assert_eq!(id, serde_json::json!({"bash_id": "b1"}));
    }

    #[test]
    fn octo_tools_have_their_claude_code_names() {
        assert_eq!(claude_names("terminal"), ["Bash"]);
        assert!(claude_names("edit_file").iter().any(|n| n == "MultiEdit"));
        assert!(claude_names("mcp__x__y").is_empty());
    }

    #[test]
    fn claude_code_names_map_to_octo_rules() {
        assert_eq!(rules_for("Read").unwrap(), ["read_file"]);
        assert_eq!(rules_for("Edit").unwrap(), ["edit_file"]);
        assert_eq!(rules_for("MultiEdit").unwrap(), ["edit_file"]);
        assert_eq!(rules_for("Bash(git:*)").unwrap(), ["terminal(git*)", "terminal_output", "kill_shell"]);
        assert_eq!(rules_for("Bash(git diff *)").unwrap()[0], "terminal(git diff *)");
        assert_eq!(rules_for("Bash(*)").unwrap()[0], "terminal");
        assert_eq!(rules_for("WebFetch(domain:docs.rs)").unwrap(), ["web_fetch(docs.rs)"]);
        assert_eq!(rules_for("Read(src/**)").unwrap(), ["read_file(src/**)"]);
        // Paths as gitignore reads them, as Claude Code does.
        assert_eq!(rules_for("Read(./.env)").unwrap(), ["read_file(**/.env)"]);
        assert_eq!(rules_for("Read(.env)").unwrap(), ["read_file(**/.env)"]);
        assert_eq!(rules_for("Read(*.pem)").unwrap(), ["read_file(**/*.pem)"]);
        assert_eq!(rules_for("Read(./secrets/**)").unwrap(), ["read_file(secrets/**)"]);
        assert_eq!(rules_for("Edit(/src/**/*.ts)").unwrap(), ["edit_file(src/**/*.ts)"]);
        assert_eq!(rules_for("Read(//etc/passwd)").unwrap(), ["read_file(/etc/passwd)"]);
        assert_eq!(rules_for("Read(~/.ssh/**)").unwrap(), ["read_file(~/.ssh/**)"]);
        assert_eq!(rules_for_user_settings("Read(/src/**)").unwrap(), ["read_file(~/src/**)"]);
        assert_eq!(rules_for_user_settings("Read(//etc/x)").unwrap(), ["read_file(/etc/x)"]);
        assert_eq!(rules_for("grep").unwrap(), ["grep"]);
        assert_eq!(rules_for("mcp__github__list_issues").unwrap(), ["mcp__github__list_issues"]);
        assert!(rules_for("Teleport").unwrap_err().to_string().contains("no tool"));
        assert_eq!(rules_for("Task").unwrap(), ["task"]);
        assert_eq!(rules_for("Skill").unwrap(), ["skill"]);
        assert!(rules_for("Bash(git").is_err());
        // Denying one command leaves reading and stopping the others alone.
        assert_eq!(narrowing_rules_for("Bash(rm:*)", false).unwrap(), ["terminal(rm*)"]);
        assert_eq!(
            narrowing_rules_for("Bash", false).unwrap(),
            ["terminal", "terminal_output", "kill_shell"]
        );
    }
}
