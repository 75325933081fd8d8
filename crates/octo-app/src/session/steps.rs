//! The steps a session starts with, each returning a typed part: where it runs ([`Place`]), the
//! skills, memory and agent types read beside the endpoint ([`Discovery`]), the endpoint and its
//! clients ([`Endpoint`]), the system prompt ([`Prompt`]) and the hooks ([`hooks`]). The tools
//! step is in `tools_step`; `start` composes them.

use super::error::SessionError;
use super::options::SessionOptions;
use super::setup::HooksPart;
use super::state::Core;
use crate::config::{Config, EnvLookup};
use crate::credentials::CredentialStore;
use crate::factory::{build_sender, resolve, Resolved};
use crate::home::Home;
use crate::prompt::{Environment, PromptParts};
use octo_agent::{AgentEvent, Sender};
use octo_provider::HttpConfig;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The folders whose files later sessions read as instructions or run as octo's own: skills,
/// commands, agents (the folders they are discovered in) and the user's memory. A file tool
/// writing under one is asked about in every mode
/// ([`crate::PermissionEngine::with_protected_dirs`]).
pub fn protected_dirs(
    home: &Home,
    workspace: &std::path::Path,
    user_home: Option<&std::path::Path>,
) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = crate::skills::roots(home, workspace, user_home)
        .into_iter()
        .map(|r| r.dir)
        .chain(crate::subagents::roots(home, workspace, user_home).into_iter().map(|(d, _)| d))
        .collect();
    dirs.push(home.root().join("memory"));
    let root_only =
        crate::protected::entries().into_iter().filter(|e| e.reach == crate::protected::Reach::Root);
    dirs.extend(root_only.map(|e| workspace.join(e.name)));
    dirs
}

/// Where the session runs: octo's home, the workspace, the user's home, the session's own output
/// folder, and the secret locations its commands are checked against.
pub(super) struct Place {
    pub home: Home,
    pub workspace: PathBuf,
    pub user_home: Option<PathBuf>,
    /// This session's own spilled output: readable by it, not by other sessions.
    pub run_output: PathBuf,
    /// `CLAUDE_ENV_FILE`: what SessionStart hooks export for the session's commands.
    pub env_file: PathBuf,
    pub secrets: octo_tools::secrets::Secrets,
}

impl Place {
    pub(crate) fn new(config: &Config, options: &SessionOptions, env: EnvLookup<'_>) -> Self {
        let home = Home::new(&config.home);
        let workspace = options.workspace.clone().unwrap_or_else(|| config.workspace.clone());
        let path_env = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let user_home = path_env("HOME").or_else(|| path_env("USERPROFILE"));
        let secrets = home.secrets(user_home.clone(), path_env("OCTO_KEYRING_FILE"));
        let tag = octo_tools::shell::reaper::new_tag();
        let run_output = home.output().join(&tag);
        let env_file = home.root().join("hook-env").join(tag).join("env");
        Self { home, workspace, user_home, run_output, env_file, secrets }
    }

    /// The folders whose files later sessions read as instructions ([`protected_dirs`]).
    pub fn protected_dirs(&self) -> Vec<PathBuf> {
        protected_dirs(&self.home, &self.workspace, self.user_home.as_deref())
    }

    /// The OS sandbox of the session's commands, and the notice when one was wanted but none can
    /// be had. `prompt_files` (what the prompt read) stay read-only for commands, as the rule
    /// files do.
    pub(crate) fn sandbox(
        &self,
        config: &Config,
        env: EnvLookup<'_>,
        prompt_files: &[PathBuf],
    ) -> (Arc<octo_tools::shell::sandbox::Sandbox>, Option<String>) {
        let homes: Vec<PathBuf> = self.user_home.iter().cloned().chain([config.home.clone()]).collect();
        let run = self.run_output.file_name().map_or_else(|| "run".into(), std::ffi::OsStr::to_os_string);
        let quarantine = config.home.join("quarantine").join(run);
        let places = crate::sandbox::Places {
            output: &self.run_output,
            quarantine: &quarantine,
            secrets: &self.secrets,
        };
        crate::sandbox::build(
            &config.sandbox,
            &self.workspace,
            places,
            &homes,
            env("OCTO_SANDBOX_SIMULATE").as_deref(),
            prompt_files,
        )
    }
}

