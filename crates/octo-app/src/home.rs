//! The layout of octo's home directory (`~/.octo`, or `OCTO_HOME`): the one place that knows
//! where each kind of file lives. Everything else asks a [`Home`].

use std::path::{Path, PathBuf};

/// octo's home directory and what is in it.
///
/// ```
/// let home = octo_app::Home::new("/tmp/octo-home");
/// assert_eq!(home.config_file(), std::path::Path::new("/tmp/octo-home/config.toml"));
/// assert_eq!(home.trash(), std::path::Path::new("/tmp/octo-home/trash"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    root: PathBuf,
}

/// Where the user's trust in projects' files is remembered, by fingerprint.
const TRUST_FILE: &str = "hooks-trusted.json";

impl Home {
    /// A home at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// `OCTO_HOME`, else `~/.octo`.
    pub(crate) fn from_env() -> Self {
        Self::new(octo_home())
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the user trusted a project's files (hooks, skills and commands that grant, settings
    /// that allow) with this fingerprint (kept in `hooks-trusted.json`).
    pub(crate) fn trusts(&self, fingerprint: &str) -> bool {
        std::fs::read_to_string(self.root.join(TRUST_FILE))
            .ok()
            .and_then(|t| serde_json::from_str::<std::collections::BTreeMap<String, String>>(&t).ok())
            .is_some_and(|m| m.contains_key(fingerprint))
    }

    /// Remembers that the user trusted the files with this fingerprint in `workspace`.
    pub(crate) fn remember_trust(&self, fingerprint: &str, workspace: &Path) -> std::io::Result<()> {
        let mut all: std::collections::BTreeMap<String, String> =
            std::fs::read_to_string(self.root.join(TRUST_FILE))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default();
        all.insert(fingerprint.to_owned(), workspace.display().to_string());
        self.write_file(TRUST_FILE, &serde_json::to_string_pretty(&all).map_err(std::io::Error::other)?)
    }

    /// Replaces the file `name` in the home with `text` (written to a new private file, then
    /// renamed over the old one, so a reader never sees half of it).
    pub(crate) fn write_file(&self, name: &str, text: &str) -> std::io::Result<()> {
        use std::io::Write;
        let path = self.root.join(name);
        octo_session::private::create_dir(&self.root)?;
        let tmp = self.root.join(format!(".{name}.tmp-{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        {
            let mut f = octo_session::private::create_new(&tmp)?;
            f.write_all(text.as_bytes())?;
        }
        std::fs::rename(&tmp, &path)
    }

    /// `config.toml`: the user's configuration.
    pub fn config_file(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    /// `octorules.md`: the user's rules, read into every session's prompt.
    pub(crate) fn rules_file(&self) -> PathBuf {
        self.root.join("octorules.md")
    }

    /// `sessions/`: saved conversations.
    pub(crate) fn sessions(&self) -> PathBuf {
        self.root.join("sessions")
    }

    /// `sessions/folded/`: transcripts of messages folded into summaries.
    pub(crate) fn folded(&self) -> PathBuf {
        self.sessions().join("folded")
    }

    /// `checkpoints/`: each workspace's shadow git store of the files before and after turns.
    pub fn checkpoints(&self) -> PathBuf {
        self.root.join("checkpoints")
    }

    /// `trash/`: previous contents of files the tools overwrote or edited.
    pub fn trash(&self) -> PathBuf {
        self.root.join("trash")
    }

    /// `output/`: full output of commands too long to return.
    pub fn output(&self) -> PathBuf {
        self.root.join("output")
    }

    /// `logs/`: event logs.
    pub(crate) fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// `history`: the REPL's input history.
    pub fn history_file(&self) -> PathBuf {
        self.root.join("history")
    }

    /// `skills/`: the user's skills.
    pub(crate) fn skills(&self) -> PathBuf {
        self.root.join("skills")
    }

    /// `commands/`: the user's custom slash commands.
    pub(crate) fn commands(&self) -> PathBuf {
        self.root.join("commands")
    }

    /// `agents/`: the user's sub-agent definitions.
    pub(crate) fn agents(&self) -> PathBuf {
        self.root.join("agents")
    }

    /// `memory/`: what octo remembers across sessions.
    pub(crate) fn memory(&self) -> PathBuf {
        self.root.join("memory")
    }

    /// `keys.json`: API keys, when `octo setup` found no keyring service to keep them in.
    pub fn key_file(&self) -> PathBuf {
        self.root.join("keys.json")
    }

    /// `repomap/`: each workspace's repository-map cache (definitions and their lines).
    pub(crate) fn repomap(&self) -> PathBuf {
        self.root.join("repomap")
    }

    /// `mcp-tools/`: MCP servers' tool lists from their last start (so a server still starting
    /// is listed at once).
    pub(crate) fn mcp_tools(&self) -> PathBuf {
        self.root.join("mcp-tools")
    }

    /// `models/`: downloaded local models.
    pub fn models(&self) -> PathBuf {
        self.root.join("models")
    }

    /// The secret locations the permission engine and the terminal guard: the usual ones under
    /// the user's home directory (`~/.ssh`, cloud credentials, browser profiles, …) plus octo's
    /// own files that hold keys or other projects' work: `config.toml` (endpoint headers),
    /// `sessions/`, the REPL `history`, `logs/`, `trash/` (old contents of edited files, `.env`
    /// included), `output/` (other sessions' command output; a session reads its own through
    /// the permission engine's read roots), `hook-env/` (other sessions' `CLAUDE_ENV_FILE`), `repomap/` (other projects' definitions),
    /// `checkpoints/` (every project's files), `memory/` (every project's memory, read by the
    /// memory tools, not by paths), the server's token, and the key file when one is used.
    /// The sandbox hides the same places from commands.
    pub fn secrets(
        &self,
        user_home: Option<PathBuf>,
        key_file: Option<PathBuf>,
    ) -> octo_tools::secrets::Secrets {
        let mut extra = vec![
            self.config_file(),
            self.sessions(),
            self.history_file(),
            self.logs(),
            self.trash(),
            self.output(),
            self.root.join("hook-env"),
            self.repomap(),
            self.checkpoints(),
            self.memory(),
            self.root.join("server-token"),
            self.key_file(),
        ];
        extra.extend(key_file);
        let user_home = user_home.unwrap_or_else(|| PathBuf::from("/nonexistent-home"));
        octo_tools::secrets::Secrets::new(user_home, extra)
    }

    /// Makes the home private: creates it readable only by the user (0700) when it is missing;
    /// when it, or a directory octo writes in it, can be read by other users (made by an older
    /// octo, or by hand), tightens that tree — directories to 0700, files to their owner's bits
    /// only — and returns a notice saying so. Symbolic links are left alone.
    pub(crate) fn secure(&self) -> Option<String> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let meta = match std::fs::symlink_metadata(&self.root) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    let _ = octo_session::private::create_dir(&self.root);
                    return None;
                }
                Err(_) => return None,
            };
            let wide = |m: &std::fs::Metadata| m.permissions().mode() & 0o077 != 0;
            let trees: Vec<PathBuf> = if meta.is_dir() && wide(&meta) {
                vec![self.root.clone()]
            } else {
                [self.sessions(), self.trash(), self.output(), self.logs(), self.memory()]
                    .into_iter()
                    .filter(|d| std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir() && wide(&m)))
                    .collect()
            };
            let changed: usize = trees.iter().map(|t| tighten(t)).sum();
            (changed > 0).then(|| {
                format!(
                    "{} could be read by other users of this machine; octo made it private ({changed} files and \
                     directories now readable by you only)",
                    self.root.display()
                )
            })
        }
        #[cfg(not(unix))]
        {
            let _ = octo_session::private::create_dir(&self.root);
            None
        }
    }
}

