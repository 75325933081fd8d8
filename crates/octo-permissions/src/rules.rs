//! Permission rules: `Tool` or `Tool(specifier)`, matched against what the tool declares as its
//! subject ([`octo_agent::Subject`]): a command pattern for a command tool (`git status*` is a
//! prefix, anything else exact), a path glob for a path tool (`src/**`), a host glob for a URL tool
//! (`*.github.com`). No tool is known here by name: a tool from any source gets the same rules.
//!
//! A command with shell metacharacters (`;`, `&&`, `|`, `$(…)`, backticks, redirections) is
//! allowed only when the shell grammar splits it into plain simple commands and each of them is
//! allowed by a rule (`allowing`); deny and ask rules also look at each of its parts.

use super::target::Target;
use globset::{GlobBuilder, GlobMatcher};
use octo_agent::{PermissionQuery, Subject, ToolRegistry};
use thiserror::Error;

/// What a rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// Run without asking.
    Allow,
    /// Ask first.
    Ask,
    /// Refuse.
    Deny,
}

impl Action {
    /// The lowercase name (`allow`, `ask`, `deny`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

/// A rule that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RuleError {
    /// `Tool(spec` without the closing parenthesis.
    #[error("rule `{rule}`: a specifier must be closed with `)`")]
    Unclosed {
        /// The rule as written.
        rule: String,
    },
    /// The part before the parenthesis is not a tool name or pattern.
    #[error("rule `{rule}`: `{tool}` is not a tool name")]
    NotATool {
        /// The rule as written.
        rule: String,
        /// What stood where the tool should be.
        tool: String,
    },
    /// A specifier on a tool that has nothing to match it against.
    #[error("rule `{rule}` ({origin}): `{tool}` takes no specifier; write just `{tool}`")]
    NoSpecifier {
        /// The rule as written.
        rule: String,
        /// The tool.
        tool: String,
        /// Where the rule comes from.
        origin: String,
    },
    /// A path or host specifier that is not a valid glob.
    #[error("rule `{rule}` ({origin}): invalid pattern `{pattern}`: {reason}")]
    BadPattern {
        /// The rule as written.
        rule: String,
        /// The pattern.
        pattern: String,
        /// Why it is invalid.
        reason: String,
        /// Where the rule comes from.
        origin: String,
    },
}

/// A specifier, ready to match whichever kind of subject the tool turns out to have.
#[derive(Debug, Clone)]
struct Pattern {
    /// As written.
    text: String,
    /// With a leading `~/` made absolute.
    expanded: String,
    /// The command form: normalized text, and whether it is a prefix (`git status*`).
    command: String,
    prefix: bool,
    /// The path form: `*` stays within one path component, `**` crosses them.
    path: Result<GlobMatcher, String>,
    /// The host form, lowercase.
    host: Result<GlobMatcher, String>,
}

fn glob(p: &str) -> Result<GlobMatcher, String> {
    GlobBuilder::new(p)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| e.to_string())
}

impl Pattern {
    /// Whether one plain command matches the command form.
    fn command_matches(&self, c: &str) -> bool {
        let c = normalize_command(c);
        if self.prefix {
            c.starts_with(self.command.as_str())
        } else {
            c == self.command
        }
    }

    fn new(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            expanded: expand_home(text),
            command: normalize_command(text.trim_end_matches('*').trim_end_matches(':')),
            prefix: text.ends_with('*'),
            path: glob(&expand_home(strip_dot_slash(text))),
            host: glob(&text.to_ascii_lowercase()),
        }
    }
}

/// One rule.
#[derive(Debug, Clone)]
pub struct Rule {
    text: String,
    tool: String,
    spec: Option<Pattern>,
    action: Action,
    origin: String,
}

