//! Deciding one call, as named steps in the order they hold: what is refused whatever the rules
//! say, the active scopes, deny rules, plan mode, the limits only a named allow rule lifts, the
//! rules, remembered answers, then what the call is — a URL, a read outside the workspace, a
//! read, a command, a write. Each step returns a decision or passes the call on.

use super::engine::{PermissionEngine, Remembered};
use super::limits::{encoded_note, names, Lift, Limit};
use super::mode::Mode;
use super::protect::summary;
use super::rules::{normalize_command, Action, Rule};
use super::target::Target;
use octo_agent::{ApprovalDecision, DenyKind, PermissionDecision, PermissionGate, PermissionQuery, Subject};
use octo_tools::web::host::HostKind;

/// One call being decided.
struct Call<'a, 'q> {
    q: &'a PermissionQuery<'q>,
    t: Target,
    mode: Mode,
}

impl Call<'_, '_> {
    fn ask(&self, reason: Option<String>) -> PermissionDecision {
        PermissionDecision::Ask { summary: summary(self.q, &self.t), reason }
    }

    /// The call writes a path outside the workspace.
    fn outside(&self) -> bool {
        self.t.path.as_ref().is_some_and(|p| !p.inside)
    }
}

impl PermissionGate for PermissionEngine {
    fn check(&self, q: &PermissionQuery<'_>) -> PermissionDecision {
        self.decide(q, None)
    }

    fn remember(&self, q: &PermissionQuery<'_>, decision: &ApprovalDecision) {
        let refuse = matches!(decision, ApprovalDecision::DenyAlways { .. });
        if !decision.is_allowed() && !refuse {
            return;
        }
        let always = refuse || *decision == ApprovalDecision::AllowAlways;
        if decision.is_allowed() {
            self.note_brought(q, &Target::of(q, self.secrets.home()));
        }
        // A yes to a command that talks to a host is a yes to that host, as for a fetch.
        if decision.is_allowed() && matches!(q.meta.subject, Subject::Command { .. }) {
            if let Some(cmd) = q.subject_value() {
                for host in super::taint::hosts_in(cmd) {
                    self.remembered().push(Remembered::Host(host));
                }
            }
        }
        if let Some(e) = self.entry(q, always) {
            if refuse {
                self.refused().push(e);
            } else {
                self.remembered().push(e);
            }
        }
    }
}

impl PermissionEngine {
    /// What an answer covers: the host of a URL (on any answer: the question was whether to talk
    /// to it at all), and with "always" the command, the path (a folder for a read outside the
    /// workspace), or the tool.
    fn entry(&self, q: &PermissionQuery<'_>, always: bool) -> Option<Remembered> {
        let t = Target::of(q, self.secrets.home());
        match (&q.meta.subject, q.subject_value()) {
            (Subject::Url { .. }, _) => match t.url.as_ref() {
                Some(u) if !matches!(u.kind, HostKind::Private(_)) => u.host.clone().map(Remembered::Host),
                _ => None,
            },
            _ if !always => None,
            (Subject::Command { .. }, Some(c)) => {
                Some(Remembered::Command(q.tool.to_owned(), normalize_command(c)))
            }
            (Subject::Path { .. }, _) => t.path.as_ref().map(|p| {
                if q.meta.read_only && !p.inside {
                    let dir = if p.real.is_dir() {
                        p.real.clone()
                    } else {
                        p.real.parent().unwrap_or(&p.real).to_path_buf()
                    };
                    Remembered::ReadDir(dir)
                } else {
                    Remembered::Path(q.tool.to_owned(), p.real.clone())
                }
            }),
            _ => Some(Remembered::Tool(q.tool.to_owned())),
        }
    }

    /// A call like one the user refused "always" earlier in the session.
    fn refused_before(&self, c: &Call<'_, '_>) -> Option<PermissionDecision> {
        let hit = self.refused().iter().any(|r| match r {
            Remembered::Host(h) => c.t.url.as_ref().and_then(|u| u.host.as_deref()) == Some(h.as_str()),
            Remembered::ReadDir(d) => {
                c.q.meta.read_only && c.t.path.as_ref().is_some_and(|p| p.real.starts_with(d))
            }
            other => other.covers(c.q, &c.t),
        });
        hit.then(|| PermissionDecision::Deny {
            message: format!(
                "The user refused calls like this `{}` for the rest of the session. Do not retry it; do something \
                 else or ask the user.",
                c.q.tool
            ),
            kind: DenyKind::Rule,
        })
    }
}

