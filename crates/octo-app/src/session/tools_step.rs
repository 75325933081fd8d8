//! The tools step: the built-in tools, the MCP servers (started in the background), memory's
//! tools, sub-agents and skills, assembled into the session's registry.

use super::setup::{HooksPart, ToolsPart};
use super::state::Core;
use super::steps::{Endpoint, Place};
use crate::config::{Config, EnvLookup};
use crate::credentials::CredentialStore;
use crate::permissions::PermissionEngine;
use octo_agent::{ToolRegistry, ToolSource};
use std::sync::{Arc, RwLock};

/// What the tools step reads besides the configuration.
pub(super) struct ToolInputs<'a> {
    pub core: &'a Core,
    pub place: &'a Place,
    pub engine: &'a Arc<PermissionEngine>,
    pub hooks: &'a HooksPart,
    pub endpoint: &'a Endpoint,
    pub sandbox: &'a Arc<octo_tools::shell::sandbox::Sandbox>,
    pub memory: &'a Arc<octo_memory::Memory>,
    pub skills: &'a Arc<octo_skills::SharedCatalog>,
    pub store: &'a dyn CredentialStore,
    pub env: EnvLookup<'a>,
    pub unattended: bool,
    pub between_turns: bool,
    pub buffers: Option<Arc<dyn octo_tools::Buffers>>,
}

/// Builds every tool source and assembles the registry (empty with `--no-tools`).
pub(super) fn build(
    config: &Config,
    inputs: &ToolInputs<'_>,
    agents: octo_skills::Agents,
    notes: &mut Vec<String>,
) -> ToolsPart {
    let place = inputs.place;
    let mut settings = crate::tools::BuiltinSettings::from_config(config, place.secrets.clone());
    settings.output = Some(place.run_output.clone());
    settings.shell_env.env_file = Some(place.env_file.clone());
    settings.sandbox = Some(Arc::clone(inputs.sandbox));
    settings.buffers.clone_from(&inputs.buffers);
    let builtin = crate::tools::builtin(&place.home, &settings);
    let mut sources: Vec<Arc<dyn ToolSource>> = vec![Arc::new(builtin.tools)];
    let mcp = mcp_servers(config, inputs, notes);
    if let Some(hub) = &mcp {
        sources.push(Arc::new(octo_mcp::McpSource(Arc::clone(hub))));
    }
    let lsp = crate::lsp::servers(&config.lsp, &place.workspace, inputs.sandbox, &config.shell_env);
    if let Some(l) = &lsp {
        let tool: Arc<dyn octo_agent::ToolExecutor> = Arc::new(octo_lsp::LspTool(Arc::clone(l)));
        sources.push(Arc::new(octo_agent::ToolList::builtin("lsp", vec![tool])));
    }
    let repo_map = crate::repomap::map(
        config,
        &place.workspace,
        &place.home,
        Arc::clone(inputs.engine),
        &sources[0].tools(),
    );
    if let Some(m) = &repo_map {
        let tool: Arc<dyn octo_agent::ToolExecutor> = Arc::new(octo_repomap::RepoMapTool(Arc::clone(m)));
        sources.push(Arc::new(octo_agent::ToolList::builtin("repo_map", vec![tool])));
    }
    sources.push(Arc::new(octo_memory::tools(Arc::clone(inputs.memory), crate::memory::tool_env())));
    let lent = Arc::new(RwLock::new(ToolRegistry::new()));
    let checkpoints = crate::checkpoints::Recorder::new(
        place.home.checkpoints(),
        place.workspace.clone(),
        config.checkpoints,
    );
    let spawner = Arc::new(spawner(config, inputs, agents, (&lent, checkpoints.clone()), notes));
    sources.push(Arc::new(crate::subagents::tools(Arc::clone(&spawner), 0)));
    let activation = Arc::new(crate::skills::EngineActivation(Arc::clone(inputs.engine)));
    sources.push(Arc::new(octo_skills::SkillSource::new(Arc::clone(inputs.skills), Some(activation))));
    let (registry, left_out) = crate::tools::assemble_for(&sources, inputs.engine);
    notes.extend(left_out);
    *lent.write().unwrap_or_else(std::sync::PoisonError::into_inner) = registry.clone();
    // Hooks hold the session's commands still while they run (only with hooks: the tag marks
    // the commands' leftovers as worth looking for at the end).
    if inputs.hooks.guard.is_some() {
        let _ = inputs.hooks.command_tag.set(builtin.shells.tag().to_owned());
    }
    ToolsPart {
        registry,
        sources,
        shells: Some(builtin.shells),
        trash: Some(octo_tools::trash::Trash::new(place.home.trash())),
        mcp,
        lsp,
        repo_map,
        checkpoints,
        spawner: Some(spawner),
        lent: Some(lent),
    }
}

