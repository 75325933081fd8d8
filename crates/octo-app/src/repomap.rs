//! The session's repository map (`octo-repomap`): offered as the `repo_map` tool when the
//! workspace has source files of a language the map reads (and `repo_map` is not turned off),
//! cached under octo's home. It reads only the files the built-in file reader could read without
//! asking: the permission engine decides for each (secret locations, deny and ask rules).

use crate::config::Config;
use crate::home::Home;
use octo_agent::{Access, Subject, ToolMeta};
use std::path::Path;
use std::sync::Arc;

/// The extensions the map reads, for the cheap look at the workspace's top two levels.
const SOURCE_EXTENSIONS: &[&str] = &[
    "rs", "py", "pyi", "js", "jsx", "mjs", "cjs", "ts", "mts", "cts", "tsx", "go", "c", "h", "cc", "cpp",
    "cxx", "c++", "hh", "hpp", "hxx", "h++", "java",
];

/// The workspace's map, or `None` when turned off or when the workspace shows no source file.
/// `tools` are the built-in tools: the map reads a file only where their file reader may.
pub(crate) fn map(
    config: &Config,
    workspace: &Path,
    home: &Home,
    engine: Arc<crate::permissions::PermissionEngine>,
    tools: &[Arc<dyn octo_agent::ToolExecutor>],
) -> Option<Arc<octo_repomap::RepoMap>> {
    if !config.repo_map || !has_sources(workspace) {
        return None;
    }
    let root = workspace.to_path_buf();
    let (tool, meta) = file_reader(tools);
    let field = match &meta.subject {
        Subject::Path { field, .. } => field.clone(),
        _ => "path".to_owned(),
    };
    let filter: octo_repomap::Filter = Arc::new(move |p: &Path| {
        let input = serde_json::json!({ field.as_str(): p });
        let q = octo_agent::PermissionQuery {
            tool_use_id: "repo_map",
            tool: &tool,
            input: &input,
            meta: &meta,
            cwd: &root,
        };
        matches!(octo_agent::PermissionGate::check(&*engine, &q), octo_agent::PermissionDecision::Allow)
    });
    let limits = octo_repomap::Limits { filter: Some(filter), ..Default::default() };
    Some(Arc::new(octo_repomap::RepoMap::new(workspace, Some(home.repomap())).with_limits(limits)))
}

/// The file-reading tool (the first read-only tool whose subject is a read path, known by what
/// it declares), whose rules the map's reads follow.
fn file_reader(tools: &[Arc<dyn octo_agent::ToolExecutor>]) -> (String, ToolMeta) {
    let reader = |t: &Arc<dyn octo_agent::ToolExecutor>| {
        let meta = t.meta();
        (meta.read_only && matches!(meta.subject, Subject::Path { access: Access::Read, .. }))
            .then(|| (t.definition().name, meta))
    };
    tools.iter().find_map(reader).unwrap_or_else(|| {
        ("repo_map".to_owned(), ToolMeta::reads().subject(Subject::path("path", Access::Read)))
    })
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
    use crate::permissions::{Action, Mode, PermissionEngine, Rule, RuleSet};

    #[test]
    fn files_read_file_may_not_read_are_not_mapped() {
        let ws = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| {
            let p = ws.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("src/app.rs", "pub fn visible_function() {}\n");
        write("private/keys.rs", "pub fn denied_function() {}\n");
        write("asked/x.rs", "pub fn asked_function() {}\n");
        let mut rules = RuleSet::default();
        rules.push(Rule::parse("read_file(private/**)", Action::Deny, "test").unwrap());
        rules.push(Rule::parse("read_file(asked/**)", Action::Ask, "test").unwrap());
        let engine = Arc::new(PermissionEngine::new(rules, Mode::Default));
        let home = tempfile::tempdir().unwrap();
        let config = Config::load(home.path(), ws.path(), &|_: &str| None, &Default::default()).unwrap();
        let tools = octo_tools::default_registry(octo_tools::ToolsConfig::default());
        let map = map(&config, ws.path(), &Home::new(home.path()), engine, tools.executors()).unwrap();
        let text = map.build(&octo_repomap::Request { focus: Vec::new(), budget: Some(2_000) }).text;
        assert!(text.contains("visible_function"), "{text}");
        assert!(!text.contains("denied_function") && !text.contains("asked_function"), "{text}");
    }

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
