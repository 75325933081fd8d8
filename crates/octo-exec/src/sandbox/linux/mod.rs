//! The Linux sandbox: Landlock for the file system, a seccomp filter (and Landlock's TCP rules)
//! for the network, and a private user + mount namespace in which the workspace's `.git` is a
//! read-only bind mount.
//!
//! Everything that allocates (opening the rule paths, building the ruleset and the filter,
//! formatting the id maps) happens in the parent; the child runs only system calls between fork
//! and exec.

use super::policy::{Policy, SandboxError};
use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetError, RulesetStatus, Scope, ABI,
};
use nix::errno::Errno;
use seccompiler::BpfProgram;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

mod filter;
mod guard;
mod ns;
mod probe;
use filter::base_filter;
use ns::{Namespaces, NsPlan};
use probe::try_child;

/// The capabilities a command run by root without a user namespace loses (`linux/capability.h`:
/// `CAP_SYS_PTRACE`, `CAP_SYS_ADMIN`, `CAP_PERFMON`): with one of them it reads other processes'
/// environments (octo's own, where API keys can be) past Landlock.
const DROPPED: [libc::c_ulong; 3] = [19, 21, 38];

/// The Landlock ABI whose rights octo asks for (newer kernels enforce all of it; older ones what
/// they can).
const TARGET: ABI = ABI::V6;

/// Device files any command may read and write, even read-only ones.
const DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"];

/// Device directories treated like the temp dir: pseudo-terminals and POSIX shared memory.
const DEVICE_DIRS: &[&str] = &["/dev/pts", "/dev/shm"];

/// What can be had on this machine, beyond Landlock.
#[derive(Debug, Clone)]
struct Isolation {
    /// Which namespaces a command can enter.
    ns: Namespaces,
    /// Whether the syscall filter loads (`None`: fine; `Some`: why not).
    seccomp_error: Option<String>,
    /// Whether the seccomp supervisor works (`None`: it does; `Some`: why not). Only tried, and
    /// only used, where no namespace can be had.
    guard_error: Option<String>,
}

/// The probed Linux sandbox.
#[derive(Debug)]
pub(super) struct Linux {
    abi: u8,
    filter: Arc<BpfProgram>,
    isolation: OnceLock<Isolation>,
}

impl Linux {
    /// Finds Landlock, and builds the syscall filter.
    pub(super) fn probe(policy: &Policy) -> Result<Self, String> {
        let abi = landlock_abi();
        if abi == 0 {
            return Err(
                "the kernel has no Landlock (it needs Linux 5.13 or later with Landlock enabled at boot)"
                    .into(),
            );
        }
        let filter = Arc::new(
            base_filter(policy.network).map_err(|e| format!("the syscall filter could not be built: {e}"))?,
        );
        Ok(Self { abi, filter, isolation: OnceLock::new() })
    }

