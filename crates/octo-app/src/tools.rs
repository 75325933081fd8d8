//! The tools a session offers, assembled from sources with one naming rule and one order (see
//! [`octo_agent::ToolRegistry::from_sources`]). The built-in tools are the first source; MCP
//! servers, skills and sub-agents plug in as more.

use crate::home::Home;
use octo_agent::{ToolList, ToolRegistry, ToolSource};
use std::sync::Arc;

/// The built-in tools (octo-tools' registry and the compaction tool), with their files in `home`.
pub fn builtin(home: &Home) -> ToolList {
    let registry = octo_tools::default_registry(octo_tools::ToolsConfig {
        trash_dir: Some(home.trash()),
        spill_dir: home.output(),
        web: octo_tools::WebConfig::from_env(),
        ..octo_tools::ToolsConfig::default()
    });
    let mut tools = registry.executors().to_vec();
    tools.push(Arc::new(octo_agent::context::CompactTool));
    ToolList::builtin("builtin", tools)
}

/// Checks permission rules against what the built-in tools declare (a path pattern that is not
/// a glob, a specifier on a tool without a subject), for `octo doctor`.
pub fn check_rules(
    rules: &crate::permissions::RuleSet,
    home: &Home,
) -> Result<(), crate::permissions::RuleError> {
    let (tools, _) = assemble(&[Arc::new(builtin(home)) as Arc<dyn ToolSource>]);
    rules.check(&tools)
}

/// The registry from `sources`, and notices about tools that were left out.
pub fn assemble(sources: &[Arc<dyn ToolSource>]) -> (ToolRegistry, Vec<String>) {
    ToolRegistry::from_sources(sources)
}
