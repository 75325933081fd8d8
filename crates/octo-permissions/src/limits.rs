//! What holds for a call before any rule or mode is consulted: the hard-deny list, another
//! process's secrets, secret locations, and the calls asked about in every mode.

use super::engine::PermissionEngine;
use super::protect::{protection, Protection};
use super::target::Target;
use octo_agent::{DenyKind, PermissionDecision, PermissionQuery, Subject};
use octo_tools::secrets::Secret;
use octo_tools::web::host::HostKind;
use serde_json::Value;

/// What holds for a call before any rule or mode is consulted.
pub(super) enum Limit {
    /// Refused, whatever the rules say (the hard-deny list, another process's memory).
    Refuse(PermissionDecision),
    /// A secret location: refused unless an allow rule names it (`key` must appear in the rule).
    Secret { refusal: PermissionDecision, key: String },
    /// Asked about in every mode, auto included.
    Ask { reason: String, lift: Lift },
}

/// What, besides the user's answer to the question, settles a [`Limit::Ask`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Lift {
    /// Nothing: a command the shell analysis flags.
    Never,
    /// An allow rule whose specifier names the target: it contains this text (a `.env` file's
    /// name), or is exactly the host (a private address).
    NamedBy(String),
    /// Any allow rule matching the command, or "always" (a command naming `.env`).
    RuleOrRemembered,
    /// Any allow rule for the tool, with or without a specifier, or "always" (a memory save).
    AllowRule,
}

/// The tool that writes memory, which every later session reads into its prompt.
const MEMORY_SAVE: &str = "memory_save";

impl PermissionEngine {
    /// Refusals no rule or mode lifts (the hard-deny list, another process's memory) and the
    /// calls that must be asked about in every mode.
    pub(super) fn limits(&self, q: &PermissionQuery<'_>, t: &Target) -> Option<Limit> {
        if q.tool == MEMORY_SAVE {
            return Some(Limit::Ask {
                reason: "memory is read into every later session's prompt, like a rules file".to_owned(),
                lift: Lift::AllowRule,
            });
        }
        if let (Subject::Command { .. }, Some(cmd)) = (&q.meta.subject, q.subject_value()) {
            let ctx = octo_tools::shell::Context { cwd: q.cwd, secrets: &self.secrets };
            let verdict = octo_tools::shell::check(cmd, &ctx);
            if self.escapes_sandbox(q) && !matches!(verdict, octo_tools::shell::Verdict::Refuse(_)) {
                let why =
                    q.input.get("reason").and_then(Value::as_str).map(str::trim).filter(|r| !r.is_empty());
                return Some(Limit::Ask {
                    reason: octo_tools::shell::outside_reason(why.unwrap_or("no reason given"), cmd),
                    lift: Lift::Never,
                });
            }
            return match verdict {
                octo_tools::shell::Verdict::Run => self.unheld_metadata(cmd, q),
                octo_tools::shell::Verdict::Refuse(why) => Some(Limit::Refuse(hard_deny(format!(
                    "refused: this command would do {why}. octo never runs it, whatever the permission rules say."
                )))),
                octo_tools::shell::Verdict::Ask(why) => Some(Limit::Ask { reason: why, lift: Lift::Never }),
                octo_tools::shell::Verdict::Caution(why) => {
                    Some(Limit::Ask { reason: why, lift: Lift::RuleOrRemembered })
                }
            };
        }
        if let Some(p) = &t.path {
            // octo's own files for this session (spilled output) are readable, though the rest
            // of their directory is not.
            if self.read_roots.iter().any(|r| p.real.starts_with(octo_tools::path::real_path(r))) {
                return None;
            }
            let secret = self.secrets.check(&p.real).or_else(|| self.secrets.check(&p.lexical));
            return match secret {
                None => self.protected_write(q, t),
                Some(Secret::Process(what)) => Some(Limit::Refuse(hard_deny(format!(
                    "refused: {what} holds another process's secrets; octo never reads or writes it."
                )))),
                Some(Secret::EnvFile(name)) if p.inside => Some(Limit::Ask {
                    reason: format!("{name} usually holds the project's secrets"),
                    lift: Lift::NamedBy(name),
                }),
                Some(s) => Some(Limit::Secret {
                    key: secret_key(&s),
                    refusal: PermissionDecision::Deny {
                    message: format!(
                        "refused: {} is a secret location ({}), and no allow rule names it. If the user wants this, \
                         they can add an allow rule such as `{}({})`.",
                        p.real.display(),
                        s.describe(),
                        q.rule_name(),
                        p.real.display()
                    ),
                        kind: DenyKind::HardDeny,
                    },
                }),
            };
        }
        if let Some(u) = &t.url {
            if let HostKind::Private(why) = &u.kind {
                return Some(Limit::Ask {
                    reason: format!(
                        "{why}: the request would reach your own machine or network{}",
                        encoded_note(t)
                    ),
                    lift: Lift::NamedBy(u.host.clone().unwrap_or_default()),
                });
            }
        }
        None
    }
}

