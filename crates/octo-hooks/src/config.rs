//! Which hooks run for which event: read from Claude Code's `settings.json` `hooks` object as it
//! is, or built from octo's config tables; matchers checked when read.

use regex::Regex;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// The default time a hook may run.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Event {
    /// A session starts (its output becomes context for the model).
    SessionStart,
    /// A session ends.
    SessionEnd,
    /// The user sent a prompt (a hook may refuse it or add context).
    UserPromptSubmit,
    /// Before a tool call (a hook may deny, allow, ask or rewrite it).
    PreToolUse,
    /// After a tool call ran (a hook may add to what the model sees).
    PostToolUse,
    /// The model is done (a hook may make it go on).
    Stop,
    /// A sub-agent is done (a hook may make it go on).
    SubagentStop,
    /// Before the conversation is compacted (output: instructions for the summary).
    PreCompact,
    /// An approval or a question is waiting for the user.
    Notification,
}

impl Event {
    /// Every event.
    pub const ALL: [Event; 9] = [
        Event::SessionStart,
        Event::SessionEnd,
        Event::UserPromptSubmit,
        Event::PreToolUse,
        Event::PostToolUse,
        Event::Stop,
        Event::SubagentStop,
        Event::PreCompact,
        Event::Notification,
    ];

    /// Its name, as configuration writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SessionStart => "SessionStart",
            Self::SessionEnd => "SessionEnd",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::Stop => "Stop",
            Self::SubagentStop => "SubagentStop",
            Self::PreCompact => "PreCompact",
            Self::Notification => "Notification",
        }
    }

    /// The event called `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == name)
    }
}

/// One command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    /// The shell command.
    pub command: String,
    /// How long it may run.
    pub timeout: Duration,
    /// Whether it may use the network when it runs in the sandbox (`network = true`; the
    /// sandbox's own setting otherwise).
    pub network: bool,
    /// Claude Code's `if`: on a tool event, it runs only for calls this rule matches
    /// ([`crate::condition`]).
    pub condition: Option<String>,
    /// Claude Code's `async`: it runs in the background; nothing waits for it and its answer
    /// decides nothing (its errors are still shown).
    pub background: bool,
}

/// Hooks for the calls (or compaction triggers) a matcher selects.
#[derive(Debug, Clone)]
pub struct Matcher {
    /// As written (`Edit|Write`, `*`, empty).
    pub text: String,
    regex: Option<Regex>,
    /// Its commands.
    pub hooks: Vec<Hook>,
    /// The file it comes from.
    pub source: String,
    /// From a project's file (runs only once the user trusts the project's hooks).
    pub project: bool,
}

/// A matcher that is not a regular expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the matcher `{matcher}` is not a valid regular expression: {reason}")]
pub struct BadMatcher {
    /// The matcher as written.
    pub matcher: String,
    /// What the regular expression engine said.
    pub reason: String,
}

impl Matcher {
    /// A matcher; `text` is a regular expression matched against the whole name (`*` or empty:
    /// everything).
    pub fn new(text: &str, hooks: Vec<Hook>, source: &str, project: bool) -> Result<Self, BadMatcher> {
        let t = text.trim();
        let regex = if t.is_empty() || t == "*" {
            None
        } else {
            Some(
                Regex::new(&format!("^(?:{t})$"))
                    .map_err(|e| BadMatcher { matcher: t.to_owned(), reason: e.to_string() })?,
            )
        };
        Ok(Self { text: t.to_owned(), regex, hooks, source: source.to_owned(), project })
    }

    /// Whether it selects `name` (or one of its other names, such as Claude Code's for an octo
    /// tool).
    pub fn matches(&self, names: &[&str]) -> bool {
        match &self.regex {
            None => true,
            Some(r) => names.iter().any(|n| r.is_match(n)),
        }
    }
}

/// Every configured hook, by event.
#[derive(Debug, Clone, Default)]
pub struct HookSet {
    events: BTreeMap<Event, Vec<Matcher>>,
}

impl HookSet {
    /// Adds a matcher for `event`.
    pub fn add(&mut self, event: Event, matcher: Matcher) {
        self.events.entry(event).or_default().push(matcher);
    }

    /// Adds every matcher of `other`.
    pub fn extend(&mut self, other: HookSet) {
        for (e, ms) in other.events {
            self.events.entry(e).or_default().extend(ms);
        }
    }

    /// Whether no hook is configured.
    pub fn is_empty(&self) -> bool {
        self.events.values().all(Vec::is_empty)
    }

    /// Every matcher, by event.
    pub fn iter(&self) -> impl Iterator<Item = (Event, &Matcher)> {
        self.events.iter().flat_map(|(e, ms)| ms.iter().map(move |m| (*e, m)))
    }

    /// Whether `event` has any hook.
    pub fn has(&self, event: Event) -> bool {
        self.events.get(&event).is_some_and(|m| !m.is_empty())
    }

    /// The hooks of `event` selected by `names` (all, for events without a subject), each once.
    pub fn matching(&self, event: Event, names: &[&str]) -> Vec<Hook> {
        let mut out: Vec<Hook> = Vec::new();
        for m in self.events.get(&event).into_iter().flatten() {
            if names.is_empty() || m.matches(names) {
                for h in &m.hooks {
                    if !out.iter().any(|o| o.command == h.command) {
                        out.push(h.clone());
                    }
                }
            }
        }
        out
    }