/// What is read from disk beside the endpoint's setup: skills and commands, the memory's
/// prompt section, the agent types — each with its notices.
pub(super) struct Found {
    pub catalog: octo_skills::Catalog,
    pub skill_notes: Vec<String>,
    pub memory_text: Option<String>,
    pub memory_notes: Vec<String>,
    pub agents: octo_skills::Agents,
    pub agent_notes: Vec<String>,
}

/// Reading [`Found`] on a thread of its own, so many skills cost start-up little.
pub(super) struct Discovery {
    pub skill_roots: Vec<octo_skills::Root>,
    pub memory: Arc<octo_memory::Memory>,
    agent_roots: Vec<(PathBuf, String)>,
    /// Plugins' agent folders (or files): `(path, label, plugin name)`.
    plugin_agents: Vec<(PathBuf, String, String)>,
    /// Notes about plugins' parts (a path outside the plugin).
    plugin_notes: Vec<String>,
    tools: bool,
    thread: Option<std::thread::JoinHandle<Found>>,
}

impl Discovery {
    pub(crate) fn spawn(
        place: &Place,
        plugins: &[crate::claude_plugins::InstalledPlugin],
        tools: bool,
    ) -> Self {
        let mut plugin_notes = Vec::new();
        let mut skill_roots: Vec<octo_skills::Root> =
            plugins.iter().flat_map(|p| crate::plugin_parts::skill_roots(p, &mut plugin_notes)).collect();
        skill_roots.extend(crate::skills::roots(&place.home, &place.workspace, place.user_home.as_deref()));
        let plugin_agents: Vec<(PathBuf, String, String)> = plugins
            .iter()
            .flat_map(|p| {
                let label = format!("plugin {} agents", p.id);
                crate::plugin_parts::agent_paths(p, &mut plugin_notes)
                    .into_iter()
                    .map(move |path| (path, label.clone(), p.name.clone()))
            })
            .collect();
        let memory = Arc::new(crate::memory::open(&place.home, &place.workspace));
        let agent_roots = crate::subagents::roots(&place.home, &place.workspace, place.user_home.as_deref());
        let mut this =
            Self { skill_roots, memory, agent_roots, plugin_agents, plugin_notes, tools, thread: None };
        let copy = this.inputs();
        this.thread = std::thread::Builder::new().name("octo-skills".into()).spawn(move || copy.read()).ok();
        this
    }

    /// What the reading thread needs, owned.
    fn inputs(&self) -> Inputs {
        Inputs {
            roots: self.skill_roots.clone(),
            memory: Arc::clone(&self.memory),
            agent_roots: self.agent_roots.clone(),
            plugin_agents: self.plugin_agents.clone(),
            notes: self.plugin_notes.clone(),
            tools: self.tools,
        }
    }

    /// What was found (read here when the thread could not start or failed).
    pub(crate) fn join(&mut self) -> Found {
        match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(found)) => found,
            _ => self.inputs().read(),
        }
    }
}

/// The folders [`Discovery`] reads.
struct Inputs {
    roots: Vec<octo_skills::Root>,
    memory: Arc<octo_memory::Memory>,
    agent_roots: Vec<(PathBuf, String)>,
    plugin_agents: Vec<(PathBuf, String, String)>,
    notes: Vec<String>,
    tools: bool,
}

impl Inputs {
    fn read(self) -> Found {
        let (catalog, mut skill_notes) = crate::skills::discover(&self.roots);
        skill_notes.extend(self.notes);
        let (memory_text, memory_notes) = crate::memory::prompt_section(&self.memory, self.tools);
        let (mut agents, mut agent_notes) =
            octo_skills::Agents::discover(crate::subagents::builtin(), &self.agent_roots);
        for (path, label, plugin) in &self.plugin_agents {
            agent_notes.extend(agents.add_plugin(path, label, plugin));
        }
        Found { catalog, skill_notes, memory_text, memory_notes, agents, agent_notes }
    }
}

/// The endpoint and its clients: the main model, the lite model, the HTTP settings, and what
/// the user should know about them.
pub(super) struct Endpoint {
    pub resolved: Resolved,
    pub http: HttpConfig,
    pub sender: Arc<dyn Sender>,
    pub lite: Option<Arc<dyn Sender>>,
    pub notes: Vec<String>,
}