    /// How the policy is enforced, for `/status` and `octo doctor`.
    pub(super) fn describe(&self, policy: &Policy) -> String {
        let iso = self.isolation(policy);
        let mut parts = vec![format!("Landlock ABI {}", self.abi)];
        if !policy.network {
            parts.push(match &iso.seccomp_error {
                None => "seccomp network filter".into(),
                Some(why) => format!("no seccomp filter ({why}); TCP blocked by Landlock only"),
            });
        }
        if matches!(iso.ns, Namespaces::User | Namespaces::MountOnly) {
            parts.push("the rest of the file system read-only (mount namespace)".into());
        }
        let ro = policy.read_only_paths();
        if !ro.is_empty() {
            let git = usize::from(policy.protected_git().is_some());
            let names = match (git, ro.len() - git) {
                (1, 0) => ".git".to_owned(),
                (1, n) => format!(".git and {n} more folder{}", if n == 1 { "" } else { "s" }),
                (_, n) => format!("{n} protected folder{}", if n == 1 { "" } else { "s" }),
            };
            let tmp = match (&iso.ns, policy.writable_without_namespaces().1) {
                (Namespaces::None(_), Some(_)) => {
                    "; commands get a private temp dir, as the system one holds protected folders".to_owned()
                }
                _ => String::new(),
            };
            parts.push(match &iso.ns {
                Namespaces::User | Namespaces::MountOnly => format!("{names} read-only (mount namespace)"),
                Namespaces::None(why) if git == 1 => {
                    format!(".git read-only by Landlock; new top-level entries need approval ({why}){tmp}")
                }
                Namespaces::None(why) if !tmp.is_empty() => {
                    format!("{names} read-only by Landlock ({why}){tmp}")
                }
                Namespaces::None(why) => format!("{names} not protected ({why})"),
            });
        }
        if self.hides_sockets(policy) {
            parts.push("daemon sockets hidden (/run)".into());
        }
        let secrets = policy.secret_places().len();
        if secrets > 0 {
            let how = match &iso.ns {
                Namespaces::User | Namespaces::MountOnly => "hidden",
                Namespaces::None(_) => "unreadable by Landlock",
            };
            let s = if secrets == 1 { "" } else { "s" };
            parts.push(format!("{secrets} secret place{s} {how}"));
        }
        if self.guarded(policy) {
            let what =
                if policy.network { "modes, owners and times" } else { "modes, owners, times and sockets" };
            parts.push(format!("{what} checked by a seccomp supervisor"));
        }
        parts.join(", ")
    }

    /// What the promises depend on: the Landlock ABI, why no namespace can be had (`None`: a
    /// mount namespace is entered) and why the syscall filter does not load.
    pub(super) fn facts(&self, policy: &Policy) -> super::promise::Facts {
        let iso = self.isolation(policy);
        super::promise::Facts {
            abi: self.abi,
            no_namespace: match &iso.ns {
                Namespaces::User | Namespaces::MountOnly => None,
                Namespaces::None(why) => Some(why.clone()),
            },
            no_filter: if policy.network { None } else { iso.seccomp_error.clone() },
            sockets_hidden: self.hides_sockets(policy),
            supervisor: match (&iso.ns, &iso.guard_error) {
                (Namespaces::None(_), None) => super::promise::Supervisor::Works,
                (Namespaces::None(_), Some(why)) => super::promise::Supervisor::Missing(why.clone()),
                _ => super::promise::Supervisor::NotNeeded,
            },
            // Filled in by the caller (host facts, not the sandbox's).
            watch: false,
            counted: false,
        }
    }

    /// Whether commands run under the seccomp supervisor (no namespace, and it works here).
    fn guarded(&self, policy: &Policy) -> bool {
        let iso = self.isolation(policy);
        matches!(iso.ns, Namespaces::None(_)) && iso.guard_error.is_none()
    }

    /// Whether a mount namespace hides the daemons' socket folders for this policy.
    pub(super) fn hides_sockets(&self, policy: &Policy) -> bool {
        !policy.hidden().is_empty()
            && matches!(self.isolation(policy).ns, Namespaces::User | Namespaces::MountOnly)
    }

    /// What Landlock alone cannot hold for this policy, when no namespace can be had.
    /// Without a namespace nothing stops a mode, owner or time change anywhere (Landlock has no
    /// right for them), protected folders or not.
    pub(super) fn namespace_gap(&self, policy: &Policy) -> Option<String> {
        if self.guarded(policy) {
            return None;
        }
        match &self.isolation(policy).ns {
            Namespaces::User | Namespaces::MountOnly => None,
            Namespaces::None(why) if policy.mounts().is_empty() => Some(format!(
                "{why}: Landlock alone keeps files outside the writable roots from being written, but not their modes, owners or times changed (chmod, chown, touch -d)"
            )),
            Namespaces::None(why) => Some(format!(
                "{why}: Landlock alone keeps the protected folders' files from being written, but not their modes changed (chmod, chown)"
            )),
        }
    }