/// The MCP servers start now, in the background; the first request waits for them a little
/// (see the task), and their tools join between turns. A project's server waits for approval.
fn mcp_servers(
    config: &Config,
    inputs: &ToolInputs<'_>,
    notes: &mut Vec<String>,
) -> Option<Arc<octo_mcp::McpHub>> {
    let hub = crate::mcp::hub(&config.mcp_servers, &inputs.place.home, &inputs.place.workspace, inputs.env)?;
    hub.start();
    if inputs.unattended {
        for s in hub.status().iter().filter(|s| s.state == "needs approval") {
            notes.push(format!(
                "the project's MCP server `{}` ({}) was not started: a project's servers run only after you approve them (in the REPL, or with `octo trust`)",
                s.name, s.target
            ));
        }
    }
    Some(hub)
}

/// Sub-agents: they read the session's current model and leave notes through its core.
fn spawner(
    config: &Config,
    inputs: &ToolInputs<'_>,
    agents: octo_skills::Agents,
    (lent, checkpoints): (&Arc<RwLock<ToolRegistry>>, Option<Arc<crate::checkpoints::Recorder>>),
    notes: &mut Vec<String>,
) -> crate::subagents::Spawner {
    let endpoint = inputs.endpoint;
    let models = crate::subagents::models(
        &agents,
        config,
        endpoint.lite.as_ref(),
        inputs.store,
        inputs.env,
        &endpoint.http,
        notes,
    );
    let (for_sender, for_notes, for_usage) = (inputs.core.clone(), inputs.core.clone(), inputs.core.clone());
    let plugins: Vec<Arc<dyn octo_agent::Plugin>> = match &inputs.hooks.cell {
        Some(cell) => vec![Arc::new(octo_hooks::HooksPlugin::for_subagent(Arc::clone(cell)))],
        None => Vec::new(),
    };
    crate::subagents::Spawner::new(crate::subagents::SpawnerParts {
        limits: config.subagents,
        models,
        agents,
        sender: Arc::new(move || for_sender.current_sender()),
        engine: Arc::clone(inputs.engine),
        tools: Arc::clone(lent),
        workspace: inputs.place.workspace.clone(),
        notify: Arc::new(move |note: String| for_notes.leave_note(note)),
        usage: Arc::new(move |u: octo_agent::Usage, cost: Option<f64>| for_usage.add_child_usage(u, cost)),
        late_approvals: (inputs.between_turns && !inputs.unattended).then(|| {
            let core = inputs.core.clone();
            Arc::new(move |r: octo_agent::ApprovalRequest| {
                let core = core.clone();
                Box::pin(async move { core.ask_between_turns(r).await }) as crate::subagents::LateAnswer
            }) as crate::subagents::LateApprovals
        }),
        sidechains: Some(crate::subagents::Sidechains {
            dir: inputs.place.home.sessions(),
            parent: Arc::clone(&inputs.core.session_id),
        }),
        plugins,
        checkpoints,
    })
}