impl Rule {
    /// Parses `Tool` or `Tool(specifier)`. Whether the specifier suits the tool is checked once
    /// the tools are known ([`RuleSet::check`]).
    pub fn parse(text: &str, action: Action, origin: &str) -> Result<Self, RuleError> {
        let t = text.trim();
        let (tool, spec) = match t.find('(') {
            Some(i) if t.ends_with(')') => (t[..i].trim(), Some(t[i + 1..t.len() - 1].trim())),
            Some(_) => return Err(RuleError::Unclosed { rule: t.to_owned() }),
            None => (t, None),
        };
        if tool.is_empty()
            || !tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '*' || c == '-')
        {
            return Err(RuleError::NotATool { rule: t.to_owned(), tool: tool.to_owned() });
        }
        let spec = match spec {
            None | Some("*" | "") => None,
            Some(s) => Some(Pattern::new(s)),
        };
        Ok(Self { text: t.to_owned(), tool: tool.to_owned(), spec, action, origin: origin.to_owned() })
    }

    /// The specifier, with a leading `~/` made absolute, if the rule has one.
    pub fn specifier(&self) -> Option<&str> {
        self.spec.as_ref().map(|p| p.expanded.as_str())
    }

    /// What the rule does.
    pub fn action(&self) -> Action {
        self.action
    }

    /// The rule as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Where it comes from (`user config ~/.octo/config.toml`).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    fn tool_matches(&self, tool: &str) -> bool {
        if self.tool == "*" {
            return true;
        }
        match self.tool.strip_suffix('*') {
            Some(prefix) => tool.starts_with(prefix),
            None => self.tool == tool,
        }
    }

    pub(super) fn matches(&self, q: &PermissionQuery<'_>, t: &Target) -> bool {
        if !self.tool_matches(q.rule_name()) {
            return false;
        }
        let Some(p) = &self.spec else { return true };
        match &q.meta.subject {
            Subject::Command { .. } => {
                let Some(cmd) = q.subject_value() else { return false };
                let m = |c: &str| p.command_matches(c);
                if p.command.is_empty() {
                    return true;
                }
                if self.action == Action::Allow {
                    !has_shell_meta(cmd) && m(cmd)
                } else {
                    // Deny and ask rules also see through wrappers, quotes and program paths:
                    // `deny: terminal(curl*)` catches `sudo /usr/bin/curl …` too.
                    m(cmd)
                        || command_parts(cmd).iter().any(|part| m(part))
                        || octo_tools::shell::command_segments(cmd).iter().any(|part| m(part))
                }
            }
            Subject::Path { .. } => {
                let (Ok(g), Some(path)) = (&p.path, &t.path) else { return false };
                // An allow rule must hold where the call really lands (symlinks resolved); deny
                // and ask rules catch either spelling.
                path.forms(self.action == Action::Allow).iter().any(|f| g.is_match(f))
            }
            Subject::Url { .. } => {
                let (Ok(g), Some(host)) = (&p.host, t.url.as_ref().and_then(|u| u.host.as_deref())) else {
                    return false;
                };
                g.is_match(host)
            }
            _ => false,
        }
    }

    /// Whether this allow rule allows one simple command of a compound command.
    fn allows_part(&self, q: &PermissionQuery<'_>, part: &str) -> bool {
        self.action == Action::Allow
            && self.tool_matches(q.rule_name())
            && self.spec.as_ref().is_none_or(|p| p.command.is_empty() || p.command_matches(part))
    }

    /// Whether the specifier suits `subject` (what the tool the rule names declares).
    fn check(&self, subject: &Subject) -> Result<(), RuleError> {
        let Some(p) = &self.spec else { return Ok(()) };
        let bad = |reason: &String| RuleError::BadPattern {
            rule: self.text.clone(),
            pattern: p.text.clone(),
            reason: reason.clone(),
            origin: self.origin.clone(),
        };
        match subject {
            Subject::Command { .. } => Ok(()),
            Subject::Path { .. } => p.path.as_ref().map(|_| ()).map_err(bad),
            Subject::Url { .. } => p.host.as_ref().map(|_| ()).map_err(bad),
            _ => Err(RuleError::NoSpecifier {
                rule: self.text.clone(),
                tool: self.tool.clone(),
                origin: self.origin.clone(),
            }),
        }
    }
}

/// A path pattern without leading `./` (a relative glob is already the workspace's, and a path
/// subject never starts with `./`).
fn strip_dot_slash(mut p: &str) -> &str {
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p
}

/// A path pattern with a leading `~/` made absolute (the user's home).
fn expand_home(p: &str) -> String {
    let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE"));
    match (p.strip_prefix("~/"), home) {
        (Some(rest), Some(h)) => format!("{}/{rest}", std::path::Path::new(&h).display()),
        _ => p.to_owned(),
    }
}

