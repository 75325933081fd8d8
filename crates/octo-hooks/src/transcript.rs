//! The session's transcript where a confined hook can read it. octo's saved sessions are hidden
//! from commands and hooks in the sandbox (they hold other projects' conversations), yet Claude
//! Code's hooks read `transcript_path` (ralph-loop's Stop hook finds the last answer there). So a
//! runner that confines its hooks and has a folder of its own run that they can read keeps a copy
//! of the current session's transcript there, brought up to date before each hook (only what was
//! appended is copied). That folder is writable by the session's commands too, so the copy is
//! written without following links and never through a file with other names: what a command
//! puts there can spoil the copy, never reach another file.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// The copy kept for one session: where, and how many bytes of the transcript it holds.
#[derive(Debug, Default)]
pub(crate) struct Mirror {
    /// The transcript, its copy, and the bytes the copy holds.
    state: Mutex<Option<(PathBuf, PathBuf, u64)>>,
}

impl Mirror {
    /// The path hooks are given for `real`: a copy in `dir` brought up to date, or `real` itself
    /// when no copy can be made.
    pub(crate) fn path_for(&self, real: &Path, dir: &Path) -> PathBuf {
        let Some(name) = real.file_name() else { return real.to_path_buf() };
        let copy = dir.join(format!("transcript-{}", name.to_string_lossy()));
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let held = state.as_ref().filter(|(_, p, _)| *p == copy).map_or(0, |(_, _, n)| *n);
        match sync(real, &copy, held) {
            Ok(n) => {
                *state = Some((real.to_path_buf(), copy.clone(), n));
                copy
            }
            Err(_) => real.to_path_buf(),
        }
    }

    /// Brings the last copy made up to date again (nothing when none was made).
    pub(crate) fn refresh(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((real, copy, held)) = state.as_mut() {
            if let Ok(n) = sync(real, copy, *held) {
                *held = n;
            }
        }
    }
}

/// Brings `copy` up to `real`'s length: appends what is new when `copy` is the plain file of
/// `held` bytes left last time, else writes it afresh. Returns the bytes it now holds.
fn sync(real: &Path, copy: &Path, held: u64) -> std::io::Result<u64> {
    let mut src = File::open(real)?;
    let len = src.metadata()?.len();
    if held > 0 && held <= len {
        if let Ok(mut out) = open_own(copy) {
            if out.metadata()?.len() == held {
                src.seek(SeekFrom::Start(held))?;
                std::io::copy(&mut (&mut src).take(len - held), &mut out)?;
                return Ok(len);
            }
        }
    }
    if let Some(parent) = copy.parent() {
        std::fs::create_dir_all(parent)?;
    }
    // Removing first unlinks whatever a command left under the name (a link is removed, not
    // followed); `create_new` then fails rather than follow one made in between.
    match std::fs::remove_file(copy) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut out = OpenOptions::new().write(true).create_new(true).open(copy)?;
    src.seek(SeekFrom::Start(0))?;
    std::io::copy(&mut (&mut src).take(len), &mut out)?;
    Ok(len)
}

/// `copy` opened for appending when it is a regular file with no other name: not through a
/// link (`O_NOFOLLOW`), and not a hard link to another file.
fn open_own(copy: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Not through a link, and without waiting on a FIFO a command left there.
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let f = options.open(copy)?;
    let meta = f.metadata()?;
    #[cfg(unix)]
    let alone = std::os::unix::fs::MetadataExt::nlink(&meta) == 1;
    #[cfg(not(unix))]
    let alone = true;
    if meta.is_file() && alone {
        Ok(f)
    } else {
        Err(std::io::Error::other("not a plain file of its own"))
    }
}

#[cfg(test)]
mod tests;
