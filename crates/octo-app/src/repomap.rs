//! The session's repository map (`octo-repomap`): offered as the `repo_map` tool when the
//! workspace has source files of a language the map reads (and `repo_map` is not turned off),
//! cached under octo's home, never reading a secret location.

use crate::config::Config;
use crate::home::Home;
use std::path::Path;
use std::sync::Arc;

/// The extensions the map reads, for the cheap look at the workspace's top two levels.
const SOURCE_EXTENSIONS: &[&str] =
    &["rs", "py", "js", "jsx", "mjs", "ts", "tsx", "go", "c", "h", "cc", "cpp", "hpp", "java"];

/// The workspace's map, or `None` when turned off or when the workspace shows no source file.
pub(crate) fn map(
    config: &Config,
    workspace: &Path,
    home: &Home,
    secrets: octo_tools::secrets::Secrets,
) -> Option<Arc<octo_repomap::RepoMap>> {
    if !config.repo_map || !has_sources(workspace) {
        return None;
    }
    let filter: octo_repomap::Filter = Arc::new(move |p: &Path| secrets.check(p).is_none());
    let limits = octo_repomap::Limits { filter: Some(filter), ..Default::default() };
    Some(Arc::new(octo_repomap::RepoMap::new(workspace, Some(home.repomap())).with_limits(limits)))
}

/// Whether a source file shows in the workspace's top two levels.
fn has_sources(workspace: &Path) -> bool {
    crate::lsp::top_names(workspace).iter().any(|n| {
        n.rsplit_once('.')
            .is_some_and(|(_, ext)| SOURCE_EXTENSIONS.iter().any(|e| e.eq_ignore_ascii_case(ext)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offered_only_where_there_is_source() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("notes.md"), "# notes").unwrap();
        assert!(!has_sources(ws.path()));
        std::fs::create_dir(ws.path().join("src")).unwrap();
        std::fs::write(ws.path().join("src/main.go"), "package main").unwrap();
        assert!(has_sources(ws.path()));
    }
}
