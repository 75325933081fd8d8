//! Hooks that would run planted code: before a hook runs, the files its command runs in the
//! workspace (a script it names, the `Makefile` behind `make`, the `package.json` behind `npm`,
//! and the scripts those name) are compared with what they were when the session began. When one
//! changed — by the model, or by a command it ran — the user is asked first, in every mode,
//! naming the files; nobody to ask means the hook does not run. An answer holds for the files as
//! they are: the next change asks again.

mod approved;
mod committed;
mod files;
#[cfg(test)]
mod tests;

pub(crate) use files::files_run;
use files::MAX_FILE;
use octo_agent::{ApprovalDecision, ApprovalRequest};
use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::SystemTime;

/// Numbers the questions.
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Asks the user to approve a request; `None` when nobody can answer.
pub(crate) type Ask = Arc<
    dyn Fn(ApprovalRequest) -> Pin<Box<dyn Future<Output = Option<ApprovalDecision>> + Send>> + Send + Sync,
>;

/// The user's answer for a file as it was when asked: (contents, yes).
type Answer = (Option<Vec<u8>>, bool);

/// A file as the session found it.
#[derive(Debug)]
enum Then {
    /// Its contents (`None`: it did not exist).
    Was(Option<Vec<u8>>),
    /// Not as last committed (nor as recorded by an earlier session, [`approved`]): changed
    /// before this session, perhaps by a model in an earlier one, so its first run asks.
    Uncommitted,
}

/// Where what outlives a session is kept: the approvals file, and octo's checkpoint stores
/// (which tell when octo first changed files in a workspace). `None`s: nothing is kept.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    /// `~/.octo/hook-files.json`.
    pub record: Option<PathBuf>,
    /// `~/.octo/checkpoints`.
    pub checkpoints: Option<PathBuf>,
    /// The tag of the session's commands, once known: they are held still while a hook runs.
    pub command_tag: Option<Arc<std::sync::OnceLock<String>>>,
}

/// Stands for the files past the crawl's budget: a hook whose files were not all followed asks.
const OVERFLOW: &str = "(more files than octo follows)";

/// Files as they were when the session began, and the user's answers since.
pub(crate) struct HookGuard {
    workspace: PathBuf,
    began: SystemTime,
    /// Each file a hook ran at the start, as it was then.
    before: HashMap<PathBuf, Then>,
    /// The files each command ran at the start: still compared when the command no longer
    /// seems to run them (a script swapped for a link to the outside).
    start: HashMap<String, Vec<PathBuf>>,
    /// The user's answer for a file as it was when asked: (contents, yes).
    answered: tokio::sync::Mutex<HashMap<PathBuf, Answer>>,
    /// `None`: nobody can be asked (an unattended run).
    ask: Option<Ask>,
    /// What earlier sessions found and the user approved.
    approved: approved::Approved,
    /// The tag of the session's commands ([`Kept::command_tag`]).
    command_tag: Option<Arc<std::sync::OnceLock<String>>>,
}

