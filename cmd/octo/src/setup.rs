//! `octo setup`: from nothing to a working endpoint in one guided step. Interactive on a
//! terminal (provider, key, model, a test request); without questions when `--endpoint` is
//! given. Nothing is written until every step succeeded, so Ctrl-C or a failed test leaves the
//! configuration and the key store as they were.

use crate::exit::{EXIT_ERROR, EXIT_INTERRUPTED, EXIT_USAGE};
use crate::out;
use crate::sanitize::visible;
use octo_app::config::{EndpointConfig, Overrides};
use octo_app::setup::{
    endpoint_entry, list_models, providers, resolve_choice, try_endpoint, write_config, Provider,
};
use octo_app::Launcher;
use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

/// `octo setup`'s flags.
pub struct Args {
    pub endpoint: Option<String>,
    pub model: Option<String>,
    pub key_env: Option<String>,
    pub base_url: Option<String>,
    pub test: bool,
}

/// The user stopped answering (Ctrl-D, end of input).
struct Cancelled;

/// Asks on stderr, reads one line from stdin.
fn ask(question: &str) -> Result<String, Cancelled> {
    let mut err = std::io::stderr();
    let _ = write!(err, "{question}");
    let _ = err.flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => Err(Cancelled),
        Ok(_) => Ok(line.trim().to_owned()),
    }
}

fn cancelled() -> ExitCode {
    out::status("\nsetup cancelled; nothing was written");
    ExitCode::from(EXIT_INTERRUPTED)
}