    /// Only the hooks `keep` approves of (the project's, once trusted).
    pub fn filtered(&self, keep: impl Fn(&Matcher) -> bool) -> Self {
        let mut out = Self::default();
        for (e, m) in self.iter() {
            if keep(m) {
                out.add(e, m.clone());
            }
        }
        out
    }

    /// A fingerprint of the project's hooks (what they run, and how), so trust is asked again
    /// when they change; `None` without project hooks. SHA-256 of an unambiguous (JSON)
    /// encoding: a changed hook cannot be made to keep a trusted fingerprint.
    pub fn project_fingerprint(&self) -> Option<String> {
        let mut hooks = Vec::new();
        for (e, m) in self.iter().filter(|(_, m)| m.project) {
            for h in &m.hooks {
                hooks.push(serde_json::json!([
                    e.as_str(),
                    m.text,
                    h.command,
                    u64::try_from(h.timeout.as_millis()).unwrap_or(u64::MAX),
                    h.network,
                    h.condition.as_ref().map(ToString::to_string),
                    h.background,
                ]));
            }
        }
        if hooks.is_empty() {
            return None;
        }
        use sha2::Digest;
        Some(format!("{:x}", sha2::Sha256::digest(serde_json::Value::Array(hooks).to_string().as_bytes())))
    }
}

/// Reads the `hooks` object of a Claude Code `settings.json` text. A file that is not JSON, or an
/// entry of the wrong shape, is a notice naming `source`; a matcher that is not a regular
/// expression skips that matcher with a notice; the rest loads.
pub fn from_claude_settings(text: &str, source: &str, project: bool) -> (HookSet, Vec<String>) {
    let mut set = HookSet::default();
    let mut notices = Vec::new();
    let v: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            notices.push(format!("{source} is not valid JSON ({e}); nothing in it is used: its hooks, rules and other settings"));
            return (set, notices);
        }
    };
    let Some(hooks) = v.get("hooks") else { return (set, notices) };
    let Some(events) = hooks.as_object() else {
        notices.push(format!("{source}: `hooks` must be an object of events"));
        return (set, notices);
    };
    for (name, entries) in events {
        let Some(event) = Event::parse(name) else {
            notices.push(format!("{source}: `{name}` is not a hook event octo knows; skipped"));
            continue;
        };
        let Some(list) = entries.as_array() else {
            notices.push(format!("{source}: hooks.{name} must be a list"));
            continue;
        };
        for entry in list {
            let matcher = entry.get("matcher").and_then(Value::as_str).unwrap_or("");
            let mut cmds = Vec::new();
            for h in entry.get("hooks").and_then(Value::as_array).into_iter().flatten() {
                let kind = h.get("type").and_then(Value::as_str).unwrap_or("command");
                let Some(command) = h.get("command").and_then(Value::as_str).filter(|c| !c.trim().is_empty())
                else {
                    notices.push(format!("{source}: a hooks.{name} entry has no `command`; skipped"));
                    continue;
                };
                if kind != "command" {
                    notices.push(format!("{source}: hooks of type `{kind}` are not supported; skipped"));
                    continue;
                }
                let timeout = h
                    .get("timeout")
                    .and_then(Value::as_f64)
                    .filter(|t| *t > 0.0)
                    .map_or(DEFAULT_TIMEOUT, |t| Duration::from_secs_f64(t.min(3600.0)));
                // octo's own key: a hook that needs the network in the sandbox.
                let network = h.get("network").and_then(Value::as_bool).unwrap_or(false);
                let condition =
                    h.get("if").and_then(Value::as_str).filter(|c| !c.trim().is_empty()).map(str::to_owned);
                let background = h.get("async").and_then(Value::as_bool).unwrap_or(false);
                cmds.push(Hook { command: command.to_owned(), timeout, network, condition, background });
            }
            if cmds.is_empty() {
                continue;
            }
            match Matcher::new(matcher, cmds, source, project) {
                Ok(m) => set.add(event, m),
                Err(e) => notices.push(format!("{source}: hooks.{name}: {e}; that hook is skipped")),
            }
        }
    }
    (set, notices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_settings_load_and_bad_parts_are_named() {
        let text = r#"{"hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check.sh", "timeout": 5}]},
                           {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt.sh"}]},
                           {"matcher": "[oops", "hooks": [{"type": "command", "command": "x"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "done.sh"}]}],
            "Bogus": []
        }}"#;
        let (set, notices) = from_claude_settings(text, ".claude/settings.json", true);
        assert_eq!(set.matching(Event::PreToolUse, &["terminal", "Bash"])[0].command, "check.sh");
        assert_eq!(set.matching(Event::PreToolUse, &["terminal", "Bash"])[0].timeout, Duration::from_secs(5));
        assert_eq!(set.matching(Event::PreToolUse, &["write_file", "Write"])[0].command, "fmt.sh");
        assert!(set.matching(Event::PreToolUse, &["BashOutput"]).is_empty(), "whole-name match");
        assert_eq!(set.matching(Event::Stop, &[]).len(), 1);
        assert!(notices.iter().any(|n| n.contains("[oops") && n.contains("skipped")), "{notices:?}");
        assert!(notices.iter().any(|n| n.contains("Bogus")));
        assert!(set.project_fingerprint().is_some());
        let (_, notices) = from_claude_settings("{not json", "s.json", false);
        assert!(notices[0].contains("s.json is not valid JSON"));
    }
}