    /// Sets `cmd` up to confine itself between fork and exec.
    pub(super) fn confine(
        &self,
        cmd: &mut std::process::Command,
        policy: &Policy,
    ) -> Result<(), SandboxError> {
        let iso = self.isolation(policy);
        let ns = match &iso.ns {
            Namespaces::None(_) => None,
            kind => Some(NsPlan::new(kind, policy, &policy.mounts(), &policy.hidden())),
        };
        let per_entry =
            (policy.protected_git().is_some() || !policy.protected_entries.is_empty()) && ns.is_none();
        let (roots, private_tmp) =
            if ns.is_none() { policy.writable_without_namespaces() } else { (policy.writable(), None) };
        if let Some(tmp) = &private_tmp {
            std::fs::create_dir_all(tmp)
                .map_err(|e| SandboxError::Setup(format!("the private temp dir {}: {e}", tmp.display())))?;
            cmd.env("TMPDIR", tmp);
        }
        // The secret places are left out of the rules with a mount namespace too: its covers can
        // be got around (a clone of a mount above them, a file handle), the rules cannot. Those
        // missing now are left out as well, so one made later is not readable either.
        let secrets = policy.secret_places();
        let writable = writable_paths(policy, &roots, per_entry, &secrets);
        let unreadable: Vec<PathBuf> = secrets.iter().cloned().chain(policy.missing_secrets()).collect();
        let ruleset = ruleset(&readable(&unreadable), &writable, policy.network)
            .map_err(|e| SandboxError::Setup(format!("Landlock rules: {e}")))?;
        let filter = iso.seccomp_error.is_none().then(|| Arc::clone(&self.filter));
        let guard = if self.guarded(policy) {
            let rules = guard::Rules {
                roots: guard::Roots::new(&writable, &policy.workspace),
                sockets: !policy.network,
                abstract_scoped: self.abi >= 6,
            };
            Some(
                guard::prepare(rules)
                    .map_err(|e| SandboxError::Setup(format!("the seccomp supervisor: {e}")))?,
            )
        } else {
            None
        };
        // Without a user namespace a root command would keep the capabilities of `DROPPED`.
        let drop_admin = ns.is_none();
        install(cmd, ns, ruleset, filter, guard, drop_admin);
        Ok(())
    }

    fn isolation(&self, policy: &Policy) -> &Isolation {
        self.isolation.get_or_init(|| probe_isolation(policy, &self.filter))
    }
}

/// Adds the child-side steps to `cmd`: namespaces, then Landlock, then the syscall filter, then
/// the supervisor's filter (last: its listener goes to octo before exec).
#[allow(unsafe_code)]
fn install(
    cmd: &mut std::process::Command,
    ns: Option<NsPlan>,
    ruleset: RulesetCreated,
    filter: Option<Arc<BpfProgram>>,
    guard: Option<guard::ChildSide>,
    drop_admin: bool,
) {
    use std::os::unix::process::CommandExt;
    let mut ruleset = Some(ruleset);
    let child = move || -> std::io::Result<()> {
        if let Some(ns) = &ns {
            ns.enter().map_err(errno)?;
        }
        if let Some(rs) = ruleset.take() {
            match rs.restrict_self() {
                Ok(s) if s.ruleset != RulesetStatus::NotEnforced => {}
                Ok(_) => return Err(std::io::Error::from_raw_os_error(libc::ENOSYS)),
                Err(_) => return Err(std::io::Error::last_os_error()),
            }
        }
        if let Some(f) = &filter {
            seccompiler::apply_filter(f).map_err(|_| std::io::Error::last_os_error())?;
        }
        if let Some(g) = &guard {
            g.enter()?;
        }
        if drop_admin {
            // Out of the bounding set, so the program exec'd next has it in no set (a user
            // without it, or without CAP_SETPCAP, is refused: nothing to drop then).
            // SAFETY: one system call on constants.
            for cap in DROPPED {
                let _ = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
            }
        }
        Ok(())
    };
    // SAFETY: the closure runs in the forked child before exec. It makes only system calls on
    // data prepared by the parent (C strings, byte buffers, a ruleset fd, a BPF program) and
    // builds its errors from raw errno values, so it neither allocates nor takes a lock that
    // another thread of the parent could have held at fork.
    unsafe {
        cmd.pre_exec(child);
    }
}

fn errno(e: Errno) -> std::io::Error {
    std::io::Error::from_raw_os_error(e as i32)
}

