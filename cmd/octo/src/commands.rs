//! `octo config`, `octo auth` and `octo doctor`.

use crate::cli::{AuthAction, Cli, ConfigAction, SessionsAction};
use crate::exit::{EXIT_ERROR, EXIT_USAGE};
use crate::launch::overrides;
use crate::out;
use crate::sanitize::visible;
use octo_app::config::Config;
use octo_app::credentials::KeySource;
use octo_app::factory::{known_endpoints, resolve};
use octo_app::session_store::{now, Found};
use octo_app::setup::probe;
use octo_app::Launcher;
use std::io::{IsTerminal, Read};
use std::process::ExitCode;

fn load(launcher: &Launcher, cli: &Cli) -> Result<Config, String> {
    let ws = launcher.workspace(cli.workspace.as_deref()).map_err(|e| e.to_string())?;
    launcher.config(&ws, &overrides(cli)).map_err(|e| e.to_string())
}

/// `octo config show|path`.
pub fn config(launcher: &Launcher, cli: &Cli, action: &ConfigAction) -> anyhow::Result<ExitCode> {
    match action {
        ConfigAction::Path => {
            let ws = launcher.workspace(cli.workspace.as_deref()).unwrap_or_default();
            out::stdout(&format!(
                "user:    {}\nproject: {}\n",
                launcher.home().config_file().display(),
                ws.join(".octo").join("config.toml").display()
            ));
            Ok(ExitCode::SUCCESS)
        }
        ConfigAction::Show => match load(launcher, cli) {
            Ok(c) => {
                for w in &c.warnings {
                    out::status(&format!("octo: note: {w}"));
                }
                out::stdout(&c.show());
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                out::error(&e);
                Ok(ExitCode::from(EXIT_USAGE))
            }
        },
    }
}

