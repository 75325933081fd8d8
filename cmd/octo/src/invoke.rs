//! `/name args` for skills and custom commands, shared by the REPL and one-shot runs: the error
//! for an unknown command (with near matches), and the headless run (where nothing can say yes).

use crate::sanitize::visible;
use octo_app::skills::Prepared;
use octo_app::Session;

/// The error for `/word` that is no command, skill or custom command.
pub fn unknown(session: &Session, name: &str, builtin: &[&str]) -> String {
    let catalog = session.skills();
    if catalog.catalog().get(name.trim_start_matches('/')).is_some_and(|s| !s.user_invocable) {
        return visible(&format!(
            "{name} is a skill for the model only (user-invocable: false in its SKILL.md); ask for the task in words and the model loads it"
        ));
    }
    let skills: Vec<String> =
        catalog.catalog().iter().filter(|s| s.user_invocable).map(|s| format!("/{}", s.name)).collect();
    let near = octo_app::skill_files::near_matches(
        name,
        builtin.iter().copied().chain(skills.iter().map(String::as_str)),
    );
    let hint = match near.as_slice() {
        [] => String::new(),
        [one] => format!("; did you mean {one}?"),
        many => format!("; did you mean one of {}?", many.join(", ")),
    };
    visible(&format!(
        "unknown command {name}{hint} (/help lists commands, /skills lists skills and custom commands; to send \
         the text to the model, put a word before the slash)"
    ))
}

/// Runs `/name args` with nobody to ask (see [`octo_app::session::Skills::invoke_unattended`]); Ctrl-C stops the
/// running step (its process group killed) rather than killing octo. `None` when there is no
/// such skill or command.
pub async fn headless(session: &Session, name: &str, arg: &str) -> Option<Result<Prepared, String>> {
    let cancel = octo_app::CancellationToken::new();
    let finish = session.skills().invoke_unattended(name, arg, "in a headless run", cancel.clone());
    tokio::pin!(finish);
    loop {
        tokio::select! {
            r = &mut finish => return r.map(|r| r.map_err(|e| e.to_string())),
            _ = tokio::signal::ctrl_c() => cancel.cancel(),
        }
    }
}
