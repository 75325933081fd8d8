//! No process outlives octo. Every command runs with a tag in its environment that is the same
//! for one session's commands; a daemonised grandchild (`setsid nohup … &`) leaves its process
//! group but keeps the tag, so when the session ends it is found and killed. On Linux octo is also
//! a child subreaper (`PR_SET_CHILD_SUBREAPER`): orphans of its commands become its children
//! rather than init's, and the ones that exit on their own are reaped.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

/// The environment variable that carries a session's tag.
pub const TAG_VAR: &str = "OCTO_SESSION_TAG";

/// Children started (and waited for) by octo's own process handling; everything else that is
/// octo's child was adopted.
fn managed() -> &'static Mutex<HashSet<u32>> {
    static M: OnceLock<Mutex<HashSet<u32>>> = OnceLock::new();
    M.get_or_init(|| Mutex::new(HashSet::new()))
}

/// The process groups octo's commands ran in: a zombie in one of them that octo adopted is a
/// command's orphan, never a child another part of octo waits for.
fn groups() -> &'static Mutex<HashSet<u32>> {
    static G: OnceLock<Mutex<HashSet<u32>>> = OnceLock::new();
    G.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Which session's tag each command's process group ran with: an orphan still in one of them
/// belongs to that session, whatever it did to its environment.
fn tag_groups() -> &'static Mutex<std::collections::HashMap<u32, String>> {
    static G: OnceLock<Mutex<std::collections::HashMap<u32, String>>> = OnceLock::new();
    G.get_or_init(|| Mutex::new(std::collections::HashMap::new()))
}

/// Notes that the process group `group` (started by octo for itself: a hook) runs with `tag`:
/// what it leaves behind is killed with the tag's session, and when octo dies.
pub fn track(group: u32, tag: &str) {
    record_group(group, tag);
}

/// Notes that the command leading process group `group` runs with `tag`.
pub(crate) fn record_group(group: u32, tag: &str) {
    crate::watch::start(TAG_VAR);
    tag_groups().lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(group, tag.to_owned());
}

/// How many sessions with commands are alive in this process ([`SessionGuard`]).
static LIVE_SESSIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Counts a session as alive while it is held: an orphan that left octo's session (`setsid`)
/// cannot be told apart by session, so it is killed when the last one ends.
#[derive(Debug)]
pub struct SessionGuard(());

impl SessionGuard {
    /// A session starts.
    pub fn new() -> Self {
        LIVE_SESSIONS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Self(())
    }
}

impl Default for SessionGuard {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        LIVE_SESSIONS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Marks `pid` as a child octo waits for itself (or no longer does); a command's shell also
/// leads its process group.
pub(crate) fn set_managed(pid: u32, yes: bool) {
    if yes {
        lock(groups()).insert(pid);
    }
    let mut m = lock(managed());
    if yes {
        m.insert(pid);
    } else {
        m.remove(&pid);
    }
}

/// Makes octo the reaper of its commands' orphans (Linux; once per process).
pub fn become_subreaper() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        #[cfg(target_os = "linux")]
        {
            let _ = nix::sys::prctl::set_child_subreaper(true);
        }
    });
}

/// The tags this process made: only processes carrying one of them are its commands' (an octo
/// run from an octo command inherits its parent's tag, which is not its own).
fn own_tags() -> &'static Mutex<HashSet<String>> {
    static T: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    T.get_or_init(|| Mutex::new(HashSet::new()))
}

/// A new tag for one session's commands.
pub fn new_tag() -> String {
    let tag = format!("{}-{:x}-{:x}", std::process::id(), crate::unique::unique(), {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        N.fetch_add(1, Ordering::Relaxed)
    });
    own_tags().lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(tag.clone());
    tag
}

#[cfg(target_os = "linux")]
fn proc_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default()
}

/// What `/proc/<pid>/stat` says about a process.
#[cfg(target_os = "linux")]
struct Stat {
    ppid: u32,
    state: char,
    group: u32,
    session: u32,
}

#[cfg(target_os = "linux")]
fn stat(pid: u32) -> Option<Stat> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain anything: parse after the last `)`.
    let rest = s.get(s.rfind(')')? + 2..)?;
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    let group = f.next()?.parse().ok()?;
    let session = f.next()?.parse().ok()?;
    Some(Stat { ppid, state, group, session })
}

