//! The tools a session offers, assembled from sources with one naming rule and one order (see
//! [`octo_agent::ToolRegistry::from_sources`]). The built-in tools are the first source; MCP
//! servers, skills and sub-agents plug in as more.

use crate::home::Home;
use octo_agent::{Subject, ToolList, ToolRegistry, ToolSource};
use octo_tools::shell::BackgroundShells;
use std::sync::Arc;

/// What the built-in tools are given besides their files in octo's home.
#[derive(Debug, Clone)]
pub(crate) struct BuiltinSettings {
    /// The environment of commands.
    pub shell_env: octo_tools::shell::env::ShellEnv,
    /// The secret locations commands are checked against.
    pub secrets: octo_tools::secrets::Secrets,
    /// The permission rules: allow rules that name a host of a URL tool let that tool reach the
    /// host on a private address without asking.
    pub rules: crate::permissions::RuleSet,
    /// Where this session's long command output goes (default: `output/` in octo's home).
    pub output: Option<std::path::PathBuf>,
    /// The OS sandbox commands run in (`None`: none).
    pub sandbox: Option<Arc<octo_tools::shell::sandbox::Sandbox>>,
    /// An editor's open buffers, read before the disk.
    pub buffers: Option<Arc<dyn octo_tools::Buffers>>,
}

impl Default for BuiltinSettings {
    fn default() -> Self {
        Self {
            shell_env: octo_tools::shell::env::ShellEnv::default(),
            secrets: octo_tools::secrets::Secrets::from_env(),
            rules: crate::permissions::RuleSet::default(),
            output: None,
            sandbox: None,
            buffers: None,
        }
    }
}

impl BuiltinSettings {
    /// From the configuration: its `[shell_env]`, with every endpoint's key variable hidden as
    /// well (whatever its name), and its rules.
    pub(crate) fn from_config(config: &crate::config::Config, secrets: octo_tools::secrets::Secrets) -> Self {
        let mut shell_env = config.shell_env.clone();
        shell_env.exclude.extend(config.endpoints.values().filter_map(|e| e.value.api_key_env.clone()));
        Self { shell_env, secrets, rules: config.rules.clone(), output: None, sandbox: None, buffers: None }
    }
}

/// The built-in tools, and the background shells they share (to stop when the session ends).
#[derive(Debug)]
pub(crate) struct Builtin {
    /// The tools.
    pub tools: ToolList,
    /// Background commands, and the tag every command of the session carries.
    pub shells: Arc<BackgroundShells>,
}

/// The built-in tools (octo-tools' registry and the compaction tool), with their files in `home`.
pub(crate) fn builtin(home: &Home, settings: &BuiltinSettings) -> Builtin {
    let shells = Arc::new(BackgroundShells::default());
    let mut config = octo_tools::ToolsConfig {
        trash_dir: Some(home.trash()),
        spill_dir: settings.output.clone().unwrap_or_else(|| home.output()),
        web: octo_tools::WebConfig::from_env(),
        shell_env: settings.shell_env.clone(),
        secrets: settings.secrets.clone(),
        sandbox: settings.sandbox.clone(),
        buffers: settings.buffers.clone(),
        ..octo_tools::ToolsConfig::default()
    };
    let mut registry = octo_tools::registry_with_shells(config.clone(), Arc::clone(&shells));
    // The hosts the user's allow rules name for the tools that fetch URLs (known by what they
    // declare, not by name).
    let trusted: Vec<String> = registry
        .names()
        .filter_map(|n| registry.meta(n).filter(|m| matches!(m.subject, Subject::Url { .. })).map(|m| (n, m)))
        .flat_map(|(n, m)| settings.rules.allowed_specifiers(m.rule_name.as_deref().unwrap_or(n)))
        .collect();
    if !trusted.is_empty() {
        config.web.trusted_hosts = trusted;
        registry = octo_tools::registry_with_shells(config, Arc::clone(&shells));
    }
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
pub(crate) fn assemble(sources: &[Arc<dyn ToolSource>]) -> (ToolRegistry, Vec<String>) {
    ToolRegistry::from_sources(sources)
}

/// A session's registry from `sources`: without the tools a deny rule of `engine` names whole
/// (`deny = ["web_search"]`, `--disallowedTools Bash`), which the model is not offered at all.
pub(crate) fn assemble_for(
    sources: &[Arc<dyn ToolSource>],
    engine: &crate::permissions::PermissionEngine,
) -> (ToolRegistry, Vec<String>) {
    let (mut registry, notes) = assemble(sources);
    let rules = engine.rules();
    let hidden: Vec<String> = registry
        .names()
        .filter(|n| rules.denies_whole(registry.meta(n).and_then(|m| m.rule_name.as_deref()).unwrap_or(n)))
        .map(str::to_owned)
        .collect();
    for name in hidden {
        registry.remove(&name);
    }
    (registry, notes)
}