/// The highest Landlock ABI (up to [`TARGET`]) this kernel enforces in full; 0 without Landlock.
fn landlock_abi() -> u8 {
    let levels = [(6, ABI::V6), (5, ABI::V5), (4, ABI::V4), (3, ABI::V3), (2, ABI::V2), (1, ABI::V1)];
    for (n, abi) in levels {
        let attempt = || -> Result<RulesetCreated, RulesetError> {
            let mut r = Ruleset::default()
                .set_compatibility(CompatLevel::HardRequirement)
                .handle_access(AccessFs::from_all(abi))?;
            if n >= 4 {
                r = r.handle_access(AccessNet::from_all(abi))?;
            }
            if n >= 6 {
                r = r.scope(Scope::from_all(abi))?;
            }
            r.create()
        };
        if attempt().is_ok() {
            return n;
        }
    }
    0
}

/// The directories a command may write, and the rules' targets: under `per_entry` (no mount
/// namespace to keep `.git` and the prompt files read-only) the workspace is split around them:
/// its entries but the protected ones, and inside a folder holding a nested protected file
/// (`docs/rules.md`, included by `CLAUDE.md`) that folder's entries likewise, never the folder
/// itself.
fn writable_paths(policy: &Policy, roots: &[PathBuf], per_entry: bool, secrets: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let ws = std::fs::canonicalize(&policy.workspace).unwrap_or_else(|_| policy.workspace.clone());
    let inside: Vec<PathBuf> =
        secrets.iter().filter_map(|s| Some(policy.workspace.join(s.strip_prefix(&ws).ok()?))).collect();
    let kept: Vec<PathBuf> = std::iter::once(policy.workspace.join(".git"))
        .chain(policy.protected_entries.iter().map(|p| policy.workspace.join(p)))
        .chain(inside.iter().cloned())
        .collect();
    for dir in roots.iter().cloned() {
        if (per_entry || !inside.is_empty()) && dir == policy.workspace {
            super::hide::split(&dir, &kept, &mut out);
        } else {
            out.push(dir);
        }
    }
    if !out.is_empty() {
        out.extend(DEVICE_DIRS.iter().map(PathBuf::from));
    }
    out
}

/// Where commands may read: everywhere but the secret places and `/dev`, of which only the
/// devices of [`DEVICES`] and the folders of [`DEVICE_DIRS`] are granted (a root command could
/// otherwise read the disk itself, `/dev/vda`, and every secret on it).
fn readable(secrets: &[PathBuf]) -> Vec<PathBuf> {
    let mut left_out = secrets.to_vec();
    left_out.push(PathBuf::from("/dev"));
    let mut out = super::hide::readable(&left_out);
    out.extend(DEVICE_DIRS.iter().map(PathBuf::from).filter(|d| d.is_dir()));
    out
}

/// The Landlock ruleset: read and execute in `readable` (everywhere but the secret places),
/// write in `writable` and on a few devices; no TCP and no abstract Unix sockets of the outside
/// without the network; no signals to processes outside the command.
fn ruleset(
    readable: &[PathBuf],
    writable: &[PathBuf],
    network: bool,
) -> Result<RulesetCreated, RulesetError> {
    let mut r = Ruleset::default().handle_access(AccessFs::from_all(TARGET))?;
    if !network {
        r = r.handle_access(AccessNet::from_all(TARGET))?.scope(Scope::AbstractUnixSocket)?;
    }
    r = r.scope(Scope::Signal)?;
    let device = AccessFs::from_file(TARGET) & !AccessFs::Execute;
    // No device node is made anywhere (root could make one for the disk in the workspace).
    let write = AccessFs::from_all(TARGET) & !(AccessFs::MakeBlock | AccessFs::MakeChar);
    r.create()?
        .add_rules(path_beneath_rules(readable, AccessFs::from_read(TARGET)))?
        // Listing stays possible everywhere (`ls ~`, `ls /dev`), reading what is listed does not.
        .add_rules(path_beneath_rules(["/"], AccessFs::ReadDir))?
        .add_rules(path_beneath_rules(DEVICES, device))?
        .add_rules(path_beneath_rules(writable, write))
}