impl PermissionEngine {
    /// What the sandbox here does not hold, for a command that relies on it: where only Landlock
    /// confines commands (no mount namespace), modes, owners and times of files outside the
    /// workspace (`chmod 000 ~`, `touch -d … ../x`, `os.chmod` in a one-liner), and, with the
    /// network off, the daemons' named sockets (`docker run -v /:/host`, `systemctl`, `nc -U`).
    /// Such a command is asked about in every mode, auto included, as a write outside the
    /// workspace would be.
    fn unheld_metadata(&self, cmd: &str, q: &PermissionQuery<'_>) -> Option<Limit> {
        if !self.sandboxed {
            return None;
        }
        let home = self.secrets.home();
        let socket = || {
            let gap = self.socket_gap.get()?;
            let why = octo_tools::shell::reaches_local_daemon(cmd, q.cwd, home)?;
            Some(format!("{why}, and {gap}: a daemon can act outside the sandbox"))
        };
        let metadata = || {
            let gap = self.sandbox_gap.get()?;
            let why = octo_tools::shell::changes_metadata_outside(cmd, q.cwd, home, q.cwd)?;
            Some(format!("{why}, and the sandbox here cannot stop that ({gap})"))
        };
        let reason = metadata().or_else(socket)?;
        Some(Limit::Ask { reason, lift: Lift::RuleOrRemembered })
    }

    /// A file tool writing a protected file is asked about in every mode: one git runs (a hook,
    /// its config) every time; one read into a later prompt or configuring octo unless an allow
    /// rule names it or the user said "always".
    fn protected_write(&self, q: &PermissionQuery<'_>, t: &Target) -> Option<Limit> {
        if !q.meta.subject.writes_path() {
            return None;
        }
        Some(match self.protection_of(t)? {
            Protection::GitRuns(name) => Limit::Ask {
                reason: format!(
                    "{name} is run or read by git: a change there runs commands outside every sandbox the next time git runs"
                ),
                lift: Lift::Never,
            },
            Protection::Steers(name) => Limit::Ask {
                reason: format!(
                    "{name} configures git or octo, or is read into the prompt: a change there can run commands or steer later sessions"
                ),
                lift: Lift::RuleOrRemembered,
            },
        })
    }

    /// How the call's path is protected: by name, as a file the prompt includes, or under a
    /// folder octo reads instructions from.
    pub(super) fn protection_of(&self, t: &Target) -> Option<Protection> {
        if let Some(p) = protection(t) {
            return Some(p);
        }
        let p = t.path.as_ref()?;
        if self.protected.contains(&p.real) || self.protected.contains(&p.lexical) {
            return Some(Protection::Steers(p.real.display().to_string()));
        }
        self.in_protected_dir(&p.real)
            .or_else(|| self.in_protected_dir(&p.lexical))
            .map(|d| Protection::Steers(format!("{} (read by octo as instructions)", d.display())))
    }
}

/// The text an allow rule must contain to name a secret location: `.ssh` for `~/.ssh`, the
/// whole path of one of octo's own files, the file name of a `.env`.
fn secret_key(s: &Secret) -> String {
    match s {
        Secret::Location(d) if d.starts_with("~/") => d.trim_start_matches("~/").to_owned(),
        Secret::Location(d) => d.clone(),
        Secret::EnvFile(name) => name.clone(),
        Secret::Process(_) => String::from("\0never"),
    }
}

/// Whether an allow rule's specifier names `key` (a secret's key, or a private host exactly:
/// `web_fetch(*.*)` or `read_file(**)` names nothing).
pub(super) fn names(spec: &str, key: &str, host: bool) -> bool {
    if key.is_empty() {
        return false;
    }
    if host {
        let spec = spec.to_ascii_lowercase();
        return spec == key
            || spec.strip_prefix("*.").is_some_and(|suffix| {
                suffix.contains('.')
                    && !suffix.contains(['*', '?', '['])
                    && key.ends_with(&format!(".{suffix}"))
            });
    }
    spec.contains(key)
}

fn hard_deny(message: String) -> PermissionDecision {
    PermissionDecision::Deny { message, kind: DenyKind::HardDeny }
}

/// What the approval prompt adds about a URL carrying encoded-looking data.
pub(super) fn encoded_note(t: &Target) -> String {
    match t.url.as_ref().and_then(|u| u.encoded) {
        Some(n) => format!("; the URL carries {n} characters of what looks like encoded data, which could be something being sent out"),
        None => String::new(),
    }
}
