//! One key, without Enter: the answer to an approval. The terminal is put in raw mode for the
//! key and restored at once; what was typed after it (a habitual Enter) is dropped, so it never
//! answers the next question. Without a terminal, a whole line is read instead.
//!
//! [`HoldTyping`] keeps what is typed while an answer streams out of the answer: not echoed,
//! left waiting for the next prompt, which shows it in its input line.

use std::io::{IsTerminal, Read, Write};

/// A key the user pressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Key {
    /// A printable character (lower-cased).
    Char(char),
    /// Enter.
    Enter,
    /// Escape.
    Esc,
    /// Ctrl-C.
    Interrupt,
    /// Ctrl-D, or the input closed.
    Eof,
}

/// Shows `prompt` on stderr and reads one key (on a blocking thread).
pub(super) async fn read_key(prompt: &str) -> Key {
    let mut err = std::io::stderr();
    let _ = write!(err, "{prompt}");
    let _ = err.flush();
    let key = tokio::task::spawn_blocking(read_one).await.unwrap_or(Key::Eof);
    let shown = match key {
        Key::Char(c) => c.to_string(),
        Key::Esc => "esc".to_owned(),
        Key::Interrupt => "^C".to_owned(),
        Key::Enter | Key::Eof => String::new(),
    };
    let _ = writeln!(err, "{shown}");
    key
}

fn read_one() -> Key {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        let mut line = String::new();
        return match stdin.read_line(&mut line) {
            Ok(0) | Err(_) => Key::Eof,
            Ok(_) => line.trim().chars().next().map_or(Key::Enter, |c| Key::Char(c.to_ascii_lowercase())),
        };
    }
    raw::one_key()
}

/// The key a byte stands for.
fn key_of(byte: u8) -> Key {
    match byte {
        3 => Key::Interrupt,
        4 => Key::Eof,
        27 => Key::Esc,
        b'\r' | b'\n' => Key::Enter,
        b => Key::Char((b as char).to_ascii_lowercase()),
    }
}

/// While alive, keys typed on the terminal are neither echoed nor taken a line at a time: they
/// wait, unseen, for the next read (the prompt's line editor shows them there). Ctrl-C still
/// interrupts. Dropping it restores the terminal as it was.
pub(super) struct HoldTyping {
    #[cfg(unix)]
    saved: Option<nix::sys::termios::Termios>,
}

impl HoldTyping {
    /// Holds typing when stdin is a terminal; does nothing otherwise.
    pub(super) fn start() -> Self {
        #[cfg(unix)]
        {
            Self { saved: raw::hold() }
        }
        #[cfg(not(unix))]
        {
            Self {}
        }
    }
}

impl Drop for HoldTyping {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(saved) = self.saved.take() {
            raw::restore(&saved);
        }
    }
}

#[cfg(unix)]
mod raw {
    use super::{key_of, Key, Read};
    use nix::sys::termios::{self, FlushArg, LocalFlags, SetArg, Termios};
    use std::io::IsTerminal;

    /// Echo and line editing off (signals on); the settings before, to restore.
    pub(super) fn hold() -> Option<Termios> {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return None;
        }
        let saved = termios::tcgetattr(&stdin).ok()?;
        let mut quiet = saved.clone();
        quiet.local_flags.remove(LocalFlags::ICANON | LocalFlags::ECHO);
        quiet.control_chars[termios::SpecialCharacterIndices::VMIN as usize] = 1;
        quiet.control_chars[termios::SpecialCharacterIndices::VTIME as usize] = 0;
        termios::tcsetattr(&stdin, SetArg::TCSANOW, &quiet).ok()?;
        Some(saved)
    }

    /// Puts the terminal back; what was typed stays to be read.
    pub(super) fn restore(saved: &Termios) {
        let _ = termios::tcsetattr(std::io::stdin(), SetArg::TCSANOW, saved);
    }

    /// Reads one byte with echo, line editing and signals off, then restores the terminal and
    /// drops whatever else was typed.
    pub(super) fn one_key() -> Key {
        let stdin = std::io::stdin();
        let Ok(saved) = termios::tcgetattr(&stdin) else { return fallback() };
        let mut raw = saved.clone();
        raw.local_flags.remove(LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::ISIG);
        // One byte at a time, waiting as long as it takes.
        raw.control_chars[termios::SpecialCharacterIndices::VMIN as usize] = 1;
        raw.control_chars[termios::SpecialCharacterIndices::VTIME as usize] = 0;
        if termios::tcsetattr(&stdin, SetArg::TCSANOW, &raw).is_err() {
            return fallback();
        }
        let mut byte = [0u8; 1];
        let key = match stdin.lock().read(&mut byte) {
            Ok(1) => key_of(byte[0]),
            _ => Key::Eof,
        };
        let _ = termios::tcflush(&stdin, FlushArg::TCIFLUSH);
        let _ = termios::tcsetattr(&stdin, SetArg::TCSANOW, &saved);
        key
    }

    fn fallback() -> Key {
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => Key::Eof,
            Ok(_) => line.trim().chars().next().map_or(Key::Enter, |c| key_of(c as u8)),
        }
    }
}

#[cfg(not(unix))]
mod raw {
    use super::Key;

    /// Without raw mode: the first character of a line.
    pub(super) fn one_key() -> Key {
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => Key::Eof,
            Ok(_) => line.trim().chars().next().map_or(Key::Enter, |c| Key::Char(c.to_ascii_lowercase())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_keys() {
        assert_eq!(key_of(b'Y'), Key::Char('y'));
        assert_eq!(key_of(3), Key::Interrupt);
        assert_eq!(key_of(27), Key::Esc);
        assert_eq!(key_of(b'\r'), Key::Enter);
        assert_eq!(key_of(4), Key::Eof);
    }
}
