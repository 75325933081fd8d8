//! What the sandbox promises about commands, and whether this machine holds each promise — the
//! list `octo doctor`, `/status` and the session's first command report.

use super::policy::{Mode, Policy};

/// One thing the sandbox promises about the commands it confines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Promise {
    /// What is promised ("files outside the writable roots are not written").
    pub what: &'static str,
    /// Whether it holds on this machine, for this policy.
    pub held: bool,
    /// How it is held, or why not.
    pub how: String,
}

/// Whether the seccomp supervisor stands in for a missing namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) enum Supervisor {
    /// Not needed (a namespace is had) or not applicable (no Linux sandbox).
    #[default]
    NotNeeded,
    /// It checks metadata changes and connections.
    Works,
    /// It cannot be had here, and why.
    Missing(String),
}

/// What the promises depend on beyond the policy (probed by the platform's sandbox).
#[derive(Debug, Clone, Default)]
pub(super) struct Facts {
    /// The Landlock ABI (0 elsewhere).
    pub abi: u8,
    /// Why commands get no mount namespace (`None`: they do, or the platform needs none).
    pub no_namespace: Option<String>,
    /// Why the network filter does not load (`None`: it does, or the network is allowed).
    pub no_filter: Option<String>,
    /// Whether the daemons' socket folders are hidden.
    pub sockets_hidden: bool,
    /// Whether the seccomp supervisor stands in for a missing namespace.
    pub supervisor: Supervisor,
    /// Whether what commands leave running can be found and killed, after octo too
    /// ([`crate::watch::possible`]).
    pub watch: bool,
    /// Whether a command's processes can be counted ([`crate::limit::countable`]).
    pub counted: bool,
}

/// Set by the host, not by the sandbox: both promises stand with the sandbox off.
fn process_promises(facts: &Facts) -> [Promise; 2] {
    let survivors = if facts.watch {
        held(
            SURVIVORS,
            "octo adopts what commands leave behind and kills it at the session's end; a watcher kills it if octo itself is killed",
        )
    } else {
        not_held(
            SURVIVORS,
            "a command's processes cannot be followed here (no /proc): what one leaves running may outlive octo",
        )
    };
    let bombs = if facts.counted {
        held(
            BOMBS,
            "recognised ones are refused; a command whose processes (with everything they start, root's too) pass the ceiling is killed",
        )
    } else {
        not_held(BOMBS, "recognised ones are refused, but a command's processes cannot be counted here")
    };
    [survivors, bombs]
}

fn held(what: &'static str, how: impl Into<String>) -> Promise {
    Promise { what, held: true, how: how.into() }
}

fn not_held(what: &'static str, why: impl Into<String>) -> Promise {
    Promise { what, held: false, how: why.into() }
}

const WRITES: &str = "files outside the writable roots are not written";
const GIT: &str = "the workspace's .git stays read-only";
const AROUND: &str = "the workspace's surroundings and a home in the temp dir stay as they are";
const MODES: &str = "modes, owners and times of files outside the writable roots stay as they are";
const PROMPTS: &str =
    "prompt and agent files (AGENTS.md, CLAUDE.md, .claude, SKILLS …) are not created or changed";
const SECRETS: &str =
    "secret places (~/.ssh, cloud and registry credentials, octo's keys and sessions) are not readable";
const NETWORK: &str = "commands reach no network";
const SOCKETS: &str = "named Unix sockets of local daemons (Docker, D-Bus …) are out of reach";
const SURVIVORS: &str = "nothing a command starts outlives the session";
const BOMBS: &str = "a fork bomb is stopped";

/// The secret places' promise, when there are any to keep (the sandbox is active).
fn secrets(policy: &Policy, facts: &Facts, mechanism: &str) -> Option<Promise> {
    if policy.secrets.is_empty() {
        return None;
    }
    let n = policy.secret_places().len();
    Some(match facts.no_namespace {
        None if facts.abi == 0 => held(SECRETS, format!("{n} found here, each denied by the {mechanism} profile")),
        None => held(SECRETS, format!("{n} found here, each covered by an empty file system or /dev/null in the command's mount namespace and left out of Landlock's read rules, as are those not made yet")),
        Some(_) => held(SECRETS, format!("{n} found here, each left out of Landlock's read rules, as are those not made yet")),
    })
}