/// Runs `octo setup`.
pub async fn run(launcher: &Launcher, args: Args) -> anyhow::Result<ExitCode> {
    let interactive =
        args.endpoint.is_none() && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if args.endpoint.is_none() && !interactive {
        out::error("octo setup needs a terminal to ask its questions, or --endpoint (and --key-env, --model) to run without them");
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    match wizard(launcher, &args, interactive).await {
        Ok(code) => Ok(code),
        Err(Cancelled) => Ok(cancelled()),
    }
}

/// Runs the wizard on a terminal when nothing is configured yet (the REPL's first run); returns
/// whether an endpoint was set up.
pub async fn first_run(launcher: &Launcher) -> bool {
    out::status("octo: no model endpoint is configured yet. Let's set one up (Ctrl-C to stop; nothing is written until the end).");
    let args = Args { endpoint: None, model: None, key_env: None, base_url: None, test: true };
    matches!(wizard(launcher, &args, true).await, Ok(code) if code == ExitCode::SUCCESS)
}

/// What the user picked: a provider, or (in builds with the engine) a model run inside octo.
enum Choice {
    Provider(Provider),
    #[cfg(feature = "local")]
    Local,
}

fn pick_provider(list: &[Provider], wanted: Option<&str>) -> Result<Option<Choice>, Cancelled> {
    #[cfg(feature = "local")]
    if wanted.is_some_and(|w| w.eq_ignore_ascii_case("local")) {
        return Ok(Some(Choice::Local));
    }
    if let Some(id) = wanted {
        return Ok(list.iter().find(|p| p.id.eq_ignore_ascii_case(id)).cloned().map(Choice::Provider));
    }
    // The recommended local model comes first: it needs no account, key or server.
    let first = usize::from(cfg!(feature = "local"));
    #[cfg(feature = "local")]
    {
        let r = octo_app::models::default_choice();
        out::status(&format!(
            "   1. local       {}, run inside octo: no key, no server; {} download, {} (recommended)",
            r.name,
            crate::models::size(r.approx_bytes),
            r.abilities()
        ));
    }
    for (i, p) in list.iter().enumerate() {
        let what = if p.local {
            format!("{} (on this machine, {})", p.display, p.base_url)
        } else if p.id == "custom" {
            "any OpenAI-compatible server (you give the URL)".to_owned()
        } else {
            p.display.to_owned()
        };
        out::status(&format!("  {:>2}. {:<11} {what}", i + 1 + first, p.id));
    }
    loop {
        let a = ask("provider (number or name): ")?;
        #[cfg(feature = "local")]
        if a == "1" || a.eq_ignore_ascii_case("local") {
            return Ok(Some(Choice::Local));
        }
        let found = a
            .parse::<usize>()
            .ok()
            .and_then(|n| list.get(n.wrapping_sub(1 + first)))
            .or_else(|| list.iter().find(|p| p.id.eq_ignore_ascii_case(&a)));
        match found {
            Some(p) => return Ok(Some(Choice::Provider(p.clone()))),
            None => out::error(&visible(&format!("`{a}` is not in the list"))),
        }
    }
}

async fn wizard(launcher: &Launcher, args: &Args, interactive: bool) -> Result<ExitCode, Cancelled> {
    match steps(launcher, args, interactive).await {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(Stop::Code(code)) => Ok(code),
        Err(Stop::Cancelled) => Err(Cancelled),
    }
}

/// Why the wizard stopped before the end.
enum Stop {
    /// Ctrl-C or a closed input.
    Cancelled,
    /// A problem the user was told of, with the exit code.
    Code(ExitCode),
}

impl From<Cancelled> for Stop {
    fn from(_: Cancelled) -> Self {
        Self::Cancelled
    }
}

/// The error shown, and the exit code.
fn stop(message: &str, code: u8) -> Stop {
    out::error(message);
    Stop::Code(ExitCode::from(code))
}

/// The wizard's steps: the configuration read, a provider, where its server is, the key, the
/// model, a test request, then everything written.
async fn steps(launcher: &Launcher, args: &Args, interactive: bool) -> Result<(), Stop> {
    let ws = std::env::current_dir().unwrap_or_default();
    let config = launcher.config(&ws, &Overrides::default()).map_err(|e| {
        stop(
            &format!("{e}\nfix the configuration file first; setup does not overwrite a file it cannot read"),
            EXIT_USAGE,
        )
    })?;
    let list = providers();
    let provider = match pick_provider(&list, args.endpoint.as_deref())? {
        Some(Choice::Provider(p)) => p,
        #[cfg(feature = "local")]
        Some(Choice::Local) => return local(launcher, &config, args, interactive).await,
        None => {
            let mut ids: Vec<&str> = list.iter().map(|p| p.id).collect();
            if cfg!(feature = "local") {
                ids.insert(0, "local");
            }
            let wanted = args.endpoint.clone().unwrap_or_default();
            return Err(stop(
                &format!("unknown endpoint `{wanted}`; choose one of {}", ids.join(", ")),
                EXIT_USAGE,
            ));
        }
    };
    let base_url = server_url(&provider, args, interactive)?;
    let (key_env, typed_key) = key(launcher, &provider, args, interactive)?;
    let entry: EndpointConfig = endpoint_entry(&provider, base_url.as_deref(), key_env.as_deref());
    let key = typed_key.as_deref();
    let model = match args.model.clone() {
        Some(m) => m,
        None => pick_model(launcher, &config, &provider, &entry, key, interactive).await?,
    };
    let resolved = resolve_choice(&config, provider.id, &entry, Some(&model), key, launcher.env())
        .map_err(|e| stop(&e.to_string(), EXIT_USAGE))?;
    if args.test {
        test(&resolved, interactive).await?;
    }
    // Everything checked: now write, the key first (a config naming a key that is nowhere would
    // fail on the next run).
    if let Some(k) = key {
        store_key(launcher, provider.id, k).map_err(|why| stop(&why, EXIT_ERROR))?;
    }
    let path = launcher.home().config_file();
    write_config(&path, provider.id, &model, &entry).map_err(|e| stop(&e.to_string(), EXIT_ERROR))?;
    out::status(&visible(&format!("set up {}:{model}; saved in {}", provider.id, path.display())));
    Ok(())
}

/// The local model: chosen from the ones octo knows (the recommended one by default), pulled
/// with a progress bar unless it is already there, tested, then made the default.
#[cfg(feature = "local")]
async fn local(
    launcher: &Launcher,
    config: &octo_app::config::Config,
    args: &Args,
    interactive: bool,
) -> Result<(), Stop> {
    use octo_app::models;
    let mut model = match args.model.clone() {
        Some(m) => m,
        None if interactive => pick_local()?,
        None => models::default_choice().name.to_owned(),
    };
    let installed = models::list(launcher.home()).into_iter().any(|m| m.name == model)
        || std::path::Path::new(&model).is_file();
    if !installed {
        let spec = models::spec(&model, None).map_err(|e| stop(&e.to_string(), EXIT_USAGE))?;
        crate::models::pull(launcher, &spec).await.map_err(|e| stop(&e.to_string(), EXIT_ERROR))?;
        // A URL names the file; the pulled model goes by the file's name.
        model = spec.name;
    }
    let entry = EndpointConfig::default();
    let resolved = resolve_choice(config, "local", &entry, Some(&model), None, launcher.env())
        .map_err(|e| stop(&e.to_string(), EXIT_USAGE))?;
    if args.test {
        test(&resolved, interactive).await?;
    }
    let path = launcher.home().config_file();
    write_config(&path, "local", &model, &entry).map_err(|e| stop(&e.to_string(), EXIT_ERROR))?;
    out::status(&visible(&format!("set up local:{model}; saved in {}", path.display())));
    Ok(())
}

/// Which of the models octo knows by name; Enter takes the recommended one.
#[cfg(feature = "local")]
fn pick_local() -> Result<String, Cancelled> {
    use octo_app::models::{default_choice, RECOMMENDED};
    for (i, r) in RECOMMENDED.iter().enumerate() {
        out::status(&format!(
            "  {:>2}. {:<20} {:>7}  {}",
            i + 1,
            r.name,
            crate::models::size(r.approx_bytes),
            r.abilities()
        ));
    }
    let d = default_choice().name;
    let a = ask(&format!("model [{d}]: "))?;
    Ok(match a.parse::<usize>().ok().and_then(|n| RECOMMENDED.get(n.wrapping_sub(1))) {
        Some(r) => r.name.to_owned(),
        None if a.is_empty() => d.to_owned(),
        None => a,
    })
}

/// Where the server is: asked for a local or custom endpoint, required for a custom one.
fn server_url(provider: &Provider, args: &Args, interactive: bool) -> Result<Option<String>, Stop> {
    let mut base_url = args.base_url.clone();
    if interactive && (provider.local || provider.id == "custom") && base_url.is_none() {
        let shown =
            if provider.base_url.is_empty() { String::new() } else { format!(" [{}]", provider.base_url) };
        let a = ask(&format!("server URL{shown}: "))?;
        base_url = Some(a).filter(|a| !a.is_empty());
    }
    if provider.id == "custom" && base_url.is_none() {
        return Err(stop("a custom endpoint needs its URL (--base-url https://host/v1)", EXIT_USAGE));
    }
    Ok(base_url)
}

/// The key: read from a variable (its name), or typed (kept in the key store at the end).
fn key(
    launcher: &Launcher,
    provider: &Provider,
    args: &Args,
    interactive: bool,
) -> Result<(Option<String>, Option<String>), Stop> {
    let mut key_env = args.key_env.clone();
    let mut typed_key = None;
    let needs_key = !provider.key_env.is_empty() || provider.id == "custom";
    if interactive && needs_key && key_env.is_none() {
        let var = provider.key_env;
        if !var.is_empty() && launcher.env()(var).is_some() {
            let a = ask(&format!("use the key in ${var}? [Y/n] "))?;
            if a.is_empty() || a.eq_ignore_ascii_case("y") {
                key_env = Some(var.to_owned());
            }
        }
        if key_env.is_none() {
            let prompt = if provider.id == "custom" { "API key (empty: none): " } else { "API key: " };
            let k = rpassword::prompt_password(prompt).map_err(|_| Cancelled)?;
            typed_key = Some(k.trim().to_owned()).filter(|k| !k.is_empty());
        }
    }
    if let Some(var) = &key_env {
        if launcher.env()(var).is_none() {
            return Err(stop(
                &format!("${var} is not set in this environment; set it and run setup again"),
                EXIT_USAGE,
            ));
        }
    }
    Ok((key_env, typed_key))
}

/// The model: from the endpoint's own list when it has one.
async fn pick_model(
    launcher: &Launcher,
    config: &octo_app::config::Config,
    provider: &Provider,
    entry: &EndpointConfig,
    key: Option<&str>,
    interactive: bool,
) -> Result<String, Stop> {
    let guess = Some(provider.default_model).filter(|m| !m.is_empty()).or(Some("probe"));
    let listed = match resolve_choice(config, provider.id, entry, guess, key, launcher.env()) {
        Ok(r) => list_models(&r).await.unwrap_or_else(|e| {
            out::status(&visible(&format!("  (could not list the models: {e})")));
            Vec::new()
        }),
        Err(_) => Vec::new(),
    };
    choose_model(provider, &listed, interactive)?
        .ok_or_else(|| stop("no model chosen; give one with --model", EXIT_USAGE))
}

/// One short request; when it fails, nothing is written unless the user says to save anyway.
async fn test(resolved: &octo_app::factory::Resolved, interactive: bool) -> Result<(), Stop> {
    out::status(&visible(&format!("testing {} …", resolved.label())));
    match try_endpoint(resolved).await {
        Ok(reply) => {
            out::status(&visible(&format!(
                "  it answered: {}",
                reply.trim().chars().take(80).collect::<String>()
            )));
            Ok(())
        }
        Err(e) => {
            out::error(&visible(&format!("  the test request failed: {e}")));
            let save = interactive && ask("save this setup anyway? [y/N] ")?.eq_ignore_ascii_case("y");
            if save {
                return Ok(());
            }
            out::status("nothing was written");
            Err(Stop::Code(ExitCode::from(EXIT_ERROR)))
        }
    }
}

fn choose_model(
    provider: &Provider,
    listed: &[String],
    interactive: bool,
) -> Result<Option<String>, Cancelled> {
    let default = Some(provider.default_model.to_owned())
        .filter(|m| !m.is_empty() && (listed.is_empty() || listed.iter().any(|l| l == m)))
        .or_else(|| listed.first().cloned());
    if !interactive {
        return Ok(default);
    }
    for (i, m) in listed.iter().enumerate().take(40) {
        out::status(&visible(&format!("  {:>2}. {m}", i + 1)));
    }
    if listed.len() > 40 {
        out::status(&format!("  … and {} more (type a name)", listed.len() - 40));
    }
    let shown = default.as_deref().map(|d| format!(" [{d}]")).unwrap_or_default();
    loop {
        let a = ask(&format!("model{shown}: "))?;
        if a.is_empty() {
            if default.is_some() {
                return Ok(default);
            }
            continue;
        }
        return Ok(Some(
            a.parse::<usize>().ok().and_then(|n| listed.get(n.wrapping_sub(1)).cloned()).unwrap_or(a),
        ));
    }
}

/// Keeps the key in the key store; where the OS has no keyring service, in `keys.json` (private)
/// in octo's home, which later runs then use.
fn store_key(launcher: &Launcher, endpoint: &str, key: &str) -> Result<(), String> {
    use octo_app::credentials::{CredentialStore, FileStore, KeyStore};
    if !launcher.key_store().persists() {
        return Err(
            "OCTO_NO_KEYRING is set, so the key cannot be kept; unset it, or use --key-env with a variable"
                .into(),
        );
    }
    match launcher.credentials().set(endpoint, key) {
        Ok(()) => {
            out::status(&format!("  key kept in {}", launcher.key_store().describe()));
            Ok(())
        }
        Err(e) if *launcher.key_store() == KeyStore::OsKeyring => {
            let file = launcher.home().key_file();
            FileStore::new(&file)
                .set(endpoint, key)
                .map_err(|e2| format!("could not keep the key: {e}; {e2}"))?;
            out::status(&visible(&format!(
                "  no keyring service here ({e}); key kept in {} (private)",
                file.display()
            )));
            Ok(())
        }
        Err(e) => Err(format!("could not keep the key: {e}")),
    }
}
