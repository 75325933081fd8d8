//! The tool lists servers gave at their last start, kept in octo's home so the next session's
//! first request can list a server that is still starting: the request does not wait for it,
//! and its tool list is complete and the same from run to run. Keyed by the server's whole
//! definition (its fingerprint: command, arguments, environment, URL, headers) and the
//! workspace; the server's reported name and version are kept with the list. When the real list
//! turns out different, the session takes it as it takes `tools/list_changed`.

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Serialize, Deserialize)]
struct Entry {
    /// The server's `serverInfo` as it reported it (name and version), for people reading it.
    server: String,
    tools: Vec<Tool>,
    /// It offers resources (so the resource tools are listed as they will be).
    #[serde(default)]
    resources: bool,
}

/// The cache file of a server.
pub(crate) fn file(dir: &Path, fingerprint: &str, workspace: &Path) -> PathBuf {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in workspace.as_os_str().as_encoded_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    dir.join(format!("{fingerprint}-{h:016x}.json"))
}

/// The list kept in `path`, and whether the server offers resources, when there is a readable
/// one.
pub(crate) fn load(path: &Path) -> Option<(Vec<Tool>, bool)> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str::<Entry>(&text).ok().map(|e| (e.tools, e.resources))
}

/// Keeps `tools` in `path` (written whole or not at all); a failure only costs the next start
/// its head start.
pub(crate) fn save(path: &Path, server: &str, tools: &[Tool], resources: bool) {
    let Some(dir) = path.parent() else { return };
    let entry = Entry { server: server.to_owned(), tools: tools.to_vec(), resources };
    let Ok(text) = serde_json::to_string(&entry) else { return };
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return;
    }
    let tmp = path.with_extension("tmp");
    if std::fs::create_dir_all(dir).is_ok() && std::fs::write(&tmp, text).is_ok() {
        let _ = std::fs::rename(&tmp, path);
    }
}