/// `octo auth set|remove`.
pub fn auth(launcher: &Launcher, action: &AuthAction) -> anyhow::Result<ExitCode> {
    let (AuthAction::Set { endpoint } | AuthAction::Remove { endpoint }) = action;
    let ws = std::env::current_dir().unwrap_or_default();
    let config = launcher.config(&ws, &Default::default())?;
    if !known_endpoints(&config).iter().any(|k| k == endpoint) {
        out::error(&format!("unknown endpoint `{endpoint}`; known: {}", known_endpoints(&config).join(", ")));
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    if !launcher.key_store().persists() {
        out::error(
            "OCTO_NO_KEYRING is set, so there is no key store to change; unset it, or set OCTO_KEYRING_FILE to keep keys in a file",
        );
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let keyring = launcher.credentials();
    match action {
        AuthAction::Set { .. } => {
            let key = if std::io::stdin().is_terminal() {
                rpassword::prompt_password(format!("API key for `{endpoint}` (input hidden): "))?
            } else {
                let mut s = String::new();
                std::io::stdin().read_to_string(&mut s)?;
                s
            };
            let key = key.trim();
            if key.is_empty() {
                out::error("no key given");
                return Ok(ExitCode::from(EXIT_USAGE));
            }
            match keyring.set(endpoint, key) {
                Ok(()) => {
                    out::status(&format!(
                        "stored the key for `{endpoint}` in {}",
                        launcher.key_store().describe()
                    ));
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    out::error(&e.to_string());
                    Ok(ExitCode::from(EXIT_ERROR))
                }
            }
        }
        AuthAction::Remove { .. } => match keyring.remove(endpoint) {
            Ok(true) => {
                out::status(&format!("removed the key for `{endpoint}`"));
                Ok(ExitCode::SUCCESS)
            }
            Ok(false) => {
                out::status(&format!("no key was stored for `{endpoint}`"));
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                out::error(&e.to_string());
                Ok(ExitCode::from(EXIT_ERROR))
            }
        },
    }
}

/// `octo doctor`: read-only checks, one line each.
pub async fn doctor(launcher: &Launcher, cli: &Cli) -> anyhow::Result<ExitCode> {
    let mut ok = true;
    let mut line = |good: bool, text: String| {
        ok &= good;
        out::stdout(&format!("{} {text}\n", if good { "ok  " } else { "FAIL" }));
    };
    let config = match load(launcher, cli) {
        Ok(c) => {
            let files = if c.files.is_empty() {
                "none (defaults)".to_owned()
            } else {
                c.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ")
            };
            line(true, format!("configuration: {files}"));
            c
        }
        Err(e) => {
            line(false, format!("configuration: {e}"));
            return Ok(ExitCode::from(EXIT_ERROR));
        }
    };
    // Hooks: a bad matcher or an unknown event is a warning at load; a settings file that is not
    // JSON a notice.
    let ws = launcher.workspace(cli.workspace.as_deref())?;
    let user_home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let (hooks, hook_notes) = octo_app::hooks::load(&config, &ws, user_home.as_deref());
    let hook_warnings: Vec<&String> =
        config.warnings.iter().filter(|w| w.contains("hooks")).chain(hook_notes.iter()).collect();
    if hook_warnings.is_empty() {
        line(
            true,
            format!("hooks: {} configured, valid", hooks.iter().map(|(_, m)| m.hooks.len()).sum::<usize>()),
        );
    } else {
        for w in hook_warnings {
            line(false, format!("hooks: {w}"));
        }
    }
    sandbox_lines(&config, &ws, user_home.as_deref(), &mut line);
    for (good, text) in octo_app::lsp::doctor_lines(&config.lsp) {
        line(good, text);
    }
    match octo_app::tools::check_rules(&config.rules, launcher.home()) {
        Ok(()) => line(true, "permission rules: valid".to_owned()),
        Err(e) => line(false, format!("permission rules: {e}")),
    }
    let keys = launcher.key_store();
    match launcher.credentials().get("octo-doctor-probe") {
        Ok(_) if keys.persists() => out::stdout(&format!("ok   keys: {} is available\n", keys.describe())),
        Ok(_) => out::stdout(&format!("warn keys: {}\n", keys.describe())),
        Err(e) => out::stdout(&format!("warn keys: {e}\n")),
    };
    // Chat channels: whether their secrets are there (no network: `octo serve` checks them).
    for spec in &config.channels {
        let missing: Vec<String> = spec
            .secrets()
            .iter()
            .filter_map(|s| s.read(launcher.env(), launcher.credentials()).err().map(|e| e.to_string()))
            .collect();
        let what = format!("channel `{}` ({:?}, {} allowed)", spec.name, spec.kind, spec.allow.len());
        if missing.is_empty() {
            line(true, format!("{what}: secrets present"));
        } else {
            out::stdout(&format!("warn {what}: {}\n", missing.join("; ")));
        }
    }
    match resolve(&config, None, launcher.credentials(), launcher.env()) {
        Ok(r) => {
            let key = match &r.key_source {
                Some(KeySource::Keyring) => "key from the keyring".to_owned(),
                Some(KeySource::Env(v)) => format!("key from {v}"),
                None => "no key (none needed)".to_owned(),
            };
            line(true, format!("endpoint: {} at {} ({key})", r.label(), r.base_url));
            match probe(&r).await {
                Ok(m) => line(true, format!("reachable: {m}")),
                Err(m) => line(false, format!("reachable: {m}")),
            }
        }
        Err(e) => line(false, format!("endpoint: {e}")),
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(EXIT_ERROR) })
}

/// `octo doctor`'s sandbox lines: which one and how, and each promise it cannot hold here.
fn sandbox_lines(
    config: &octo_app::config::Config,
    ws: &std::path::Path,
    user_home: Option<&std::path::Path>,
    line: &mut dyn FnMut(bool, String),
) {
    let simulate = std::env::var("OCTO_SANDBOX_SIMULATE").ok();
    let homes: Vec<std::path::PathBuf> =
        user_home.map(std::path::Path::to_path_buf).into_iter().chain([config.home.clone()]).collect();
    let secrets =
        octo_app::Home::new(&config.home).secrets(user_home.map(std::path::Path::to_path_buf), None);
    let (output, quarantine) = (std::env::temp_dir(), config.home.join("quarantine").join("doctor"));
    let places = octo_app::sandbox::Places { output: &output, quarantine: &quarantine, secrets: &secrets };
    let (sandbox, _) =
        octo_app::sandbox::build(&config.sandbox, ws, places, &homes, simulate.as_deref(), &[]);
    let text = format!("sandbox: {}", sandbox.describe());
    match sandbox.unavailable() {
        None => line(true, text),
        Some(_) if config.sandbox.required => line(false, text),
        Some(_) => {
            out::stdout(&format!("warn {text}\n"));
        }
    }
    // With the sandbox off or unavailable, what depends on it is said not to hold.
    for p in sandbox.promises() {
        if p.held {
            line(true, format!("sandbox holds: {} ({})", p.what, p.how));
        } else {
            out::stdout(&format!("warn sandbox does not hold here: {} ({})\n", p.what, p.how));
        }
    }
    if sandbox.is_active() {
        if let Some(why) = sandbox.accept_edits_gap() {
            out::stdout(&format!("warn sandbox: accept-edits asks before running commands here: {why}\n"));
        }
    }
}

/// `octo sessions [--all] [rm ID | export ID]`.
pub fn sessions(
    launcher: &Launcher,
    cli: &Cli,
    all: bool,
    action: Option<&SessionsAction>,
) -> anyhow::Result<ExitCode> {
    let store = launcher.sessions();
    let ws = launcher.workspace(cli.workspace.as_deref()).unwrap_or_default();
    let pick = |id: &str| -> Result<String, String> {
        match store.find(id, None).map_err(|e| e.to_string())? {
            Found::One(s) => Ok(s.id),
            Found::Several(v) => Err(format!("`{id}` matches {} sessions; give a longer id prefix", v.len())),
            Found::None => Err(format!("no session matches `{id}`")),
        }
    };
    match action {
        Some(SessionsAction::Rm { id }) => {
            // Deleting takes an id (or a unique prefix of one), never `last` or a title match.
            let by_id = |q: &str| -> Result<String, String> {
                let q = q.trim();
                let hits: Vec<String> = match store.list(None) {
                    Ok(l) => {
                        l.into_iter().map(|s| s.id).filter(|i| !q.is_empty() && i.starts_with(q)).collect()
                    }
                    Err(e) => return Err(e.to_string()),
                };
                match hits.as_slice() {
                    [one] => Ok(one.clone()),
                    [] => Err(format!("no session id starts with `{q}` (see `octo sessions --all`)")),
                    more => Err(format!("`{q}` matches {} session ids; give a longer prefix", more.len())),
                }
            };
            match by_id(id).and_then(|id| store.remove(&id).map(|()| id).map_err(|e| e.to_string())) {
                Ok(id) => {
                    out::status(&format!("removed session {id}"));
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    out::error(&e);
                    Ok(ExitCode::from(EXIT_USAGE))
                }
            }
        }
        Some(SessionsAction::Export { id }) => {
            match pick(id).and_then(|id| store.export_markdown(&id).map_err(|e| e.to_string())) {
                Ok(md) => {
                    // A transcript is a document: exact when written to a file or a pipe, made
                    // inert on a terminal.
                    let md = if std::io::stdout().is_terminal() { visible(&md) } else { md };
                    out::stdout(&md);
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    out::error(&e);
                    Ok(ExitCode::from(EXIT_USAGE))
                }
            }
        }
        None => {
            let list = match store.list(if all { None } else { Some(&ws) }) {
                Ok(l) => l,
                Err(e) => {
                    out::error(&e.to_string());
                    return Ok(ExitCode::from(EXIT_ERROR));
                }
            };
            let now = now();
            if list.is_empty() {
                out::status(if all {
                    "no saved sessions"
                } else {
                    "no saved sessions in this directory (octo sessions --all lists every directory's)"
                });
                return Ok(ExitCode::SUCCESS);
            }
            let width = crate::layout::stdout_width();
            if all {
                let mut dirs: Vec<&std::path::Path> = list.iter().map(|s| s.cwd.as_path()).collect();
                dirs.sort();
                dirs.dedup();
                for d in dirs {
                    out::stdout(&format!("{}\n", d.display()));
                    for s in list.iter().filter(|s| s.cwd == d) {
                        out::stdout(&format!(
                            "{}\n",
                            crate::layout::fit(&format!("  {}", visible(&s.line(now))), width)
                        ));
                    }
                }
            } else {
                for s in &list {
                    out::stdout(&format!("{}\n", crate::layout::fit(&visible(&s.line(now)), width)));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
