//! The shape Claude Code requires of a `settings.json`: a file with a setting of the wrong type
//! (`"deny": "x"`, `"model": 5`, `"statusLine": "x"`, a hook without its command …) is ignored
//! by Claude Code as a whole, while unknown keys, unknown hook events and entries of a rule list
//! that are not text are passed over. octo finds the same files wrong, names each problem, and
//! uses nothing of such a file but its deny and ask rules (which only tighten).

use serde_json::Value;

/// What a setting must be.
#[derive(Clone, Copy)]
enum Kind {
    Text,
    Flag,
    Number,
    List,
    TextList,
    Object,
    /// An object of `true`/`false` (`enabledPlugins`).
    Flags,
    /// A permission mode's name.
    Mode,
    /// The hooks' events, each a list of `{matcher, hooks: [{type, command}]}`.
    Hooks,
    /// `{type: "command", command}`.
    StatusLine,
}

/// The settings Claude Code types, at the top level.
const TOP: &[(&str, Kind)] = &[
    ("apiKeyHelper", Kind::Text),
    ("awsAuthRefresh", Kind::Text),
    ("awsCredentialExport", Kind::Text),
    ("cleanupPeriodDays", Kind::Number),
    ("companyAnnouncements", Kind::List),
    ("env", Kind::Object),
    ("attribution", Kind::Object),
    ("includeCoAuthoredBy", Kind::Flag),
    ("includeGitInstructions", Kind::Flag),
    ("permissions", Kind::Object),
    ("hooks", Kind::Hooks),
    ("disableAllHooks", Kind::Flag),
    ("model", Kind::Text),
    ("otelHeadersHelper", Kind::Text),
    ("statusLine", Kind::StatusLine),
    ("outputStyle", Kind::Text),
    ("forceLoginMethod", Kind::Text),
    ("enableAllProjectMcpServers", Kind::Flag),
    ("enabledMcpjsonServers", Kind::List),
    ("disabledMcpjsonServers", Kind::List),
    ("alwaysThinkingEnabled", Kind::Flag),
    ("enabledPlugins", Kind::Flags),
    ("extraKnownMarketplaces", Kind::Object),
    ("sandbox", Kind::Object),
    ("spinnerTipsEnabled", Kind::Flag),
    ("respectGitignore", Kind::Flag),
];

/// The settings Claude Code types inside `permissions`.
const PERMISSIONS: &[(&str, Kind)] = &[
    ("allow", Kind::List),
    ("deny", Kind::List),
    ("ask", Kind::List),
    ("additionalDirectories", Kind::TextList),
    ("defaultMode", Kind::Mode),
    ("disableBypassPermissionsMode", Kind::Text),
];

const MODES: &[&str] = &["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"];

/// Each setting of `v` that is not of the type Claude Code requires (`` `model` is a number, not
/// text ``); empty when Claude Code would use the file.
pub(crate) fn problems(v: &Value) -> Vec<String> {
    let Some(top) = v.as_object() else { return vec![format!("the file is {}, not an object", what(v))] };
    let mut out = Vec::new();
    check(top, TOP, "", &mut out);
    if let Some(p) = top.get("permissions").and_then(Value::as_object) {
        check(p, PERMISSIONS, "permissions.", &mut out);
    }
    out
}

fn check(map: &serde_json::Map<String, Value>, kinds: &[(&str, Kind)], prefix: &str, out: &mut Vec<String>) {
    for (key, kind) in kinds {
        if let Some(value) = map.get(*key) {
            if let Some(why) = wrong(*kind, value) {
                out.push(format!("`{prefix}{key}` {why}"));
            }
        }
    }
}

/// Why `v` is not of `kind`, if it is not.
fn wrong(kind: Kind, v: &Value) -> Option<String> {
    let want = match kind {
        Kind::Text if v.is_string() => return None,
        Kind::Text => "text",
        Kind::Flag if v.is_boolean() => return None,
        Kind::Flag => "true or false",
        Kind::Number if v.is_number() => return None,
        Kind::Number => "a number",
        Kind::List if v.is_array() => return None,
        Kind::List => "a list",
        Kind::TextList if v.as_array().is_some_and(|a| a.iter().all(Value::is_string)) => return None,
        Kind::TextList => "a list of text",
        Kind::Object if v.is_object() => return None,
        Kind::Object => "an object",
        Kind::Flags if v.as_object().is_some_and(|m| m.values().all(Value::is_boolean)) => return None,
        Kind::Flags => "an object of true/false",
        Kind::Mode if v.as_str().is_some_and(|m| MODES.contains(&m)) => return None,
        Kind::Mode => return Some(format!("is {v}, not one of {}", MODES.join(", "))),
        Kind::Hooks => return hooks(v),
        Kind::StatusLine if v.get("command").is_some_and(Value::is_string) => return None,
        Kind::StatusLine => "an object with a `command`",
    };
    Some(format!("is {}, not {want}", what(v)))
}

