//! What the model is told when octo moved away prompt or agent files a command created.

use std::path::PathBuf;

/// What the model is told about prompt or agent files its command created and octo moved away.
pub(super) fn note(undone: &[(PathBuf, Option<PathBuf>)]) -> String {
    let names: Vec<String> = undone
        .iter()
        .map(|(p, to)| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            match to {
                Some(to) => format!("{name} (kept in {})", to.display()),
                None => format!("{name} (removed)"),
            }
        })
        .collect();
    format!(
        "[octo moved away what the command created at the workspace's root: {}. Commands may not create \
         prompt or agent files, which later sessions read; write such a file with a file tool (the user is \
         asked) if it is really wanted.]",
        names.join(", ")
    )
}
