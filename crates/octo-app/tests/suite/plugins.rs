//! Claude Code plugins in whole sessions: a plugin folder in Claude Code's layout (manifest,
//! commands, agents, skills, hooks, `.mcp.json`, `${CLAUDE_PLUGIN_ROOT}`), given with
//! `--plugin-dir`, installed by octo, or installed and enabled by Claude Code; broken ones named.

use octo_app::config::{Config, Overrides};
use octo_app::credentials::MemoryStore;
use octo_app::{AgentEvent, Mode, Session, SessionOptions, ToolOutcome};
use octo_testkit::anthropic::Reply;
use octo_testkit::scenario::{Built, Scenario};
use octo_testkit::{MockLlm, Scripted, TempHome};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A plugin as Claude Code's documentation lays one out.
fn plugin(dir: &Path) {
    write(
        &dir.join(".claude-plugin/plugin.json"),
        r#"{"name": "kit", "version": "1.2.0", "description": "Team tools", "author": {"name": "Team"}, "keywords": ["x"]}"#,
    );
    write(
        &dir.join("commands/hello.md"),
        "---\ndescription: Say hello\nallowed-tools: Bash(echo:*)\nargument-hint: [who]\n---\nFrom !`echo ${CLAUDE_PLUGIN_ROOT}/marker` greet $ARGUMENTS.\n",
    );
    write(
        &dir.join("agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews a change for bugs\ntools: Read, Grep, Glob\nmodel: sonnet\n---\nYou review changes.\n",
    );
    write(
        &dir.join("skills/style/SKILL.md"),
        "---\nname: style\ndescription: The team's house style\n---\nUse tabs.\n",
    );
    write(
        &dir.join("hooks/hooks.json"),
        r#"{"description": "guard", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "sh ${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh", "timeout": 10}
        ]}]}}"#,
    );
    write(
        &dir.join("hooks/guard.sh"),
        "input=$(cat)\nprintf '%s\\n' \"$input\" | grep -o '\"tool_name\": *\"[A-Za-z]*\"' >> \"$CLAUDE_PLUGIN_ROOT/hook.log\"\ncase \"$input\" in *forbidden*) echo 'blocked by kit' >&2; exit 2;; esac\nexit 0\n",
    );
    write(
        &dir.join(".mcp.json"),
        r#"{"mcpServers": {"db": {"command": "${CLAUDE_PLUGIN_ROOT}/servers/db", "args": ["--data", "${CLAUDE_PLUGIN_ROOT}/data"], "disabled": true}}}"#,
    );
}

struct Setup {
    _tmp: TempHome,
    home: PathBuf,
    ws: PathBuf,
    user: PathBuf,
    llm: MockLlm,
}

async fn setup(replies: Vec<Scripted>) -> Setup {
    let Built { home: tmp, llm, .. } = Scenario::new().replies(replies).build().await;
    let (home, ws, user) = (tmp.home(), tmp.workspace(), tmp.root().join("user"));
    std::fs::create_dir_all(&user).unwrap();
    Setup { _tmp: tmp, home, ws, user, llm }
}

impl Setup {
    fn env(&self) -> impl Fn(&str) -> Option<String> + '_ {
        move |k: &str| match k {
            "MOCK_KEY" => Some("sk-mock".to_owned()),
            "HOME" => Some(self.user.display().to_string()),
            _ => None,
        }
    }

    fn config(&self, dirs: Vec<PathBuf>) -> Config {
        Config::load(
            &self.home,
            &self.ws,
            &self.env(),
            &Overrides { plugin_dirs: dirs, ..Overrides::default() },
        )
        .unwrap()
    }

    fn session(&self, config: Config) -> Session {
        let options = SessionOptions {
            workspace: Some(self.ws.clone()),
            mode: Some(Mode::Auto),
            ..SessionOptions::default()
        };
        Session::start(config, options, &MemoryStore::default(), &self.env()).unwrap()
    }
}

async fn run_turn(s: &Session, prepared: impl Into<octo_app::skills::Prepared>) -> Vec<AgentEvent> {
    let mut rx = s.subscribe();
    s.prompt(prepared.into()).unwrap();
    let mut events = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.unwrap().unwrap();
        let end = matches!(e, AgentEvent::TurnEnd { .. });
        events.push(e);
        if end {
            return events;
        }
    }
}

