//! Starting a session from configuration: the endpoint and its client, skills, memory, hooks,
//! the tools (built-in, MCP, sub-agents, memory, skills), the permission engine and the system
//! prompt, all before the session's task starts.

use super::actor::{persistence, Flags};
use super::{Resumed, Session, SessionError, SessionOptions, Setup, Shared};
use crate::config::{Config, ConfigError, EnvLookup};
use crate::credentials::CredentialStore;
use crate::factory::{build_sender, resolve};
use crate::home::Home;
use crate::permissions::PermissionEngine;
use crate::prompt::{Environment, PromptParts};
use octo_agent::{Agent, AgentEvent, ToolRegistry, ToolSource};
use octo_provider::HttpConfig;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

impl Session {
    /// Starts a session from configuration: resolves the endpoint and key, builds the client, the
    /// tools, the permission engine and the system prompt, all before its task starts. Must be
    /// called inside a Tokio runtime. Front ends usually go through [`crate::Launcher`].
    pub fn start(
        config: Config,
        options: SessionOptions,
        store: &dyn CredentialStore,
        env: EnvLookup<'_>,
    ) -> Result<Self, SessionError> {
        let home = Home::new(&config.home);
        let workspace = options.workspace.clone().unwrap_or_else(|| config.workspace.clone());
        // Skills and commands are read on another thread while the endpoint and its client are
        // set up, so many skills cost start-up little.
        let user_home =
            env("HOME").or_else(|| env("USERPROFILE")).filter(|v| !v.is_empty()).map(PathBuf::from);
        let skill_roots = crate::skills::roots(&home, &workspace, user_home.as_deref());
        let memory = Arc::new(crate::memory::open(&home, &workspace));
        let agent_roots = crate::subagents::roots(&home, &workspace, user_home.as_deref());
        let discovery = {
            let roots = skill_roots.clone();
            let memory = Arc::clone(&memory);
            let tools = !options.no_tools;
            let agent_roots = agent_roots.clone();
            std::thread::Builder::new()
                .name("octo-skills".into())
                .spawn(move || {
                    (
                        crate::skills::discover(&roots),
                        crate::memory::prompt_section(&memory, tools),
                        octo_skills::Agents::discover(crate::subagents::builtin(), &agent_roots),
                    )
                })
                .ok()
        };
        let resolved = resolve(&config, options.model.as_deref(), store, env)?;
        let mut http = HttpConfig::default();
        if let Some(n) = options.max_attempts {
            http.retry.max_attempts = n.max(1);
        }
        let mut sender_notes = Vec::new();
        let sender = crate::factory::build_sender_noting(&resolved, http.clone(), &mut sender_notes)?;
        let mut notes: Vec<String> =
            config.warnings.iter().chain(resolved.notes.iter()).chain(sender_notes.iter()).cloned().collect();
        let path_env = |name: &str| env(name).filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
        let secrets =
            home.secrets(path_env("HOME").or_else(|| path_env("USERPROFILE")), path_env("OCTO_KEYRING_FILE"));
        // This session's own spilled output: readable by it, not by other sessions.
        let run_output = home.output().join(octo_tools::shell::reaper::new_tag());
        let homes: Vec<PathBuf> = user_home.iter().cloned().chain([config.home.clone()]).collect();
        let (sandbox, sandbox_notice) = crate::sandbox::build(
            &config.sandbox,
            &workspace,
            &run_output,
            &homes,
            env("OCTO_SANDBOX_SIMULATE").as_deref(),
        );
        // Skills and commands: read once per session, so the listing (and the request prefix)
        // stays byte-stable; `/skills reload` reads them again.
        let ((catalog, skill_notes), (memory_text, memory_notes), (agent_types, agent_notes)) =
            match discovery.map(std::thread::JoinHandle::join) {
                Some(Ok(found)) => found,
                _ => (
                    crate::skills::discover(&skill_roots),
                    crate::memory::prompt_section(&memory, !options.no_tools),
                    octo_skills::Agents::discover(crate::subagents::builtin(), &agent_roots),
                ),
            };
        notes.extend(memory_notes);
        notes.extend(agent_notes);
        notes.extend(skill_notes);
        let env_info = Environment::detect(&workspace, &resolved.label());
        let mut parts = PromptParts {
            base_override: options.system_prompt.clone(),
            append: options.append_system_prompt.clone(),
            ..PromptParts::default()
        };
        if !options.no_tools {
            let (listing, notice) =
                octo_skills::listing(&catalog, octo_skills::SKILL_TOOL, octo_skills::LISTING_BUDGET);
            parts.skills = listing;
            notes.extend(notice);
        }
        parts.memory = memory_text;
        let skills = Arc::new(octo_skills::SharedCatalog::new(catalog));
        let (system, prompt_sources) = crate::prompt::assemble_with_sources(&home, &env_info, &parts);
        let mode = options.mode.unwrap_or(config.permission_mode.value);
        let engine = Arc::new(
            PermissionEngine::new(config.rules.clone(), mode)
                .with_secrets(secrets.clone())
                .with_read_roots(vec![run_output.clone()])
                .with_sandbox(sandbox.is_active())
                .with_protected(prompt_sources),
        );
        // Hooks: the config's and the settings.json files'; a project's only once trusted.
        let (hook_set, hook_notes) = crate::hooks::load(&config, &workspace, user_home.as_deref());
        notes.extend(hook_notes);
        let fingerprint = crate::hooks::trust_key(&hook_set, &workspace);
        let trusted = fingerprint.as_deref().is_none_or(|f| crate::hooks::trusted(&home, f));
        let active = if trusted { hook_set.clone() } else { hook_set.filtered(|m| !m.project) };
        if !trusted && options.unattended {
            notes.push(
                "this project's hooks were not run: a project's hooks run only after you trust them in the REPL".to_owned(),
            );
        }
        let untrusted_hooks = if trusted { None } else { fingerprint.map(|f| (f, hook_set)) };
        let events_cell: Arc<std::sync::OnceLock<broadcast::Sender<AgentEvent>>> =
            Arc::new(std::sync::OnceLock::new());
        let hook_session_id = Arc::new(Mutex::new(None));
        let hook_sandbox = config.sandbox.hooks.then(|| Arc::clone(&sandbox));
        let hooks = Arc::new(octo_hooks::HookCell::new(hook_instance(
            active,
            crate::hooks::runner(&workspace, hook_sandbox),
            &home,
            &hook_session_id,
            &events_cell,
        )));
        let mut lite = None;
        if let Some(l) = &config.lite_model {
            let r = resolve(&config, Some(&l.value), store, env)?;
            lite = Some(build_sender(&r, http.clone())?);
        }
        let session_id = hook_session_id;
        let shared_cell: Arc<std::sync::OnceLock<Arc<Mutex<Shared>>>> = Arc::new(std::sync::OnceLock::new());
        let lent_tools = Arc::new(std::sync::RwLock::new(ToolRegistry::new()));
        let mut spawner = None;
        let mut shells = None;
        let mut sources: Vec<Arc<dyn ToolSource>> = Vec::new();
        let mut mcp = None;
        let tools = if options.no_tools {
            ToolRegistry::new()
        } else {
            let mut settings = crate::tools::BuiltinSettings::from_config(&config, secrets);
            settings.output = Some(run_output);
            settings.sandbox = Some(Arc::clone(&sandbox));
            notes.extend(sandbox_notice);
            let builtin = crate::tools::builtin(&home, &settings);
            shells = Some(builtin.shells);
            sources.push(Arc::new(builtin.tools));
            // MCP servers start now, in the background; the first request waits for them a
            // little (see the actor), and their tools join between turns.
            if let Some(hub) = crate::mcp::hub(&config.mcp_servers, &home, &workspace, env) {
                hub.start();
                if options.unattended {
                    for s in hub.status().iter().filter(|s| s.state == "needs approval") {
                        notes.push(format!(
                            "the project's MCP server `{}` ({}) was not started: a project's servers run only after you approve them in the REPL",
                            s.name, s.target
                        ));
                    }
                }
                sources.push(Arc::new(octo_mcp::McpSource(Arc::clone(&hub))));
                mcp = Some(hub);
            }
            sources.push(Arc::new(octo_memory::tools(Arc::clone(&memory), crate::memory::tool_env())));
            let s = Arc::new(crate::subagents::Spawner::new(crate::subagents::SpawnerParts {
                limits: config.subagents,
                models: crate::subagents::models(
                    &agent_types,
                    &config,
                    lite.as_ref(),
                    store,
                    env,
                    &http,
                    &mut notes,
                ),
                agents: agent_types,
                sender: {
                    let cell = Arc::clone(&shared_cell);
                    Arc::new(move || cell.get().and_then(|s| s.lock().ok().and_then(|s| s.sender.clone())))
                },
                engine: Arc::clone(&engine),
                tools: Arc::clone(&lent_tools),
                workspace: workspace.clone(),
                notify: {
                    let cell = Arc::clone(&shared_cell);
                    Arc::new(move |note: String| {
                        if let Some(s) = cell.get() {
                            s.lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner)
                                .pending_notes
                                .push(note);
                        }
                    })
                },
                sidechains: Some(crate::subagents::Sidechains {
                    dir: home.sessions(),
                    parent: Arc::clone(&session_id),
                }),
                plugins: vec![Arc::new(octo_hooks::HooksPlugin::for_subagent(Arc::clone(&hooks)))],
            }));
            sources.push(Arc::new(crate::subagents::tools(Arc::clone(&s), 0)));
            spawner = Some(s);
            let activation = Arc::new(crate::skills::EngineActivation(Arc::clone(&engine)));
            sources.push(Arc::new(octo_skills::SkillSource::new(Arc::clone(&skills), Some(activation))));
            let (tools, left_out) = crate::tools::assemble(&sources);
            notes.extend(left_out);
            tools
        };
        config.rules.check(&tools).map_err(|e| {
            SessionError::Config(ConfigError::Value {
                source_desc: "[permissions]".into(),
                message: e.to_string(),
            })
        })?;
        let tool_names: Vec<String> = tools.names().map(str::to_owned).collect();
        let registry = tools.clone();
        *lent_tools.write().unwrap_or_else(std::sync::PoisonError::into_inner) = tools.clone();
        let Resumed { persist, history, unanswered } =
            persistence(&config, &options, &workspace, &resolved, &session_id, &mut notes)?;
        let mut builder = Agent::builder(Arc::clone(&sender))
            .archiver(Arc::new(crate::persist::FileArchiver { dir: home.folded() }));
        if let Some(l) = &lite {
            builder = builder.compaction_sender(Arc::clone(l));
        }
        let resumed = !history.is_empty() || options.resume.is_some();
        let mut agent = builder
            .plugin(Arc::new(octo_hooks::HooksPlugin::new(Arc::clone(&hooks))))
            .history(history)
            .tools(tools)
            .permission_gate(engine.clone())
            .system_prompt(system)
            .cwd(workspace.clone())
            .max_turns(options.max_turns.unwrap_or(config.max_turns.value))
            .build();
        let cfg = agent.config_mut();
        cfg.max_tokens =
            options.max_tokens.or(resolved.max_tokens).or(config.max_tokens.as_ref().map(|t| t.value));
        cfg.reasoning = options.reasoning.unwrap_or(config.reasoning_effort.value);
        cfg.streaming = !options.no_stream;
        cfg.context.window = resolved.model_info.context_window;
        cfg.context.threshold = config.compact_threshold.value;
        let workspace_dir = workspace;
        let log_events = options.log_events || config.log_events;
        let setup = Setup {
            config: Some(config),
            http,
            notes,
            tools: registry,
            tool_names,
            flags: Flags { unattended: options.unattended, model_titles: options.model_titles },
            persist,
            unanswered,
            shells,
            mcp,
            sources,
            trash: (!options.no_tools).then(|| octo_tools::trash::Trash::new(home.trash())),
            workspace: workspace_dir,
            skills,
            skill_roots,
            prompt: Some((home, env_info, parts)),
            memory: Some(memory),
            lite,
            spawner,
            lent_tools: Some(lent_tools),
            shared_cell: Some(shared_cell),
            events_cell: Some(events_cell),
            hooks: Some(hooks),
            untrusted_hooks: Mutex::new(untrusted_hooks),
            ended: std::sync::atomic::AtomicBool::new(false),
            log_events,
            resumed,
            sandbox: Some(sandbox),
        };
        Ok(Self::spawn(agent, engine, resolved.label(), resolved.model_info, setup, session_id))
    }
}

/// The hooks of `set` for a session in `workspace`: run through the command tool's shell, told
/// the session's id and transcript, their errors shown as notices.
pub(super) fn hook_instance(
    set: octo_hooks::HookSet,
    runner: octo_hooks::Runner,
    home: &Home,
    session_id: &Arc<Mutex<Option<String>>>,
    events: &Arc<std::sync::OnceLock<broadcast::Sender<AgentEvent>>>,
) -> octo_hooks::Hooks {
    let id = Arc::clone(session_id);
    let sessions = home.sessions();
    let events = Arc::clone(events);
    octo_hooks::Hooks::new(
        set,
        runner,
        octo_hooks::Context {
            session: Arc::new(move || {
                let id = id.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
                let transcript = id.as_ref().map(|i| sessions.join(format!("{i}.jsonl")));
                octo_hooks::SessionInfo { id, transcript }
            }),
            aliases: Arc::new(crate::hooks::aliases),
            notice: Arc::new(move |message| {
                if let Some(tx) = events.get() {
                    let _ = tx.send(AgentEvent::Notice { message });
                }
            }),
        },
    )
}
