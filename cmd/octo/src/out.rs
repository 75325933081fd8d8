//! Writing to stdout and stderr without ever panicking on a closed pipe.

use std::io::Write;

/// Writes to stdout; returns false when stdout is closed (the reader went away).
pub fn stdout(text: &str) -> bool {
    stdout_bytes(text.as_bytes())
}

/// Writes bytes to stdout; returns false when stdout is closed.
pub fn stdout_bytes(bytes: &[u8]) -> bool {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes).and_then(|()| out.flush()).is_ok()
}

/// A status line on stderr.
pub fn status(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// An error on stderr. Errors may quote servers, files or the model, so control characters in
/// them are shown, never sent.
pub fn error(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "octo: error: {}", crate::sanitize::visible(text));
}