/// What is wrong with a `hooks` object: an event that is not a list, an entry without its
/// `hooks` list, a command hook without its command.
fn hooks(v: &Value) -> Option<String> {
    let Some(events) = v.as_object() else { return Some(format!("is {}, not an object of events", what(v))) };
    for (event, entries) in events {
        let Some(entries) = entries.as_array() else {
            return Some(format!("has `{event}` as {}, not a list", what(entries)));
        };
        for entry in entries {
            let Some(list) = entry.get("hooks").and_then(Value::as_array) else {
                return Some(format!("has an entry of `{event}` without its `hooks` list"));
            };
            let command = |h: &Value| h.get("command").is_some_and(Value::is_string);
            let prompt = |h: &Value| h.get("prompt").is_some_and(Value::is_string);
            if list.iter().any(|h| !h.is_object() || !(command(h) || prompt(h))) {
                return Some(format!("has a hook of `{event}` without its `command`"));
            }
        }
    }
    None
}

/// `v`'s kind in words.
fn what(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::problems;
    use serde_json::json;

    /// Each shape as Claude Code 2.1.337 took it (file used, or ignored as a whole).
    #[test]
    fn files_claude_code_ignores_are_found_and_the_rest_pass() {
        let allow = json!(["Bash(touch:*)"]);
        let used = [
            json!({"permissions": {"allow": allow}, "bogusKey": 1}),
            json!({"permissions": {"allow": ["Bash(touch:*)", 5]}}),
            json!({"permissions": {"allow": allow, "bogus": 1}}),
            json!({"permissions": {"allow": allow, "defaultMode": "dontAsk"}}),
            json!({"permissions": {"allow": allow}, "env": {"A": 1, "B": {"x": 1}, "C": null}}),
            json!({"permissions": {"allow": allow}, "hooks": {"NoSuchEvent": []}}),
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}),
        ];
        for v in used {
            assert_eq!(problems(&v), Vec::<String>::new(), "{v}");
        }
        let ignored = [
            json!({"permissions": {"allow": allow, "deny": "oops"}}),
            json!({"permissions": {"allow": allow}, "env": "x"}),
            json!({"permissions": {"allow": allow}, "hooks": {"PreToolUse": "bad"}}),
            json!({"permissions": {"allow": allow}, "hooks": {"PreToolUse": [{"matcher": "x"}]}}),
            json!({"permissions": {"allow": allow}, "hooks": {"PreToolUse": [{"hooks": [{"type": "command"}]}]}}),
            json!({"permissions": {"allow": allow}, "model": 5}),
            json!({"permissions": {"allow": allow}, "model": null}),
            json!({"permissions": {"allow": "Bash(touch:*)"}}),
            json!({"permissions": {"allow": allow, "defaultMode": "weird"}}),
            json!({"permissions": {"allow": allow, "additionalDirectories": "x"}}),
            json!({"permissions": {"allow": allow, "additionalDirectories": [5]}}),
            json!({"permissions": {"allow": allow}, "cleanupPeriodDays": "x"}),
            json!({"permissions": {"allow": allow}, "statusLine": "x"}),
            json!({"permissions": {"allow": allow}, "statusLine": {"type": "command"}}),
            json!({"permissions": {"allow": allow}, "enabledPlugins": ["a"]}),
            json!({"permissions": {"allow": allow}, "enabledPlugins": {"a@b": "yes"}}),
            json!({"permissions": {"allow": allow}, "includeCoAuthoredBy": "x"}),
            json!({"permissions": {"allow": allow}, "apiKeyHelper": 5}),
            json!({"permissions": {"allow": allow}, "sandbox": true}),
            json!({"permissions": []}),
            json!([1]),
        ];
        for v in ignored {
            assert!(!problems(&v).is_empty(), "{v}");
        }
        assert_eq!(problems(&json!({"model": 5})), ["`model` is a number, not text"]);
    }
}