fn outcome(events: &[AgentEvent], id: &str) -> (ToolOutcome, String) {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolCallEnd { id: call, outcome, output, .. } if call == id => {
                Some((*outcome, output.clone()))
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id}: {events:#?}"))
}

#[tokio::test]
async fn a_plugin_dir_brings_its_commands_agents_skills_hooks_and_servers() {
    let t = setup(vec![
        Scripted::sse(Reply::new().tool_use("t1", "terminal", json!({"command": "echo forbidden"})).sse()),
        Scripted::sse(Reply::new().tool_use("t2", "terminal", json!({"command": "echo fine"})).sse()),
        Scripted::sse(Reply::new().text("Hello.").sse()),
    ])
    .await;
    let dir = t._tmp.root().join("plugins/team-kit");
    plugin(&dir);
    let root = std::fs::canonicalize(&dir).unwrap();
    let mut config = t.config(vec![dir.clone()]);
    // The plugin's hook logs into its own folder, which a sandboxed hook may not write.
    config.sandbox.hooks = false;
    let server = config.mcp_servers.iter().find(|s| s.name == "plugin_kit_db").expect("the plugin's server");
    assert_eq!(server.spec.command.as_deref(), Some(root.join("servers/db").to_str().unwrap()));
    assert_eq!(server.spec.args, ["--data".to_owned(), root.join("data").display().to_string()]);
    assert_eq!(server.spec.enabled, Some(false), "`disabled` in the plugin's .mcp.json");
    let s = t.session(config);
    let catalog = s.skills().catalog();
    let hello = catalog.get("kit:hello").expect("the command, by the plugin's name");
    assert_eq!(catalog.get("hello").map(|c| c.name.as_str()), Some("kit:hello"), "and by its own name");
    assert!(catalog.get("kit:style").is_some(), "the skill");
    assert_eq!(hello.plugin_root.as_deref(), Some(root.as_path()));

    let inv = s.skills().invoke("hello", "world").await.unwrap().unwrap();
    assert_eq!(inv.questions().count(), 0, "{:?}", inv.steps);
    let prepared = s.skills().finish(inv).await.unwrap();
    let events = run_turn(&s, prepared).await;
    let sent = t.llm.request_bodies().await;
    let first = sent[0]["messages"][0]["content"].to_string();
    assert!(
        first.contains(&format!("From {}/marker", root.display())) && first.contains("greet world."),
        "{first}"
    );
    // The plugin's agent is offered to the model under the plugin's name.
    let task = sent[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["description"].to_string().contains("kit:reviewer"));
    assert!(task.is_some(), "{:?}", sent[0]["tools"]);
    // Its Bash hook ran with CLAUDE_PLUGIN_ROOT set (on the command's `!` line too, as octo's
    // hooks meet those) and blocked the first call.
    let (o, text) = outcome(&events, "t1");
    assert!(o != ToolOutcome::Ran && text.contains("blocked by kit"), "{o:?} {text}");
    assert_eq!(outcome(&events, "t2").0, ToolOutcome::Ran);
    let log = std::fs::read_to_string(root.join("hook.log")).unwrap();
    assert_eq!(log.matches("\"Bash\"").count(), 3, "the command's own line, then both calls: {log}");
}

#[tokio::test]
async fn broken_plugins_are_named_and_the_rest_still_load() {
    let t = setup(Vec::new()).await;
    // No manifest but a plugin's parts: the plugin named after its folder, as in Claude Code.
    let bare = t._tmp.root().join("bare-kit");
    write(&bare.join("commands/hello.md"), "Say hello.\n");
    let none = t._tmp.root().join("none");
    std::fs::create_dir_all(none.join("docs")).unwrap();
    let broken = t._tmp.root().join("broken");
    write(&broken.join(".claude-plugin/plugin.json"), "{\"name\": \"broken\",");
    let missing = t._tmp.root().join("missing");
    write(&missing.join(".claude-plugin/plugin.json"), r#"{"name": "missing", "commands": ["../../etc"]}"#);
    write(
        &missing.join("hooks/hooks.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/gone.sh"}]}]}}"#,
    );
    write(&missing.join("commands/ok.md"), "Say ok.\n");
    let config = t.config(vec![none.clone(), broken.clone(), missing, bare]);
    let w = config.warnings.join("\n");
    assert!(
        w.contains(&format!("--plugin-dir {}", none.display()))
            && w.contains("no .claude-plugin/plugin.json"),
        "{w}"
    );
    assert!(
        w.contains(&format!("--plugin-dir {}", broken.display())) && w.contains("not a JSON object"),
        "{w}"
    );
    assert_eq!(config.plugins.len(), 2);
    let (_, notices) = octo_app::hooks::load(&config, &t.ws, None);
    assert!(notices.iter().any(|n| n.contains("gone.sh") && n.contains("does not exist")), "{notices:?}");
    let s = t.session(config);
    assert!(s.skills().catalog().get("missing:ok").is_some());
    assert!(s.skills().catalog().get("bare-kit:hello").is_some());
    let notes = s.conversation().notes().join("\n");
    assert!(notes.contains("`commands` names ../../etc, which is not inside the plugin's folder"), "{notes}");
}

