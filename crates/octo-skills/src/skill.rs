//! One skill or custom command: what its frontmatter says, where it lives, and its body.

use crate::error::{FileErrorKind, SkillFileError};
use crate::frontmatter;
use crate::template::Template;
use std::path::{Path, PathBuf};

/// The largest skill or command file read (a bigger one is skipped with a notice).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Whether an entry is a skill (a folder with `SKILL.md`) or a command (one Markdown file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `<dir>/<name>/SKILL.md` or a project's `SKILLS/<name>.md`.
    Skill,
    /// `commands/<name>.md` (`commands/<folder>/<name>.md` is `folder:name`).
    Command,
}

/// A skill or a custom command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// What follows the `/` (and what the `skill` tool takes).
    pub name: String,
    /// One line about it (for a command without one: its first line).
    pub description: String,
    /// Skill or command.
    pub kind: Kind,
    /// The tools it may use while it runs, as written (Claude Code's names or octo's).
    pub allowed_tools: Vec<String>,
    /// What arguments it takes, for completion and `/skills`.
    pub argument_hint: Option<String>,
    /// The model it asks for, as written.
    pub model: Option<String>,
    /// Whether the model may load it by itself.
    pub model_invocable: bool,
    /// Whether the user may run it as `/name`.
    pub user_invocable: bool,
    /// The file.
    pub file: PathBuf,
    /// The folder its bundled files are in (a skill's folder).
    pub dir: Option<PathBuf>,
    /// Where it was found (`~/.claude/skills`, `project .claude/commands`).
    pub source: String,
    /// The folder of the plugin it came with (`${CLAUDE_PLUGIN_ROOT}`).
    pub plugin_root: Option<PathBuf>,
}

impl Skill {
    /// Reads the body again (the file may have changed since discovery) and parses it as a
    /// template.
    pub fn template(&self) -> Result<Template, SkillFileError> {
        let text = read_limited(&self.file).map_err(|m| SkillFileError::new(FileErrorKind::Read, m))?;
        let split = frontmatter::split(&text)?;
        Template::parse(split.body, split.body_line)
    }
}

/// Reads a file of at most [`MAX_FILE_BYTES`] as UTF-8 (open, size from the open file, read: as
/// few system calls as a read can take, since discovery reads every skill at start).
pub(crate) fn read_limited(path: &Path) -> Result<String, String> {
    use std::io::Read;
    // Only regular files: a link to a terminal, a pipe or a device would block or read forever
    // (and opening a pipe blocks by itself), so the kind is checked before opening and again on
    // what was opened.
    let regular = |m: &std::fs::Metadata| {
        if m.is_file() {
            Ok(())
        } else {
            Err("it is not a regular file (a device, a pipe or a folder)".to_owned())
        }
    };
    regular(&std::fs::metadata(path).map_err(|e| io_reason(&e))?)?;
    let file = std::fs::File::open(path).map_err(|e| io_reason(&e))?;
    let meta = file.metadata().map_err(|e| io_reason(&e))?;
    regular(&meta)?;
    let len = meta.len();
    if len > MAX_FILE_BYTES {
        return Err(format!(
            "it is {:.1} MB; a skill or command file may be at most {} KB",
            len as f64 / 1e6,
            MAX_FILE_BYTES / 1024
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0) + 1);
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| io_reason(&e))?;
    String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_owned())
}

/// Why a file could not be read, in words (a symlink loop said as such).
pub(crate) fn io_reason(e: &std::io::Error) -> String {
    if e.raw_os_error() == Some(40) || e.to_string().contains("symbolic links") {
        return "it is a symlink loop".into();
    }
    match e.kind() {
        std::io::ErrorKind::NotFound => "it is a broken symlink or was removed".into(),
        std::io::ErrorKind::PermissionDenied => "it cannot be read (permission denied)".into(),
        _ => format!("it cannot be read: {e}"),
    }
}

/// Whether `name` works as a slash command and a tool argument.
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
        && !name.starts_with(['.', ':', '-'])
}