/// The live processes of process group `group` and everything below them, whatever groups
/// and sessions those moved to (a fork bomb whose children call `setpgid` or `setsid`).
#[cfg(target_os = "linux")]
pub(crate) fn tree(group: u32) -> Vec<u32> {
    if group == 0 {
        return Vec::new();
    }
    let all: Vec<(u32, Stat)> = proc_pids()
        .into_iter()
        .filter_map(|p| stat(p).map(|s| (p, s)))
        .filter(|(_, s)| s.state != 'Z')
        .collect();
    let found: HashSet<u32> = all.iter().filter(|(_, s)| s.group == group).map(|(p, _)| *p).collect();
    with_descendants(&all, found)
}

/// `found` and every live process below one of them in `all`, whatever groups and sessions
/// those moved to.
#[cfg(target_os = "linux")]
fn with_descendants(all: &[(u32, Stat)], mut found: HashSet<u32>) -> Vec<u32> {
    loop {
        let more: Vec<u32> = all
            .iter()
            .filter(|(p, s)| s.state != 'Z' && !found.contains(p) && found.contains(&s.ppid))
            .map(|(p, _)| *p)
            .collect();
        if more.is_empty() {
            break;
        }
        found.extend(more);
    }
    found.into_iter().collect()
}

/// Stops, then kills, process group `group` and everything below it, whatever groups they
/// moved to (`setpgid`, `setsid`), looking again while a process forks in between (a fork bomb
/// past its room). Elsewhere than Linux nothing is done: the caller kills the group itself.
#[cfg(not(target_os = "linux"))]
pub fn kill_tree(group: u32) {
    let _ = group;
}

/// See the other platforms' `kill_tree`.
#[cfg(target_os = "linux")]
pub fn kill_tree(group: u32) {
    use nix::sys::signal::{kill, Signal};
    let me = std::process::id();
    let signal = |pids: &HashSet<u32>, s: Signal| {
        for p in pids.iter().filter_map(|p| i32::try_from(*p).ok()) {
            let _ = kill(nix::unistd::Pid::from_raw(p), s);
        }
    };
    // Everything is stopped first, looking again until no new process shows up (one forked
    // just before its parent stopped is found below it), and only then killed: a parent killed
    // early would leave its last children orphans outside the tree.
    let mut stopped: HashSet<u32> = HashSet::new();
    for _ in 0..50 {
        let new: HashSet<u32> =
            tree(group).into_iter().filter(|p| *p != me && !stopped.contains(p)).collect();
        if new.is_empty() {
            break;
        }
        signal(&new, Signal::SIGSTOP);
        stopped.extend(new);
    }
    signal(&stopped, Signal::SIGKILL);
    reap_adopted();
}

/// Orphans of octo's commands that octo (as their subreaper) adopted, seen alive; only these are
/// ever reaped here, so a child some other part of octo waits for is never taken from it.
fn adopted() -> &'static Mutex<HashSet<u32>> {
    static A: OnceLock<Mutex<HashSet<u32>>> = OnceLock::new();
    A.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Whether `pid` carries one of this process's tags.
#[cfg(target_os = "linux")]
fn has_own_tag(pid: u32) -> bool {
    let prefix = format!("{TAG_VAR}=");
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else { return false };
    let tags = own_tags().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    env.split(|b| *b == 0).any(|kv| {
        kv.strip_prefix(prefix.as_bytes())
            .and_then(|v| std::str::from_utf8(v).ok())
            .is_some_and(|v| tags.contains(v))
    })
}

/// Kills the processes of process group `group` that carry `tag` (what is left of a command
/// whose shell already ended: its number may since belong to someone else's group).
pub fn kill_group_tagged(group: u32, tag: &str) {
    #[cfg(target_os = "linux")]
    {
        let needle = format!("{TAG_VAR}={tag}");
        for pid in
            proc_pids().into_iter().filter(|p| stat(*p).is_some_and(|s| s.group == group && s.state != 'Z'))
        {
            let tagged = std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()));
            if let (true, Ok(p)) = (tagged, i32::try_from(pid)) {
                let _ =
                    nix::sys::signal::kill(nix::unistd::Pid::from_raw(p), nix::sys::signal::Signal::SIGKILL);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (group, tag);
    }
}