#[tokio::test]
async fn installed_plugins_are_on_until_disabled_and_claude_codes_installs_are_read() {
    let t = setup(Vec::new()).await;
    let src = t._tmp.root().join("src-kit");
    plugin(&src);
    let home = octo_app::Home::new(&t.home);
    let installed = octo_app::plugins::install(&home, None, src.to_str().unwrap()).unwrap();
    assert_eq!(installed.root, std::fs::canonicalize(t.home.join("plugins/kit")).unwrap());
    assert!(matches!(
        octo_app::plugins::install(&home, None, src.to_str().unwrap()),
        Err(octo_app::plugins::PluginError::Exists(..))
    ));
    let not_one = t._tmp.root().join("plain");
    std::fs::create_dir_all(&not_one).unwrap();
    assert!(octo_app::plugins::install(&home, None, not_one.to_str().unwrap()).is_err());

    // Claude Code's own install of another plugin, enabled in the user's settings.
    let cache = t.user.join(".claude/plugins/cache/market/notes/1.0.0");
    write(&cache.join(".claude-plugin/plugin.json"), r#"{"name": "notes"}"#);
    write(&cache.join("commands/jot.md"), "---\ndescription: Jot a note\n---\nJot $ARGUMENTS.\n");
    write(
        &t.user.join(".claude/plugins/installed_plugins.json"),
        &json!({"version": 2, "plugins": {"notes@market": [{"scope": "user", "installPath": cache.display().to_string()}]}}).to_string(),
    );
    write(&t.user.join(".claude/settings.json"), r#"{"enabledPlugins": {"notes@market": true}}"#);
    let config = t.config(Vec::new());
    let mut names: Vec<&str> = config.plugins.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["kit", "notes"]);
    let s = t.session(config);
    assert!(
        s.skills().catalog().get("notes:jot").is_some() && s.skills().catalog().get("kit:hello").is_some()
    );

    octo_app::plugins::set_enabled(&home, Some(&t.user), "notes", false).unwrap();
    octo_app::plugins::set_enabled(&home, Some(&t.user), "kit", false).unwrap();
    assert!(t.config(Vec::new()).plugins.is_empty(), "both off for octo");
    assert!(octo_app::plugins::set_enabled(&home, Some(&t.user), "nope", true).is_err());
    let settings = std::fs::read_to_string(t.user.join(".claude/settings.json")).unwrap();
    assert!(settings.contains("\"notes@market\": true"), "Claude Code's settings are left alone");
}

#[tokio::test]
async fn a_plugin_the_project_turns_on_is_trusted_like_the_projects_own_files() {
    let t = setup(Vec::new()).await;
    let cache = t.user.join(".claude/plugins/cache/market/team/2.0.0");
    plugin(&cache);
    write(&cache.join(".claude-plugin/plugin.json"), r#"{"name": "team"}"#);
    write(
        &t.user.join(".claude/plugins/installed_plugins.json"),
        &json!({"version": 2, "plugins": {"team@market": [
            {"scope": "project", "projectPath": t.ws.display().to_string(), "installPath": cache.display().to_string()}
        ]}})
        .to_string(),
    );
    write(&t.ws.join(".claude/settings.json"), r#"{"enabledPlugins": {"team@market": true}}"#);
    let config = t.config(Vec::new());
    assert_eq!(config.plugins.len(), 1);
    assert_eq!(config.plugins[0].from, octo_app::claude_plugins::PluginFrom::Project);
    let server = config.mcp_servers.iter().find(|s| s.name == "plugin_team_db").unwrap();
    assert_eq!(server.origin, octo_app::McpOrigin::ProjectJson, "its servers need the user's approval");
    let s = t.session(config);
    let hello = s.skills().catalog().get("team:hello").cloned().unwrap();
    assert!(octo_app::skills::is_project(&hello), "{}", hello.source);
    assert!(
        s.trust().untrusted_grants().iter().any(|g| g.starts_with("/team:hello: Bash(echo:*)")),
        "{:?}",
        s.trust().untrusted_grants()
    );
    assert!(
        s.trust().untrusted_hooks().iter().any(|h| h.contains("guard.sh")),
        "{:?}",
        s.trust().untrusted_hooks()
    );
    // The user's own choice wins: off for octo.
    octo_app::plugins::set_enabled(&octo_app::Home::new(&t.home), Some(&t.user), "team", false).unwrap();
    assert!(t.config(Vec::new()).plugins.is_empty());
}
