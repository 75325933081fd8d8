//! How octo ends: its exit codes, and the runtime every command runs on.

/// Something failed: the model or the endpoint, a tool, octo itself.
pub const EXIT_ERROR: u8 = 1;
/// A usage or setup problem the user must fix.
pub const EXIT_USAGE: u8 = 2;
/// The work was cut short: calls were refused because nobody could approve them (a headless
/// run), or by the mode or a rule.
pub const EXIT_DENIED: u8 = 3;
/// Interrupted with Ctrl-C.
pub const EXIT_INTERRUPTED: u8 = 130;

/// The async runtime of a command: two worker threads (octo waits on the network and on
/// processes, it does not compute).
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?)
}
