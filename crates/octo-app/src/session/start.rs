//! Starting a session from configuration, as a pipeline: the core first (events and shared
//! state), then each step returning its typed part — place, discovery, endpoint, sandbox,
//! prompt, permission engine, hooks, tools, saved history, agent — and the session is their
//! composition. Nothing is filled in after the task starts.

use super::error::SessionError;
use super::facade::Session;
use super::options::SessionOptions;
use super::setup::{Flags, Setup, SkillsPart, TaskParts, ToolsPart};
use super::state::Core;
use super::steps::{Discovery, Endpoint, Place, Prompt};
use super::tools_step::ToolInputs;
use crate::config::{Config, ConfigError, EnvLookup};
use crate::credentials::CredentialStore;
use crate::permissions::PermissionEngine;
use octo_agent::Agent;
use std::sync::Arc;

impl Session {
    /// Starts a session from configuration: resolves the endpoint and key, builds the client, the
    /// tools, the permission engine and the system prompt, all before its task starts. Must be
    /// called inside a Tokio runtime. Front ends usually go through [`crate::Launcher`].
    pub fn start(
        config: Config,
        mut options: SessionOptions,
        store: &dyn CredentialStore,
        env: EnvLookup<'_>,
    ) -> Result<Self, SessionError> {
        let place = Place::new(&config, &options, env);
        let mut discovery = Discovery::spawn(&place, &config.plugins, !options.no_tools);
        let endpoint = Endpoint::open(&config, &options, store, env)?;
        // A model that takes no tools (a local one too small for a tool-call format) runs as
        // plain chat: no tools are offered or described.
        let chat_only = endpoint.sender.as_tool().is_none() && endpoint.sender.as_tool_streaming().is_none();
        options.no_tools |= chat_only;
        let label = endpoint.resolved.label();
        let core = Core::new(label.clone(), endpoint.resolved.model_info, Arc::clone(&endpoint.sender));
        if options.save && options.resume.is_none() {
            let id = options.session_id.clone().unwrap_or_else(octo_session::new_id);
            let _ = core.planned_id.set(id.clone());
            options.session_id = Some(id);
        }
        let mut notes: Vec<String> = config.warnings.iter().chain(endpoint.notes.iter()).cloned().collect();
        // Skills and commands are read once per session, so the listing (and the request
        // prefix) stays byte-stable; `/skills reload` reads them again.
        let found = discovery.join();
        notes.extend(found.memory_notes.into_iter().chain(found.agent_notes).chain(found.skill_notes));
        let prompt = Prompt::build(&place, &options, &label, &found.catalog, found.memory_text, &mut notes);
        let (sandbox, sandbox_notice) = place.sandbox(&config, env, &prompt.sources);
        let mode = options.mode.unwrap_or(config.permission_mode.value);
        let engine = engine(&config, &place, mode, &sandbox, prompt.sources);
        core.show_hooks(&engine, options.reasoning.unwrap_or(config.reasoning_effort.value));
        let hooks = super::steps::hooks(&core, &config, &place, &sandbox, options.unattended, &mut notes);
        let turn_models =
            crate::turn_models::for_catalog(&found.catalog, &config, store, env, &endpoint.http, &mut notes);
        let catalog = Arc::new(octo_skills::SharedCatalog::new(found.catalog));
        let tools = if options.no_tools {
            ToolsPart::default()
        } else {
            notes.extend(sandbox_notice);
            let inputs = ToolInputs {
                core: &core,
                place: &place,
                engine: &engine,
                hooks: &hooks,
                endpoint: &endpoint,
                sandbox: &sandbox,
                memory: &discovery.memory,
                skills: &catalog,
                store,
                env,
                unattended: options.unattended,
                between_turns: options.approvals_between_turns,
                buffers: options.buffers.clone(),
            };
            super::tools_step::build(&config, &inputs, found.agents, &mut notes)
        };
        config.rules.check(&tools.registry).map_err(|e| {
            SessionError::Config(ConfigError::Value {
                source_desc: "[permissions]".into(),
                message: e.to_string(),
            })
        })?;
        let super::resume::Resumed { persist, history, unanswered } =
            super::resume::open(&config, &options, &place.workspace, &endpoint.resolved, &core, &mut notes)?;
        let flags = Flags {
            unattended: options.unattended,
            model_titles: options.model_titles,
            log_events: options.log_events || config.log_events,
            resumed: !history.is_empty() || options.resume.is_some(),
        };
        let mut agent =
            agent(&config, &options, &place, &endpoint, &engine, &hooks, &tools, prompt.system, history);
        if let Some(limit) = &config.max_cost {
            agent.add_plugin(Arc::new(super::budget::BudgetPlugin::new(limit.value, core.clone())));
        }
        let task = TaskParts { flags, persist, startup_wait: config.mcp_startup_wait };
        let setup = Setup {
            http: endpoint.http,
            notes,
            workspace: place.workspace,
            unanswered,
            tools,
            skills: SkillsPart {
                catalog,
                roots: discovery.skill_roots,
                models: turn_models,
                prompt: Some((place.home, prompt.env, prompt.parts)),
            },
            hooks,
            memory: Some(discovery.memory),
            lite: endpoint.lite,
            sandbox: Some(sandbox),
            config: Some(config),
        };
        let session = Self::spawn(core, agent, engine, setup, task);
        session.trust().refresh_project_trust();
        Ok(session)
    }
}

