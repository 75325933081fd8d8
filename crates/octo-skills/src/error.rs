//! Why a skill, command or agent file cannot be used.

/// What part of a file is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileErrorKind {
    /// The file cannot be read (missing, not a regular file, too large, not UTF-8).
    Read,
    /// Its frontmatter is malformed, or a field has the wrong type.
    Frontmatter,
    /// Its body is not a usable template (a `` !` `` never closed).
    Template,
}

/// Why a skill, command or agent file cannot be used; the message names what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SkillFileError {
    /// What part is wrong.
    pub kind: FileErrorKind,
    /// What is wrong, in words.
    pub message: String,
}

impl SkillFileError {
    pub(crate) fn new(kind: FileErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }
}

/// The message of a file problem, where a skipped file is only reported.
impl From<SkillFileError> for String {
    fn from(e: SkillFileError) -> Self {
        e.message
    }
}