/// Removes group and other permissions from `root` and everything under it (not following
/// symbolic links); returns how many entries changed.
/// `OCTO_HOME`, else `~/.octo`.
pub fn octo_home() -> PathBuf {
    if let Some(h) = std::env::var_os("OCTO_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h);
    }
    let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE")).map(PathBuf::from);
    home.unwrap_or_else(|| PathBuf::from(".")).join(".octo")
}

#[cfg(unix)]
fn tighten(root: &Path) -> usize {
    use std::os::unix::fs::PermissionsExt;
    let mut changed = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(m) = std::fs::symlink_metadata(&p) else { continue };
        if m.file_type().is_symlink() {
            continue;
        }
        let mode = m.permissions().mode();
        let want = if m.is_dir() { 0o700 } else { mode & 0o700 };
        if mode & 0o777 != want && std::fs::set_permissions(&p, std::fs::Permissions::from_mode(want)).is_ok()
        {
            changed += 1;
        }
        if m.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&p) {
                stack.extend(entries.flatten().map(|e| e.path()));
            }
        }
    }
    changed
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_missing_home_is_made_private_and_a_readable_one_is_tightened_once() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::new(tmp.path().join("octo"));
        assert_eq!(home.secure(), None);
        assert_eq!(mode(home.root()), 0o700);

        let old = Home::new(tmp.path().join("old"));
        std::fs::create_dir_all(old.sessions()).unwrap();
        std::fs::write(old.sessions().join("s.jsonl"), "{}").unwrap();
        std::fs::write(old.root().join("hook.sh"), "#!/bin/sh").unwrap();
        for (p, m) in [(old.root().to_path_buf(), 0o755), (old.sessions(), 0o755)] {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(m)).unwrap();
        }
        std::fs::set_permissions(old.sessions().join("s.jsonl"), std::fs::Permissions::from_mode(0o644))
            .unwrap();
        std::fs::set_permissions(old.root().join("hook.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("/etc", old.root().join("link")).unwrap();
        let notice = old.secure().unwrap();
        assert!(notice.contains("made it private"), "{notice}");
        assert_eq!(mode(old.root()), 0o700);
        assert_eq!(mode(&old.sessions()), 0o700);
        assert_eq!(mode(&old.sessions().join("s.jsonl")), 0o600);
        assert_eq!(mode(&old.root().join("hook.sh")), 0o700, "the owner keeps the execute bit");
        assert_eq!(mode(Path::new("/etc")) & 0o005, 0o005, "links are not followed");
        assert_eq!(old.secure(), None, "once private, nothing to say");
    }
}

/// What the user's trust in a project's files is remembered by: SHA-256 of an unambiguous (JSON)
/// encoding of what is trusted, so no changed file or entry can be made to keep a trusted
/// fingerprint.
pub(crate) fn fingerprint(what: &serde_json::Value) -> String {
    use sha2::Digest;
    format!("{:x}", sha2::Sha256::digest(what.to_string().as_bytes()))
}

/// SHA-256 of a file's whole contents, read as a stream (`None` when it cannot be read).
pub(crate) fn file_digest(path: &Path) -> Option<String> {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // A FIFO swapped in after a check is not waited on.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let mut file = options.open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    std::io::copy(&mut file, &mut hasher).ok()?;
    Some(format!("{:x}", hasher.finalize()))
}