/// Tries, once, what the first command needs: the syscall filter, then the namespaces (a user
/// and mount namespace; as root without user namespaces, a mount namespace alone).
fn probe_isolation(policy: &Policy, filter: &Arc<BpfProgram>) -> Isolation {
    let f = Arc::clone(filter);
    let seccomp_error =
        try_child(move || seccompiler::apply_filter(&f).map_err(|_| std::io::Error::last_os_error())).err();
    let mounts = policy.mounts();
    let hidden = policy.hidden();
    let root = nix::unistd::geteuid().is_root();
    let ns = if policy.simulate_no_namespaces {
        Namespaces::None("no user namespace (simulated by OCTO_SANDBOX_SIMULATE)".into())
    } else {
        let try_ns = |kind: &Namespaces| {
            let plan = NsPlan::new(kind, policy, &mounts, &hidden);
            try_child(move || plan.enter().map_err(errno))
        };
        match try_ns(&Namespaces::User) {
            Ok(()) => Namespaces::User,
            Err(user) if root => match try_ns(&Namespaces::MountOnly) {
                Ok(()) => Namespaces::MountOnly,
                Err(mount) => {
                    Namespaces::None(format!("no user namespace: {user}; no mount namespace: {mount}"))
                }
            },
            Err(user) => Namespaces::None(format!("no user namespace with mounts: {user}")),
        }
    };
    let guard_error = match &ns {
        Namespaces::None(_) if policy.simulate_no_supervisor => {
            Some("no seccomp supervisor (simulated by OCTO_SANDBOX_SIMULATE)".to_owned())
        }
        Namespaces::None(_) => guard::probe().err(),
        Namespaces::User | Namespaces::MountOnly => None,
    };
    Isolation { ns, seccomp_error, guard_error }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_builds_for_this_machine() {
        for network in [false, true] {
            let prog = base_filter(network).unwrap();
            assert!(prog.len() > 4);
        }
    }

    #[test]
    fn per_entry_rules_leave_out_git_and_the_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("README"), "x").unwrap();
        let policy = Policy::new(super::super::policy::Mode::WorkspaceWrite, dir.path());
        let paths = writable_paths(&policy, &policy.writable(), true, &[]);
        assert!(paths.contains(&dir.path().join("src")));
        assert!(paths.contains(&dir.path().join("README")));
        assert!(!paths.contains(&dir.path().join(".git")));
        assert!(!paths.contains(&dir.path().to_path_buf()));
        assert!(writable_paths(&policy, &policy.writable(), false, &[]).contains(&dir.path().to_path_buf()));
    }

    #[test]
    fn without_namespaces_no_writable_root_holds_a_protected_folder() {
        // The workspace and a home inside the temp dir: the temp dir would make `.git`, the
        // neighbours and the home writable, so the session's own temp dir replaces it.
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("job/ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let private = tmp.path().join("octo/output/s1/tmp");
        let mut policy = Policy::new(super::super::policy::Mode::WorkspaceWrite, &ws);
        policy.writable_roots = vec![tmp.path().to_path_buf(), tmp.path().join("octo/output/s1")];
        policy.read_only = vec![home];
        policy.private_tmp = Some(private.clone());
        let (roots, used) = policy.writable_without_namespaces();
        assert_eq!(used.as_deref(), Some(private.as_path()));
        assert!(!roots.contains(&tmp.path().to_path_buf()), "{roots:?}");
        assert!(roots.contains(&ws) && roots.contains(&private), "{roots:?}");
        // Nothing protected in the temp dir: it stays writable, no private one.
        let elsewhere = tempfile::tempdir().unwrap();
        let mut open = Policy::new(super::super::policy::Mode::WorkspaceWrite, elsewhere.path());
        open.writable_roots = vec![tmp.path().join("octo")];
        open.private_tmp = Some(private);
        let (roots, used) = open.writable_without_namespaces();
        assert_eq!(used, None);
        assert!(roots.contains(&tmp.path().join("octo")));
    }
}