/// Collapses runs of whitespace.
pub fn normalize_command(c: &str) -> String {
    c.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether a command uses the shell to do more than run one program.
pub fn has_shell_meta(c: &str) -> bool {
    c.contains([';', '&', '|', '`', '>', '<', '\n', '(', ')']) || c.contains("$(") || c.contains("${")
}

/// The allow rule that allows `q` among `rules`: one that matches it whole, or, for a compound
/// command (`git add -A && git commit -m "…"`), the first of the rules that together allow every
/// simple command in it, as Claude Code splits them. Only a plain line is split
/// ([`octo_tools::shell::plain`]: literal words, list and pipe operators, no redirection but to
/// `/dev/null`); anything else — an expansion, an assignment, a declaration, a test, a function,
/// arithmetic, a redirection to a file, a parse error — is allowed by no rule.
pub(super) fn allowing<'r>(rules: &'r [Rule], q: &PermissionQuery<'_>, t: &Target) -> Option<&'r Rule> {
    let allow = || rules.iter().filter(|r| r.action == Action::Allow);
    if let Some(r) = allow().find(|r| r.matches(q, t)) {
        return Some(r);
    }
    if !matches!(q.meta.subject, Subject::Command { .. }) {
        return None;
    }
    let cmd = q.subject_value().filter(|c| has_shell_meta(c))?;
    let parts = octo_tools::shell::plain::parts(cmd)?;
    let mut first = None;
    for part in &parts {
        let r = allow().find(|r| r.allows_part(q, part))?;
        first.get_or_insert(r);
    }
    first
}

fn command_parts(c: &str) -> Vec<String> {
    c.split([';', '&', '|', '`', '\n', '(', ')'])
        .map(|p| p.trim().trim_start_matches('$').trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Rules from every config layer.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

impl RuleSet {
    /// Adds rules from one layer; fails on the first invalid one.
    pub fn add(
        &mut self,
        allow: &[String],
        ask: &[String],
        deny: &[String],
        origin: &str,
    ) -> Result<(), RuleError> {
        for (list, action) in [(allow, Action::Allow), (ask, Action::Ask), (deny, Action::Deny)] {
            for r in list {
                self.rules.push(Rule::parse(r, action, origin)?);
            }
        }
        Ok(())
    }

    /// Adds one rule (at run time, from `/permissions`).
    pub fn push(&mut self, rule: Rule) {
        self.rules.push(rule);
    }

    /// Removes the rules written as `text` (whitespace ignored), from any layer; returns how
    /// many there were.
    pub fn remove(&mut self, text: &str) -> usize {
        let want: String = text.split_whitespace().collect();
        let before = self.rules.len();
        self.rules.retain(|r| r.text.split_whitespace().collect::<String>() != want);
        before - self.rules.len()
    }

    /// The strongest matching rule: deny, then ask, then allow.
    pub(super) fn decide(&self, q: &PermissionQuery<'_>, t: &Target) -> Option<&Rule> {
        let best = self.rules.iter().filter(|r| r.matches(q, t)).max_by_key(|r| r.action);
        best.or_else(|| allowing(&self.rules, q, t))
    }

    /// The specifiers of the allow rules for `tool` (for `web_fetch`, the hosts the user trusts).
    pub fn allowed_specifiers(&self, tool: &str) -> Vec<String> {
        self.rules
            .iter()
            .filter(|r| r.action == Action::Allow && r.tool == tool)
            .filter_map(|r| r.spec.as_ref().map(|p| p.text.clone()))
            .collect()
    }

    /// Checks every rule that names a tool of `tools` exactly against what that tool declares:
    /// a specifier on a tool without a subject, or a path or host pattern that is not a valid
    /// glob, is an error. Rules for tools that are not there (an MCP server not started yet) and
    /// wildcard rules are not checked.
    pub fn check(&self, tools: &ToolRegistry) -> Result<(), RuleError> {
        for rule in self.rules.iter().filter(|r| r.spec.is_some() && !r.tool.contains('*')) {
            for name in tools.names() {
                let Some(meta) = tools.meta(name) else { continue };
                if meta.rule_name.as_deref().unwrap_or(name) == rule.tool {
                    rule.check(&meta.subject)?;
                }
            }
        }
        Ok(())
    }

    /// Whether a deny rule without a specifier names `tool` (its rule name) whole: such a tool is
    /// not offered to the model at all, as Claude Code leaves a tool denied whole out.
    pub fn denies_whole(&self, tool: &str) -> bool {
        self.rules.iter().any(|r| r.action == Action::Deny && r.spec.is_none() && r.tool_matches(tool))
    }

    /// The rules, for `config show` and `/permissions`.
    pub fn describe(&self) -> String {
        self.rules.iter().map(|r| format!("{} {}    # {}\n", r.action.as_str(), r.text, r.origin)).collect()
    }

    /// The rules, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = &Rule> {
        self.rules.iter()
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}
