//! Claude Code's tool names, as skills, commands and agent files write them in `allowed-tools`
//! (`Read`, `Edit`, `Bash(git:*)`, `WebFetch(domain:docs.rs)`), mapped to octo's tools and
//! permission rules. octo's own names and `mcp__server__tool` names pass through.

/// The permission rules (`terminal(git*)`, `read_file`) that one `allowed-tools` entry stands
/// for. An entry naming no tool octo has is an error that says so.
pub fn rules_for(entry: &str) -> Result<Vec<String>, String> {
    let entry = entry.trim();
    let (tool, spec) = match entry.find('(') {
        Some(i) if entry.ends_with(')') => (&entry[..i], Some(entry[i + 1..entry.len() - 1].trim())),
        Some(_) => return Err(format!("`{entry}` has no closing parenthesis")),
        None => (entry, None),
    };
    let spec = spec.filter(|s| !s.is_empty() && *s != "*");
    let tools: &[&str] = match tool {
        "Bash" => &["terminal", "terminal_output", "kill_shell"],
        "BashOutput" => &["terminal_output"],
        "KillShell" | "KillBash" => &["kill_shell"],
        "Read" | "NotebookRead" => &["read_file"],
        "Write" => &["write_file"],
        "Edit" | "NotebookEdit" => &["edit_file", "multi_edit"],
        "MultiEdit" => &["multi_edit"],
        "Glob" => &["glob"],
        "Grep" => &["grep"],
        "LS" => &["list_dir"],
        "WebFetch" => &["web_fetch"],
        "WebSearch" => &["web_search"],
        "TodoWrite" | "TodoRead" => &["todo_write"],
        "AskUserQuestion" => &["ask_user"],
        other if crate::DEFAULT_TOOLS.contains(&other) || other.starts_with("mcp__") => {
            return Ok(vec![entry.to_owned()])
        }
        other => return Err(format!("`{other}` is no tool octo has")),
    };
    let Some(spec) = spec else { return Ok(tools.iter().map(|t| (*t).to_owned()).collect()) };
    // The specifier narrows the main tool; the companions (background output, kill) follow it.
    let first = tools[0];
    let spec = match tool {
        // `git:*` (the old prefix form) and `git *` are both prefixes.
        "Bash" => spec.strip_suffix(":*").map_or_else(|| spec.to_owned(), |p| format!("{p}*")),
        "WebFetch" => spec.strip_prefix("domain:").unwrap_or(spec).to_owned(),
        _ => spec.to_owned(),
    };
    let mut out = vec![format!("{first}({spec})")];
    out.extend(tools[1..].iter().map(|t| (*t).to_owned()));
    Ok(out)
}

/// The names Claude Code gives an octo tool (`terminal` is `Bash`), for matching hook and
/// settings files written for Claude Code; empty for tools it does not have.
pub fn claude_names(tool: &str) -> &'static [&'static str] {
    match tool {
        "terminal" => &["Bash"],
        "terminal_output" => &["BashOutput"],
        "kill_shell" => &["KillShell", "KillBash"],
        "read_file" => &["Read"],
        "write_file" => &["Write"],
        "edit_file" => &["Edit"],
        "multi_edit" => &["MultiEdit", "Edit"],
        "glob" => &["Glob"],
        "grep" => &["Grep"],
        "list_dir" => &["LS"],
        "web_fetch" => &["WebFetch"],
        "web_search" => &["WebSearch"],
        "todo_write" => &["TodoWrite"],
        "ask_user" => &["AskUserQuestion"],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::{claude_names, rules_for};

    #[test]
    fn octo_tools_have_their_claude_code_names() {
        assert_eq!(claude_names("terminal"), ["Bash"]);
        assert!(claude_names("multi_edit").contains(&"Edit"));
        assert!(claude_names("mcp__x__y").is_empty());
    }

    #[test]
    fn claude_code_names_map_to_octo_rules() {
        assert_eq!(rules_for("Read").unwrap(), ["read_file"]);
        assert_eq!(rules_for("Edit").unwrap(), ["edit_file", "multi_edit"]);
        assert_eq!(rules_for("Bash(git:*)").unwrap(), ["terminal(git*)", "terminal_output", "kill_shell"]);
        assert_eq!(rules_for("Bash(git diff *)").unwrap()[0], "terminal(git diff *)");
        assert_eq!(rules_for("Bash(*)").unwrap()[0], "terminal");
        assert_eq!(rules_for("WebFetch(domain:docs.rs)").unwrap(), ["web_fetch(docs.rs)"]);
        assert_eq!(rules_for("Read(src/**)").unwrap(), ["read_file(src/**)"]);
        assert_eq!(rules_for("grep").unwrap(), ["grep"]);
        assert_eq!(rules_for("mcp__github__list_issues").unwrap(), ["mcp__github__list_issues"]);
        assert!(rules_for("Teleport").unwrap_err().contains("no tool"));
        assert!(rules_for("Bash(git").is_err());
    }
}