impl HookGuard {
    /// Records the files `commands` run in `workspace` as they are now; `record` keeps what
    /// outlives the session ([`approved`]; `None`: nothing is kept).
    pub(crate) fn new<'a>(
        workspace: &Path,
        commands: impl Iterator<Item = &'a str>,
        ask: Option<Ask>,
        kept: Kept,
    ) -> Self {
        let workspace = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        let approved = approved::Approved::load(kept.record, &workspace);
        let octo_here = kept.checkpoints.as_deref().and_then(|c| approved::octo_first_here(c, &workspace));
        let mut before = HashMap::new();
        let mut start = HashMap::new();
        for command in commands {
            let files = files_run(command, &workspace).files;
            for file in &files {
                before.entry(file.clone()).or_insert_with(|| Then::Was(contents(file)));
            }
            start.insert(command.to_owned(), files);
        }
        let all: Vec<PathBuf> = before.keys().cloned().collect();
        let (untracked, changed) = committed::uncommitted(&workspace, &all);
        let mut keep = Vec::new();
        for file in untracked.iter().chain(&changed) {
            let Some(Then::Was(now)) = before.get(file) else { continue };
            let rel = file.strip_prefix(&workspace).unwrap_or(file).display().to_string();
            // Found by the first session with hooks, and there before octo changed anything here.
            let older = |f: &Path| {
                let m = std::fs::symlink_metadata(f).ok();
                octo_here.is_none_or(|t| m.and_then(|m| ctime(&m)).is_some_and(|c| c < t))
            };
            let first_sight = untracked.contains(file) && approved.first() && older(file);
            if first_sight || approved.has(&rel, now.as_deref()) {
                keep.push((rel, now.clone()));
            } else {
                before.insert(file.clone(), Then::Uncommitted);
            }
        }
        approved.add(&keep);
        Self {
            workspace,
            // The kernel stamps changes from a clock that lags by up to a tick: a change made
            // just after this moment can read as a little before it.
            began: SystemTime::now() - std::time::Duration::from_millis(50),
            before,
            start,
            answered: tokio::sync::Mutex::new(HashMap::new()),
            ask,
            approved,
            command_tag: kept.command_tag,
        }
    }

    /// As a guard for [`octo_hooks::Hooks`].
    pub(crate) fn into_guard(self) -> octo_hooks::Guard {
        let me = Arc::new(self);
        Arc::new(move |event, command| {
            let me = Arc::clone(&me);
            Box::pin(async move { me.check(event.as_str(), &command).await })
        })
    }

    /// The files `command` runs now, and those it ran at the start; whether more were named
    /// than are followed.
    fn files(&self, command: &str) -> (Vec<PathBuf>, bool) {
        let run = files_run(command, &self.workspace);
        let mut files = run.files;
        for f in self.start.get(command).into_iter().flatten() {
            if !files.contains(f) {
                files.push(f.clone());
            }
        }
        (files, run.overflow)
    }

    /// Which of `files` changed in this session (or now lead outside the workspace); with
    /// `overflow`, a stand-in for the files not followed, named by those that were.
    fn changed(&self, files: &[PathBuf], overflow: bool) -> Vec<(PathBuf, Option<Vec<u8>>)> {
        let mut out: Vec<(PathBuf, Option<Vec<u8>>)> = Vec::new();
        if overflow {
            let names: Vec<String> = files.iter().map(|f| self.name(f)).collect();
            out.push((self.workspace.join(OVERFLOW), Some(names.join("\n").into_bytes())));
        }
        out.extend(files.iter().filter_map(|file| {
            let now = contents(file);
            let outside = std::fs::canonicalize(file).is_ok_and(|r| !r.starts_with(&self.workspace));
            let differs = outside
                || match self.before.get(file) {
                    Some(Then::Was(then)) => *then != now,
                    Some(Then::Uncommitted) => true,
                    // Not seen at the start: changed when it, or a folder on its way (renamed
                    // into place), was made or changed since.
                    None => now.is_some() && self.moved_in(file),
                };
            differs.then(|| (file.clone(), now))
        }));
        out
    }

    /// `Ok` when the hook may run: nothing it runs changed, or the user said yes to the files as
    /// they are; with a check, once it ran, that none of them changed while it ran (a command
    /// left running could swap one between this check and the hook's reading it).
    async fn check(&self, event: &str, command: &str) -> Result<Option<octo_hooks::AfterRun>, String> {
        let (files, overflow) = self.files(command);
        self.settle(event, command, self.changed(&files, overflow)).await?;
        // From here until the hook has run, the session's commands are held still: none can
        // swap a file in between this look and the hook's reading it.
        let paused = self
            .command_tag
            .as_ref()
            .and_then(|t| t.get())
            .map(|t| octo_tools::shell::pause::pause_tagged(t));
        // Looked at again, held: what moved while the user was asked is not what they said yes to.
        let (files, overflow) = self.files(command);
        let changed = self.changed(&files, overflow);
        if !self.settled(&changed).await {
            return Err(refused(&self.names(&changed), "it changed again while you were asked"));
        }
        // The folders on the way count too: swapping one for another and back leaves a file's
        // own stamp as it was.
        let mut watched: Vec<PathBuf> = files.clone();
        for f in &files {
            for dir in self.folders_on_way(f) {
                if !watched.iter().any(|w| w == dir) {
                    watched.push(dir.to_path_buf());
                }
            }
        }
        let stamps: Vec<Stamp> = watched.iter().map(|f| stamp(f)).collect();
        let names: Vec<String> = watched.iter().map(|f| self.name(f)).collect();
        Ok(Some(Box::new(move || {
            let moved: Vec<&str> = watched
                .iter()
                .zip(&stamps)
                .zip(&names)
                .filter(|((f, s), _)| stamp(f) != **s)
                .map(|(_, n)| n.as_str())
                .collect();
            drop(paused);
            (!moved.is_empty()).then(|| {
                format!(
                    "ran {}, which changed while it ran (a command left running may have swapped it): what it said is set aside",
                    moved.join(", ")
                )
            })
        })))
    }

    /// Whether every one of `changed` is as the user said yes to it.
    async fn settled(&self, changed: &[(PathBuf, Option<Vec<u8>>)]) -> bool {
        let answered = self.answered.lock().await;
        changed.iter().all(|(f, now)| answered.get(f).is_some_and(|(then, yes)| *yes && then == now))
    }

    /// Asks about `changed` files not answered for as they are.
    async fn settle(
        &self,
        event: &str,
        command: &str,
        changed: Vec<(PathBuf, Option<Vec<u8>>)>,
    ) -> Result<(), String> {
        if changed.is_empty() {
            return Ok(());
        }
        // One question at a time: hooks of one event run in parallel.
        let mut answered = self.answered.lock().await;
        let mut open = Vec::new();
        for (file, now) in &changed {
            match answered.get(file) {
                Some((then, false)) if then == now => {
                    return Err(refused(&self.names(&changed), "you said no"))
                }
                Some((then, true)) if then == now => {}
                _ => open.push(file.clone()),
            }
        }
        if open.is_empty() {
            return Ok(());
        }
        let names = self.names(&changed);
        let Some(ask) = &self.ask else {
            return Err(refused(&names, "nobody can be asked in this run"));
        };
        let mut request = ApprovalRequest::new(
            format!("hook-{}", NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)),
            "hook",
            serde_json::json!({"event": event, "command": command, "files": names}),
            command,
        );
        request.action = "run".to_owned();
        request.reason = Some(format!(
            "this {event} hook runs {}, changed in this session (by the model or a command it ran) or since the last commit; it runs only if you say yes",
            names.join(", ")
        ));
        // An edit cannot apply to a hook's command: only a plain yes runs it.
        let yes = match ask(request).await {
            Some(ApprovalDecision::Allow | ApprovalDecision::AllowAlways) => true,
            Some(_) => false,
            None => return Err(refused(&names, "nobody answered")),
        };
        if yes {
            let keep: Vec<(String, Option<Vec<u8>>)> =
                changed.iter().map(|(f, now)| (self.name(f), now.clone())).collect();
            self.approved.add(&keep);
        }
        for (file, now) in changed {
            answered.insert(file, (now, yes));
        }
        if yes {
            Ok(())
        } else {
            Err(refused(&names, "you said no"))
        }
    }

    /// A file as the user knows it: relative to the workspace.
    fn name(&self, file: &Path) -> String {
        file.strip_prefix(&self.workspace).unwrap_or(file).display().to_string()
    }

    /// Whether a file first seen now, or a folder on its way, was made or changed in this
    /// session (a folder renamed into place keeps its files' own times).
    fn moved_in(&self, file: &Path) -> bool {
        changed_since(file, self.began) || self.folders_on_way(file).any(|d| changed_since(d, self.began))
    }

    /// The folders between the workspace (not included) and `file`.
    fn folders_on_way<'a>(&'a self, file: &'a Path) -> impl Iterator<Item = &'a Path> + 'a {
        file.ancestors().skip(1).take_while(|d| d.starts_with(&self.workspace) && *d != self.workspace)
    }

    /// The files as the user knows them: relative to the workspace.
    fn names(&self, files: &[(PathBuf, Option<Vec<u8>>)]) -> Vec<String> {
        files.iter().map(|(f, _)| self.name(f)).collect()
    }
}