impl Endpoint {
    pub(crate) fn open(
        config: &Config,
        options: &SessionOptions,
        store: &dyn CredentialStore,
        env: EnvLookup<'_>,
    ) -> Result<Self, SessionError> {
        let resolved = resolve(config, options.model.as_deref(), store, env)?;
        if resolved.base_url.starts_with("https://") {
            // The trusted roots load beside the rest of the start-up, ready for the handshake.
            octo_provider::tls::prewarm();
        }
        let mut http = HttpConfig::default();
        if let Some(n) = options.max_attempts {
            http.retry.max_attempts = n.max(1);
        }
        let mut notes = resolved.notes.clone();
        let sender = crate::factory::build_sender_noting(&resolved, http.clone(), &mut notes)?;
        let lite = match &config.lite_model {
            Some(l) => Some(build_sender(&resolve(config, Some(&l.value), store, env)?, http.clone())?),
            None => None,
        };
        Ok(Self { resolved, http, sender, lite, notes })
    }
}

/// The system prompt and what it is built from.
pub(super) struct Prompt {
    pub system: String,
    pub env: Environment,
    pub parts: PromptParts,
    /// The files it was read from (protected from the model's edits).
    pub sources: Vec<PathBuf>,
}

impl Prompt {
    pub(crate) fn build(
        place: &Place,
        options: &SessionOptions,
        label: &str,
        catalog: &octo_skills::Catalog,
        memory_text: Option<String>,
        notes: &mut Vec<String>,
    ) -> Self {
        let env = Environment {
            user_home: place.user_home.clone(),
            ..Environment::detect(&place.workspace, label)
        };
        let mut parts = PromptParts {
            base_override: options.system_prompt.clone(),
            append: options.append_system_prompt.clone(),
            ..PromptParts::default()
        };
        if !options.no_tools {
            let (listing, notice) =
                octo_skills::listing(catalog, octo_skills::SKILL_TOOL, octo_skills::LISTING_BUDGET);
            parts.skills = listing;
            notes.extend(notice);
        }
        parts.memory = memory_text;
        let (system, sources) = crate::prompt::assemble_with_sources(&place.home, &env, &parts);
        Self { system, env, parts, sources }
    }
}

/// The hooks: the config's and the settings.json files'; a project's only once trusted.
pub(super) fn hooks(
    core: &Core,
    config: &Config,
    place: &Place,
    sandbox: &Arc<octo_tools::shell::sandbox::Sandbox>,
    unattended: bool,
    notes: &mut Vec<String>,
) -> HooksPart {
    let (hook_set, hook_notes) = crate::hooks::load(config, &place.workspace, place.user_home.as_deref());
    notes.extend(hook_notes);
    let fingerprint = crate::hooks::trust_key(&hook_set, &place.workspace);
    let trusted = fingerprint.as_deref().is_none_or(|f| crate::hooks::trusted(&place.home, f));
    let active = if trusted { hook_set.clone() } else { hook_set.filtered(|m| !m.project) };
    if !trusted && unattended {
        notes.push(
            "this project's hooks were not run: a project's hooks run only after you trust them (in the REPL, or with `octo trust`)"
                .to_owned(),
        );
    }
    let hook_sandbox = config.sandbox.hooks.then(|| Arc::clone(sandbox));
    let runner = crate::hooks::runner(&place.workspace, hook_sandbox, &config.shell_env, &place.env_file)
        .with_readable(place.run_output.clone());
    let command_tag = Arc::new(std::sync::OnceLock::new());
    let guard = hook_guard(core, &hook_set, place, unattended, &command_tag);
    let cell = Arc::new(octo_hooks::HookCell::new(hook_instance(
        active,
        runner,
        &place.home,
        core,
        config.hooks_native,
        guard.clone(),
    )));
    HooksPart {
        guard,
        command_tag,
        cell: Some(cell),
        untrusted: Mutex::new(if trusted { None } else { fingerprint.map(|f| (f, hook_set)) }),
        ended: std::sync::atomic::AtomicBool::new(false),
        readable: place.run_output.clone(),
        env_file: super::setup::EnvFile(place.env_file.clone()),
    }
}

