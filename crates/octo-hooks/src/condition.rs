//! A hook's `if` (Claude Code's permission-rule syntax: `Bash(git *)`, `Edit(*.ts)`,
//! `WebFetch(domain:docs.rs)`): on a tool event the hook runs only for the calls it matches,
//! judged on the call as hooks see it (Claude Code's tool names and arguments). `*` matches any
//! text in a command and stays within one folder in a path (`**` crosses folders); a path
//! pattern without `/` is matched against the file's name too; a command matches when the whole
//! command or one of its `&&`/`||`/`;`/`|` parts does; `git:*` is the old spelling of `git*`.

use regex::Regex;
use serde_json::Value;

/// Whether the call of `names` (its name and its other names) with `input` is one `cond` selects.
/// A condition that cannot be read selects every call (the hook runs, as it would without it).
pub fn applies(cond: &str, names: &[&str], input: &Value) -> bool {
    let c = cond.trim();
    let (tool, spec) = match c.find('(') {
        Some(i) if c.ends_with(')') => (c[..i].trim(), Some(c[i + 1..c.len() - 1].trim())),
        _ => (c, None),
    };
    if tool.is_empty() {
        return true;
    }
    let tool_re = wildcard(tool, true);
    if !names.iter().any(|n| tool_re.as_ref().is_none_or(|r| r.is_match(n))) {
        return false;
    }
    let Some(spec) = spec.filter(|s| !s.is_empty() && *s != "*") else { return true };
    let text = |k: &str| input.get(k).and_then(Value::as_str);
    if let Some(cmd) = text("command") {
        let spec = spec.strip_suffix(":*").map_or_else(|| spec.to_owned(), |p| format!("{p}*"));
        let Some(re) = wildcard(&spec, true) else { return true };
        let parts = cmd.split(['&', '|', ';', '\n']).map(str::trim).filter(|p| !p.is_empty());
        return re.is_match(cmd.trim()) || parts.into_iter().any(|p| re.is_match(p));
    }
    if let Some(url) = text("url") {
        let host = url.split("://").nth(1).unwrap_or(url).split(['/', '?', '#']).next().unwrap_or("");
        let host = host.rsplit('@').next().unwrap_or(host).split(':').next().unwrap_or(host);
        let spec = spec.strip_prefix("domain:").unwrap_or(spec);
        return wildcard(spec, true).is_none_or(|r| r.is_match(&host.to_ascii_lowercase()));
    }
    let path = ["file_path", "notebook_path", "path"].iter().find_map(|k| text(k));
    let Some(path) = path else { return false };
    let spec = spec.trim_start_matches("./");
    if !spec.contains('/') {
        let name = path.rsplit('/').next().unwrap_or(path);
        return wildcard(spec, false).is_none_or(|r| r.is_match(name));
    }
    // A relative pattern is the project's: it may end any absolute path.
    let anchor = if spec.starts_with('/') { "^" } else { "(^|/)" };
    Regex::new(&format!("{anchor}{}$", body(spec.trim_start_matches("//"), false)))
        .ok()
        .is_none_or(|r| r.is_match(path))
}

/// `pattern` as an anchored regular expression; `None` when it cannot be built.
fn wildcard(pattern: &str, free: bool) -> Option<Regex> {
    Regex::new(&format!("^{}$", body(pattern, free))).ok()
}

/// `pattern` as the body of a regular expression: `*` is any text (`free`) or any text within
/// one folder, `**` any text across folders, `?` one character, the rest literal.
fn body(pattern: &str, free: bool) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                out.push_str(".*");
            }
            '*' if free => out.push_str(".*"),
            '*' => out.push_str("[^/]*"),
            '?' => out.push('.'),
            c => out.push_str(&regex::escape(&c.to_string())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::applies;
    use serde_json::json;

    #[test]
    fn conditions_select_calls_as_claude_code_rules_do() {
        let bash = ["terminal", "Bash"];
        let cmd = |c: &str| json!({"command": c});
        assert!(applies("Bash(git *)", &bash, &cmd("git push origin main")));
        assert!(!applies("Bash(git *)", &bash, &cmd("ls -la")));
        assert!(applies("Bash(git:*)", &bash, &cmd("git status")));
        assert!(applies("Bash(git commit *)", &bash, &cmd("git add -A && git commit -m x")));
        assert!(applies("Bash", &bash, &cmd("anything")));
        assert!(!applies("Edit", &bash, &cmd("anything")));
        let edit = ["edit_file", "Edit"];
        assert!(applies("Edit(*.ts)", &edit, &json!({"file_path": "/ws/src/app.ts"})));
        assert!(!applies("Edit(*.ts)", &edit, &json!({"file_path": "/ws/src/app.rs"})));
        assert!(applies("Edit(src/**)", &edit, &json!({"file_path": "/ws/src/deep/a.rs"})));
        assert!(!applies("Edit(src/*)", &edit, &json!({"file_path": "/ws/src/deep/a.rs"})));
        assert!(applies(
            "Write(docs/*.md)",
            &["write_file", "Write"],
            &json!({"file_path": "/ws/docs/a.md"})
        ));
        let fetch = ["web_fetch", "WebFetch"];
        assert!(applies("WebFetch(domain:docs.rs)", &fetch, &json!({"url": "https://docs.rs/tokio"})));
        assert!(!applies("WebFetch(domain:docs.rs)", &fetch, &json!({"url": "https://evil.com/docs.rs"})));
        assert!(applies("mcp__github__*", &["mcp__github__list"], &json!({})));
    }
}