/// Every promise for `policy`: `off` says why nothing is confined (the sandbox is off or
/// unavailable), else `facts` say what the machine has.
pub(super) fn list(policy: &Policy, off: Option<&str>, facts: &Facts, mechanism: &str) -> Vec<Promise> {
    let mut out = Vec::new();
    if let Some(why) = off {
        out.push(not_held(WRITES, why));
        if !policy.secrets.is_empty() {
            out.push(not_held(SECRETS, why));
        }
        if !policy.network {
            out.push(not_held(NETWORK, why));
        }
        out.extend(process_promises(facts));
        return out;
    }
    out.push(held(WRITES, mechanism));
    let ns = facts.no_namespace.as_deref();
    if policy.protected_git().is_some() {
        out.push(match ns {
            None => held(GIT, "a read-only bind in the command's mount namespace"),
            Some(_) => held(
                GIT,
                "Landlock's rules leave it out (so nothing new can be made at the workspace's root)",
            ),
        });
    }
    // `.git` and the prompt files lie in the workspace; the surroundings and homes outside it.
    let ws = std::fs::canonicalize(&policy.workspace).unwrap_or_else(|_| policy.workspace.clone());
    let guarded = facts.supervisor == Supervisor::Works;
    // Why the supervisor does not stand in for the namespace, when it was tried.
    let no_guard = match &facts.supervisor {
        Supervisor::Missing(why) => format!("; {why}"),
        Supervisor::NotNeeded | Supervisor::Works => String::new(),
    };
    if policy.read_only_paths().iter().any(|p| !p.starts_with(&ws)) {
        out.push(match ns {
            None => held(AROUND, "read-only binds in the command's mount namespace"),
            Some(_) if guarded => held(
                AROUND,
                "Landlock keeps their files from being written; a seccomp supervisor refuses changes to their modes, owners and times",
            ),
            Some(why) => not_held(
                AROUND,
                format!("their files are not written, but Landlock has no right for chmod and chown ({why}{no_guard})"),
            ),
        });
    }
    out.push(match ns {
        None => held(MODES, "the rest of the file system is read-only in the command's mount namespace"),
        Some(_) if guarded => held(
            MODES,
            "a seccomp supervisor makes mode, owner, time and attribute changes only inside the writable roots",
        ),
        Some(why) => {
            not_held(MODES, format!("Landlock has no right for chmod, chown or touch -d ({why}{no_guard})"))
        }
    });
    if policy.mode == Mode::WorkspaceWrite && !policy.protected_entries.is_empty() {
        out.push(match ns {
            None => held(
                PROMPTS,
                "existing ones are bound read-only; one a command creates is moved away after it",
            ),
            Some(_) => held(
                PROMPTS,
                "Landlock's rules leave them out and no new entry can be made at the workspace's root",
            ),
        });
    }
    out.extend(secrets(policy, facts, mechanism));
    if !policy.network {
        out.push(match (&facts.no_filter, facts.abi) {
            (None, _) => held(NETWORK, "a seccomp filter refuses every socket but Unix ones"),
            (Some(_), 4..) => held(NETWORK, "Landlock refuses TCP (no seccomp filter: UDP is not covered)"),
            (Some(why), _) => {
                not_held(NETWORK, format!("no seccomp filter ({why}) and Landlock before ABI 4"))
            }
        });
        out.push(if facts.sockets_hidden {
            held(SOCKETS, "/run is covered by an empty file system in the command's mount namespace")
        } else if guarded {
            held(
                SOCKETS,
                "a seccomp supervisor connects commands only to sockets inside the writable roots and refuses Unix datagram sockets",
            )
        } else {
            let why = ns.map(|w| format!(" and {w}")).unwrap_or_default();
            not_held(
                SOCKETS,
                format!("connecting to a named socket is not confined by the sandbox's rules{why}"),
            )
        });
    }
    out.extend(process_promises(facts));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fallback_names_what_it_cannot_hold() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let mut policy = Policy::new(Mode::WorkspaceWrite, dir.path());
        policy.protected_entries = vec!["AGENTS.md".into()];
        let host = Facts { watch: true, counted: true, ..Facts::default() };
        let full = list(&policy, None, &Facts { abi: 6, sockets_hidden: true, ..host.clone() }, "Landlock");
        assert!(full.iter().all(|p| p.held), "{full:?}");
        let fallback = Facts {
            abi: 6,
            no_namespace: Some("no user namespace".into()),
            supervisor: Supervisor::Missing("the seccomp supervisor does not work here".into()),
            ..host.clone()
        };
        let fb = list(&policy, None, &fallback, "Landlock");
        let missing: Vec<&str> = fb.iter().filter(|p| !p.held).map(|p| p.what).collect();
        assert_eq!(missing, [MODES, SOCKETS]);
        assert!(fb.iter().any(|p| p.what == MODES && p.how.contains("supervisor does not work")), "{fb:?}");
        assert!(fb.iter().any(|p| p.what == GIT && p.held));
        // The supervisor stands in for the namespace.
        let guarded = Facts { supervisor: Supervisor::Works, ..fallback };
        let gd = list(&policy, None, &guarded, "Landlock");
        assert!(gd.iter().all(|p| p.held), "{gd:?}");
        assert!(gd.iter().any(|p| p.what == MODES && p.how.contains("supervisor")), "{gd:?}");
        let off = list(&policy, Some("the sandbox is off"), &host, "");
        assert!(off.iter().any(|p| p.what == WRITES && !p.held && p.how.contains("off")));
        assert!(off.iter().any(|p| p.what == SURVIVORS && p.held));
    }

    #[test]
    fn process_promises_follow_the_host_not_a_constant() {
        let dir = tempfile::tempdir().unwrap();
        let policy = Policy::new(Mode::WorkspaceWrite, dir.path());
        let blind = list(&policy, None, &Facts { abi: 6, ..Facts::default() }, "Landlock");
        for what in [SURVIVORS, BOMBS] {
            assert!(blind.iter().any(|p| p.what == what && !p.held), "{what}: {blind:?}");
        }
        let off = list(&policy, Some("the sandbox is off"), &Facts::default(), "");
        assert!(off.iter().any(|p| p.what == SURVIVORS && !p.held), "{off:?}");
    }
}