/// The agent: the main model, the hooks plugin, the resumed history, the tools, the gate, the
/// system prompt, and the limits of its turns.
#[allow(clippy::too_many_arguments)]
fn agent(
    config: &Config,
    options: &SessionOptions,
    place: &Place,
    endpoint: &Endpoint,
    engine: &Arc<PermissionEngine>,
    hooks: &super::setup::HooksPart,
    tools: &ToolsPart,
    system: String,
    history: Vec<octo_agent::Message>,
) -> Agent {
    let mut builder = Agent::builder(Arc::clone(&endpoint.sender))
        .archiver(Arc::new(crate::persist::FileArchiver { dir: place.home.folded() }));
    if let Some(l) = &endpoint.lite {
        builder = builder.compaction_sender(Arc::clone(l));
    }
    if let Some(cell) = &hooks.cell {
        builder = builder.plugin(Arc::new(octo_hooks::HooksPlugin::new(Arc::clone(cell))));
    }
    if let Some(r) = &tools.checkpoints {
        builder = builder.plugin(Arc::new(crate::checkpoints::CheckpointPlugin(Arc::clone(r))));
    }
    if let Some(l) =
        tools.lsp.as_ref().filter(|_| config.lsp.diagnostics != crate::config::lsp::LspDiagnostics::Off)
    {
        builder = builder.plugin(Arc::new(octo_lsp::DiagnosticsPlugin(Arc::clone(l))));
        if let Some(r) = &tools.checkpoints {
            let changes = crate::command_diagnostics::CommandDiagnostics::new(
                Arc::clone(r),
                Arc::clone(l),
                place.workspace.clone(),
            );
            builder = builder.plugin(Arc::new(changes));
        }
    }
    if let Some(m) = &tools.repo_map {
        builder = builder.plugin(Arc::new(octo_repomap::SeenFilesPlugin(Arc::clone(m))));
    }
    builder = builder.plugin(Arc::new(crate::nested_rules::NestedRules::new(&place.workspace)));
    let mut agent = builder
        .history(history)
        .tools(tools.registry.clone())
        .permission_gate(engine.clone())
        .system_prompt(system)
        .cwd(place.workspace.clone())
        .max_turns(options.max_turns.unwrap_or(config.max_turns.value))
        .build();
    let cfg = agent.config_mut();
    cfg.max_tokens =
        options.max_tokens.or(endpoint.resolved.max_tokens).or(config.max_tokens.as_ref().map(|t| t.value));
    // Set by the user (a flag, the config, the endpoint): a limit on the whole answer.
    cfg.max_tokens_is_budget = cfg.max_tokens.is_some();
    cfg.reasoning = options.reasoning.unwrap_or(config.reasoning_effort.value);
    cfg.streaming = !options.no_stream;
    cfg.context.window = endpoint.resolved.model_info.context_window;
    cfg.context.threshold = config.compact_threshold.value;
    agent
}

/// The session's permission engine: the rules and mode, the secret locations, the folders read
/// without asking (its output, `additionalDirectories`), the sandbox's state and what it cannot
/// promise here, and the files and folders later prompts read.
fn engine(
    config: &Config,
    place: &super::steps::Place,
    mode: crate::permissions::Mode,
    sandbox: &Arc<octo_tools::shell::sandbox::Sandbox>,
    prompt_sources: Vec<std::path::PathBuf>,
) -> Arc<PermissionEngine> {
    let read_roots =
        std::iter::once(place.run_output.clone()).chain(config.additional_dirs.iter().cloned()).collect();
    Arc::new(
        PermissionEngine::new(config.rules.clone(), mode)
            .with_secrets(place.secrets.clone())
            .with_read_roots(read_roots)
            .with_sandbox(sandbox.is_active())
            .with_command_network(!sandbox.is_active() || sandbox.policy().network)
            .with_sandbox_gap({
                let sandbox = Arc::clone(sandbox);
                move || sandbox.accept_edits_gap()
            })
            .with_socket_gap({
                let sandbox = Arc::clone(sandbox);
                move || sandbox.socket_gap()
            })
            .with_protected(prompt_sources)
            .with_protected_dirs(place.protected_dirs()),
    )
}