impl PermissionEngine {
    /// Decides one call; `line` is set for a command's or skill's `` !`…` `` line (with its own
    /// grant, if any).
    pub(super) fn decide(
        &self,
        q: &PermissionQuery<'_>,
        line: Option<Option<&super::scope::Scope>>,
    ) -> PermissionDecision {
        let c = Call { q, t: Target::of(q, self.secrets.home()), mode: self.mode() };
        let limit = self.limits(q, &c.t);
        if let Some(Limit::Refuse(refusal)) = limit {
            return refusal;
        }
        let rules = self.rules.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        let rule = rules.decide(q, &c.t);
        let decision = self
            .out_of_scope(q, &c.t)
            .or_else(|| denied_by_rule(q, rule))
            .or_else(|| self.refused_before(&c))
            .or_else(|| plan_mode(&c))
            .or_else(|| self.limit_holds(&c, limit, rule))
            .or_else(|| by_rule(&c, rule))
            .or_else(|| self.granted_by_scope(&c, line))
            .or_else(|| self.remembered_allows(q, &c.t).then_some(PermissionDecision::Allow))
            .or_else(|| self.url(&c))
            .or_else(|| self.read_outside(&c))
            .or_else(|| self.command_to_new_host(&c))
            .or_else(|| (q.meta.read_only || c.mode == Mode::Auto).then_some(PermissionDecision::Allow))
            .or_else(|| self.sandboxed_command(&c))
            .unwrap_or_else(|| self.write(&c));
        if decision == PermissionDecision::Allow {
            self.note_brought(q, &c.t);
        }
        decision
    }

    /// A call an active skill's or command's `allowed-tools` grants runs without asking; so does
    /// a `` !`…` `` line that only looks (`git status`, `git diff HEAD`).
    fn granted_by_scope(
        &self,
        c: &Call<'_, '_>,
        line: Option<Option<&super::scope::Scope>>,
    ) -> Option<PermissionDecision> {
        let grants = self.grants.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        let own = line.flatten();
        if grants.iter().chain(own).any(|s| s.grants(c.q, &c.t)) {
            return Some(PermissionDecision::Allow);
        }
        let looks = line.is_some()
            && matches!(c.q.meta.subject, Subject::Command { .. })
            && c.q
                .subject_value()
                .is_some_and(|cmd| octo_tools::shell::only_looks(cmd, c.q.cwd, self.secrets.home()));
        looks.then_some(PermissionDecision::Allow)
    }
}

/// A deny rule refuses, whatever else would allow.
fn denied_by_rule(q: &PermissionQuery<'_>, rule: Option<&Rule>) -> Option<PermissionDecision> {
    let r = rule.filter(|r| r.action() == Action::Deny)?;
    Some(PermissionDecision::Deny {
        message: format!(
            "`{}` is denied by the rule `{}` ({}). Do something else or ask the user to change the rule.",
            q.tool,
            r.text(),
            r.origin()
        ),
        kind: DenyKind::Rule,
    })
}

/// Plan mode runs only what reads.
fn plan_mode(c: &Call<'_, '_>) -> Option<PermissionDecision> {
    (c.mode == Mode::Plan && !c.q.meta.read_only).then(|| PermissionDecision::Deny {
        message: format!(
            "octo is in plan mode: only read-only tools may run, so `{}` was not run. Investigate with read-only \
             tools, present your plan, and wait for the user to switch to build mode.",
            c.q.tool
        ),
        kind: DenyKind::PlanMode,
    })
}

/// The rule's own answer: allow, or ask (auto mode takes an ask rule as a yes).
fn by_rule(c: &Call<'_, '_>, rule: Option<&Rule>) -> Option<PermissionDecision> {
    let r = rule?;
    match r.action() {
        Action::Ask if c.mode == Mode::Auto => Some(PermissionDecision::Allow),
        Action::Ask => {
            let also = if c.outside() { "; the path is outside the workspace" } else { "" };
            Some(c.ask(Some(format!("the rule `{}` ({}) asks first{also}", r.text(), r.origin()))))
        }
        Action::Allow => Some(PermissionDecision::Allow),
        Action::Deny => None,
    }
}

impl PermissionEngine {
    /// A secret location or a call asked about in every mode: only an allow rule that names its
    /// target (`read_file(~/.ssh/config)`) counts as the user's word.
    fn limit_holds(
        &self,
        c: &Call<'_, '_>,
        limit: Option<Limit>,
        rule: Option<&Rule>,
    ) -> Option<PermissionDecision> {
        let allow_spec = rule.filter(|r| r.action() == Action::Allow).and_then(Rule::specifier);
        match limit? {
            Limit::Secret { refusal, key } if !allow_spec.is_some_and(|s| names(s, &key, false)) => {
                Some(refusal)
            }
            Limit::Ask { reason, lift } => {
                let lifted = match &lift {
                    Lift::Never => false,
                    Lift::NamedBy(key) => allow_spec.is_some_and(|s| names(s, key, c.t.url.is_some())),
                    Lift::RuleOrRemembered => allow_spec.is_some() || self.remembered_allows(c.q, &c.t),
                    Lift::AllowRule => {
                        rule.is_some_and(|r| r.action() == Action::Allow) || self.remembered_allows(c.q, &c.t)
                    }
                };
                (!lifted).then(|| c.ask(Some(reason)))
            }
            _ => None,
        }
    }