/// What keeps a hook from running a file changed in this session without the user's yes (the
/// files as they are now are what "changed" is measured against). `None` without hooks.
fn hook_guard(
    core: &Core,
    set: &octo_hooks::HookSet,
    place: &Place,
    unattended: bool,
    command_tag: &Arc<std::sync::OnceLock<String>>,
) -> Option<octo_hooks::Guard> {
    let (workspace, home) = (&place.workspace, &place.home);
    let commands: Vec<&str> =
        set.iter().flat_map(|(_, m)| m.hooks.iter().map(|h| h.command.as_str())).collect();
    if commands.is_empty() {
        return None;
    }
    let ask: Option<crate::hook_guard::Ask> = (!unattended).then(|| {
        let core = core.clone();
        Arc::new(move |request| {
            let core = core.clone();
            Box::pin(async move { core.ask_between_turns(request).await })
                as std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send>>
        }) as crate::hook_guard::Ask
    });
    let kept = crate::hook_guard::Kept {
        record: Some(home.root().join("hook-files.json")),
        checkpoints: Some(home.checkpoints()),
        command_tag: Some(Arc::clone(command_tag)),
    };
    Some(crate::hook_guard::HookGuard::new(workspace, commands.into_iter(), ask, kept).into_guard())
}

/// The hooks of `set` for a session: run through the command tool's shell, told the session's
/// id and transcript, their errors shown as notices on the session's events.
/// A mode in Claude Code's words, as its hooks are told it.
fn claude_mode(mode: crate::permissions::Mode) -> String {
    match mode {
        crate::permissions::Mode::Default => "default",
        crate::permissions::Mode::AcceptEdits => "acceptEdits",
        crate::permissions::Mode::Plan => "plan",
        crate::permissions::Mode::Auto => "bypassPermissions",
    }
    .to_owned()
}

/// The id of the session's `turn`-th prompt, in the UUID text form Claude Code gives it: the
/// same for every hook of one prompt, another for the next.
fn prompt_id(session: &str, turn: u32) -> String {
    let h = |salt: &str| {
        let mut v: u64 = 0xcbf2_9ce4_8422_2325;
        for b in salt.bytes().chain(session.bytes()).chain(turn.to_le_bytes()) {
            v ^= u64::from(b);
            v = v.wrapping_mul(0x0100_0000_01b3);
        }
        v
    };
    let (a, b) = (h("a"), h("b"));
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        (b >> 48) & 0x3fff | 0x8000,
        b & 0xffff_ffff_ffff
    )
}

pub(super) fn hook_instance(
    set: octo_hooks::HookSet,
    runner: octo_hooks::Runner,
    home: &Home,
    core: &Core,
    native: bool,
    guard: Option<octo_hooks::Guard>,
) -> octo_hooks::Hooks {
    let (id, planned) = (Arc::clone(&core.session_id), Arc::clone(&core.planned_id));
    let (view, turns) = (Arc::clone(&core.hook_view), core.clone());
    // A session that is not saved still has an id for its hooks, as Claude Code's always has.
    let unsaved = octo_session::new_id();
    let sessions = home.sessions();
    let events = core.events.clone();
    octo_hooks::Hooks::new(
        set,
        runner,
        octo_hooks::Context {
            session: Arc::new(move || {
                // Before the first save, the id the session is going to be saved under.
                let id = id
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .clone()
                    .or_else(|| planned.get().cloned());
                let transcript = id.as_ref().map(|i| sessions.join(format!("{i}.jsonl")));
                let id = id.unwrap_or_else(|| unsaved.clone());
                let view = view.get();
                octo_hooks::SessionInfo {
                    prompt_id: Some(prompt_id(&id, turns.lock().turns)),
                    id: Some(id),
                    transcript,
                    permission_mode: view.map(|v| claude_mode((v.mode)())),
                    effort: view.map(|v| v.effort.clone()),
                }
            }),
            aliases: Arc::new(crate::hooks::aliases),
            notice: Arc::new(move |message| {
                let _ = events.send(AgentEvent::Notice { message });
            }),
            shape: crate::hooks::shape(native),
            guard,
        },
    )
}
