//! The tools a session offers, assembled from sources with one naming rule and one order (see
//! [`octo_agent::ToolRegistry::from_sources`]). The built-in tools are the first source; MCP
//! servers, skills and sub-agents plug in as more.

use crate::home::Home;
use octo_agent::{ToolList, ToolRegistry, ToolSource};
use octo_tools::shell::BackgroundShells;
use std::sync::Arc;

/// What the built-in tools are given besides their files in octo's home.
#[derive(Debug, Clone)]
pub struct BuiltinSettings {
    /// The environment of commands.
    pub shell_env: octo_tools::shell::env::ShellEnv,
    /// The secret locations commands are checked against.
    pub secrets: octo_tools::secrets::Secrets,
    /// Hosts `web_fetch` may find on a private address without asking (from allow rules).
    pub trusted_hosts: Vec<String>,
}

impl Default for BuiltinSettings {
    fn default() -> Self {
        Self {
            shell_env: octo_tools::shell::env::ShellEnv::default(),
            secrets: octo_tools::secrets::Secrets::from_env(),
            trusted_hosts: Vec::new(),
        }
    }
}

impl BuiltinSettings {
    /// From the configuration: its `[shell_env]`, with every endpoint's key variable hidden as
    /// well (whatever its name), and the hosts of `web_fetch` allow rules.
    pub fn from_config(config: &crate::config::Config, secrets: octo_tools::secrets::Secrets) -> Self {
        let mut shell_env = config.shell_env.clone();
        shell_env.exclude.extend(config.endpoints.values().filter_map(|e| e.value.api_key_env.clone()));
        Self { shell_env, secrets, trusted_hosts: config.rules.allowed_specifiers("web_fetch") }
    }
}

/// The built-in tools, and the background shells they share (to stop when the session ends).
#[derive(Debug)]
pub struct Builtin {
    /// The tools.
    pub tools: ToolList,
    /// Background commands, and the tag every command of the session carries.
    pub shells: Arc<BackgroundShells>,
}

/// The built-in tools (octo-tools' registry and the compaction tool), with their files in `home`.
pub fn builtin(home: &Home, settings: &BuiltinSettings) -> Builtin {
    let shells = Arc::new(BackgroundShells::default());
    let mut web = octo_tools::WebConfig::from_env();
    web.trusted_hosts.clone_from(&settings.trusted_hosts);
    let registry = octo_tools::registry_with_shells(
        octo_tools::ToolsConfig {
            trash_dir: Some(home.trash()),
            spill_dir: home.output(),
            web,
            shell_env: settings.shell_env.clone(),
            secrets: settings.secrets.clone(),
            ..octo_tools::ToolsConfig::default()
        },
        Arc::clone(&shells),
    );
    let mut tools = registry.executors().to_vec();
    tools.push(Arc::new(octo_agent::context::CompactTool));
    Builtin { tools: ToolList::builtin("builtin", tools), shells }
}

/// Checks permission rules against what the built-in tools declare (a path pattern that is not
/// a glob, a specifier on a tool without a subject), for `octo doctor`.
pub fn check_rules(
    rules: &crate::permissions::RuleSet,
    home: &Home,
) -> Result<(), crate::permissions::RuleError> {
    let (tools, _) =
        assemble(&[Arc::new(builtin(home, &BuiltinSettings::default()).tools) as Arc<dyn ToolSource>]);
    rules.check(&tools)
}

/// The registry from `sources`, and notices about tools that were left out.
pub fn assemble(sources: &[Arc<dyn ToolSource>]) -> (ToolRegistry, Vec<String>) {
    ToolRegistry::from_sources(sources)
}