    /// A URL: documentation hosts and hosts already fetched from are allowed (unless the URL
    /// carries data); the first fetch from another host is asked about.
    fn url(&self, c: &Call<'_, '_>) -> Option<PermissionDecision> {
        let u = c.t.url.as_ref()?;
        let known = u.kind == HostKind::Docs || u.host.as_deref().is_some_and(|h| self.host_remembered(h));
        let named = u.host.as_deref().is_some_and(|h| self.taint.named_by_user(h));
        let outside = if known || named || c.mode != Mode::Auto { None } else { self.taint.why() };
        if let Some(after) = outside {
            // What was read from outside could leave in this request: once per host, in auto too.
            return Some(c.ask(Some(format!(
                "first fetch from {} since {after}: what the conversation holds could leave with it",
                u.host.as_deref().unwrap_or("this host")
            ))));
        }
        Some(match (c.mode, known, u.encoded) {
            (Mode::Auto, ..) | (_, true, None) => PermissionDecision::Allow,
            (_, true, Some(_)) => {
                c.ask(Some(format!("the URL looks like it carries data{}", encoded_note(&c.t))))
            }
            (_, false, _) => c.ask(Some(format!(
                "first fetch from {} in this session{}",
                u.host.as_deref().unwrap_or("this host"),
                encoded_note(&c.t)
            ))),
        })
    }

    /// In auto mode, once the conversation holds something from outside the workspace, a command
    /// that can reach the network and names a host not known, named or said yes to asks, once
    /// per host — as a fetch does.
    fn command_to_new_host(&self, c: &Call<'_, '_>) -> Option<PermissionDecision> {
        if c.mode != Mode::Auto
            || !self.command_network
            || !matches!(c.q.meta.subject, Subject::Command { .. })
        {
            return None;
        }
        let after = self.taint.why()?;
        let host = super::taint::new_host(&self.taint, c.q.subject_value()?, |h| self.host_remembered(h))?;
        Some(c.ask(Some(format!(
            "a command to {host}, first since {after}: commands here reach the network, and what the conversation holds could leave with it"
        ))))
    }

    /// A read outside the workspace is asked about, unless the user said yes to its folder.
    fn read_outside(&self, c: &Call<'_, '_>) -> Option<PermissionDecision> {
        let p = c.t.path.as_ref().filter(|p| c.q.meta.read_only && !p.inside)?;
        if c.mode == Mode::Auto || self.read_remembered(&p.real) {
            return Some(PermissionDecision::Allow);
        }
        Some(c.ask(Some(format!("{} is outside the workspace", p.real.display()))))
    }

    /// The sandbox keeps a command's writes in the workspace: accepting edits accepts it, unless
    /// it names a file that configures git or octo or is read into the prompt.
    fn sandboxed_command(&self, c: &Call<'_, '_>) -> Option<PermissionDecision> {
        if !(c.mode == Mode::AcceptEdits
            && self.sandboxed
            && matches!(c.q.meta.subject, Subject::Command { .. }))
        {
            return None;
        }
        if let Some(why) = self.sandbox_gap.get() {
            return Some(c.ask(Some(format!(
                "the sandbox here does not hold everything accept-edits relies on ({why}), so commands are asked about"
            ))));
        }
        Some(match c.q.subject_value().and_then(|cmd| self.names_protected(cmd)) {
            None => PermissionDecision::Allow,
            Some(name) => c.ask(Some(format!(
                "it names {name}, which configures git or octo or is read into the prompt"
            ))),
        })
    }

    /// What is left: a write (accepted in accept-edits mode inside the workspace, unless it is a
    /// protected file) or another call that changes things. The user is told when a write leaves
    /// the workspace: their yes then covers that too, and the tool does not ask a second time.
    fn write(&self, c: &Call<'_, '_>) -> PermissionDecision {
        let writes = c.q.meta.subject.writes_path();
        let protected = self.protection_of(&c.t).map(|p| p.name().to_owned());
        match protected {
            _ if c.mode == Mode::AcceptEdits && writes && c.outside() => {
                c.ask(Some("the path is outside the workspace".to_owned()))
            }
            Some(name) if writes => c.ask(Some(format!(
                "{name} configures git or octo, or is read into the prompt: a change there can run commands or steer \
                 later sessions"
            ))),
            None if c.mode == Mode::AcceptEdits && writes => PermissionDecision::Allow,
            _ => c.ask(c.outside().then(|| "the path is outside the workspace".to_owned())),
        }
    }
}