fn refused(names: &[String], why: &str) -> String {
    format!(
        "was not run: it runs {}, changed in this session or since the last commit, and {why}",
        names.join(", ")
    )
}

/// A file's contents, when it is a readable file of at most [`MAX_FILE`] bytes (a bigger one
/// reads as its size and change time, which any rewrite changes).
fn contents(file: &Path) -> Option<Vec<u8>> {
    // A link reads as where it points and what is there (a dangling one too: made later, it
    // counts as changed).
    if let Ok(target) = std::fs::read_link(file) {
        let mut out = format!("link to {}\0", target.display()).into_bytes();
        out.extend(file_contents(file).unwrap_or_default());
        return Some(out);
    }
    file_contents(file)
}

/// A regular file's contents (see [`contents`]).
fn file_contents(file: &Path) -> Option<Vec<u8>> {
    let meta = std::fs::metadata(file).ok()?;
    if !meta.is_file() {
        return None;
    }
    if meta.len() > MAX_FILE {
        return Some(format!("{} {:?}", meta.len(), ctime(&meta)).into_bytes());
    }
    std::fs::read(file).ok()
}

/// What identifies a file's state without reading it: for the name and for what it leads to,
/// the inode, size and status change time (`None`: missing).
type Stamp = [Option<(u64, u64, Option<SystemTime>)>; 2];

fn stamp(file: &Path) -> Stamp {
    let of = |m: std::fs::Metadata| {
        #[cfg(unix)]
        let ino = std::os::unix::fs::MetadataExt::ino(&m);
        #[cfg(not(unix))]
        let ino = 0;
        (ino, m.len(), ctime(&m))
    };
    [std::fs::symlink_metadata(file).ok().map(of), std::fs::metadata(file).ok().map(of)]
}

/// The file's (or its link's) status change time is at or after `began`.
fn changed_since(file: &Path, began: SystemTime) -> bool {
    let link = std::fs::symlink_metadata(file).ok().and_then(|m| ctime(&m));
    let target = std::fs::metadata(file).ok().and_then(|m| ctime(&m));
    // Unknown change times count as changed: asking once too often is the safe side.
    match (link, target) {
        (None, None) => true,
        (a, b) => a.max(b).is_some_and(|t| t >= began),
    }
}

/// The status change time (which no command can set back).
fn ctime(meta: &std::fs::Metadata) -> Option<SystemTime> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let secs = u64::try_from(meta.ctime()).ok()?;
        let nanos = u32::try_from(meta.ctime_nsec()).ok()?;
        SystemTime::UNIX_EPOCH.checked_add(std::time::Duration::new(secs, nanos))
    }
    #[cfg(not(unix))]
    {
        meta.modified().ok()
    }
}