/// Kills every process (of this user) that carries `tag`, except octo itself, and reaps the
/// ones octo adopted; returns how many were killed.
pub fn kill_tagged(tag: &str) -> usize {
    #[cfg(target_os = "linux")]
    {
        let me = std::process::id();
        let needle = format!("{TAG_VAR}={tag}");
        let mut killed = 0;
        // A process may fork while it is being killed: look again until nothing is left.
        for _ in 0..5 {
            let found = session_processes(me, &needle, tag);
            if found.is_empty() {
                break;
            }
            for pid in found {
                if let Ok(p) = i32::try_from(pid) {
                    if nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(p),
                        nix::sys::signal::Signal::SIGKILL,
                    )
                    .is_ok()
                    {
                        killed += 1;
                    }
                }
                if stat(pid).is_some_and(|s| s.ppid == me) && !is_managed(pid) {
                    lock(adopted()).insert(pid);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        reap_adopted();
        killed
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = tag;
        0
    }
}

/// The live processes of the session whose tag is `tag`: those carrying it, the orphans octo
/// adopted from its commands — still in one of their process groups, or (when no other session
/// is alive) any that left octo's session with `setsid`, environment or not — and everything
/// below them.
#[cfg(target_os = "linux")]
pub(crate) fn session_processes(me: u32, needle: &str, tag: &str) -> Vec<u32> {
    let own_groups: HashSet<u32> = tag_groups()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
        .filter(|(_, t)| t.as_str() == tag)
        .map(|(g, _)| *g)
        .collect();
    let my_session = stat(me).map(|s| s.session);
    let last = LIVE_SESSIONS.load(std::sync::atomic::Ordering::SeqCst) <= 1;
    let all: Vec<(u32, Stat)> =
        proc_pids().into_iter().filter(|p| *p != me).filter_map(|p| stat(p).map(|s| (p, s))).collect();
    let found: HashSet<u32> = all
        .iter()
        .filter(|(_, s)| s.state != 'Z')
        .filter(|(p, s)| {
            let tagged = std::fs::read(format!("/proc/{p}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()));
            let adopted = s.ppid == me
                && !is_managed(*p)
                && (own_groups.contains(&s.group) || (last && Some(s.session) != my_session));
            tagged || adopted
        })
        .map(|(p, _)| *p)
        .collect();
    with_descendants(&all, found)
}

fn lock(m: &Mutex<HashSet<u32>>) -> std::sync::MutexGuard<'_, HashSet<u32>> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn is_managed(pid: u32) -> bool {
    lock(managed()).contains(&pid)
}

/// Reaps the orphans of octo's commands that octo adopted and that have exited, and notes the
/// living ones that left their process group (a daemon) for later.
pub fn reap_adopted() {
    #[cfg(target_os = "linux")]
    {
        let me = std::process::id();
        for pid in proc_pids() {
            let Some(st) = stat(pid) else { continue };
            if st.ppid != me || is_managed(pid) {
                continue;
            }
            if st.state == 'Z' {
                // A zombie in one of the commands' groups is a command's orphan — unless it leads
                // its own group (a child some other part of octo started could reuse an old
                // group's number); those only when seen alive carrying the tag.
                let ours =
                    lock(adopted()).remove(&pid) || (st.group != pid && lock(groups()).contains(&st.group));
                if ours {
                    if let Ok(p) = i32::try_from(pid) {
                        let _ = nix::sys::wait::waitpid(
                            nix::unistd::Pid::from_raw(p),
                            Some(nix::sys::wait::WaitPidFlag::WNOHANG),
                        );
                    }
                }
            } else if has_own_tag(pid) {
                lock(adopted()).insert(pid);
            }
        }
    }
}

/// Reaps now and a few times over the next second (killed processes take a moment to die).
pub fn reap_soon() {
    reap_adopted();
    #[cfg(target_os = "linux")]
    {
        let _ = std::thread::Builder::new().name("octo-reaper".into()).spawn(|| {
            for ms in [30, 150, 800] {
                std::thread::sleep(std::time::Duration::from_millis(ms));
                reap_adopted();
            }
        });
    }
}
