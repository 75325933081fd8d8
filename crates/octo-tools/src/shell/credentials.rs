//! Which of the user's secret places a command needs: what the question before running it
//! outside the sandbox names (a `git push` over SSH needs `~/.ssh`), and what the note after a
//! sandboxed command failed for want of one says.

/// The secret place `command` most likely needs, by the programs it runs (`None`: none known).
pub fn needed(command: &str) -> Option<&'static str> {
    for part in command.split([';', '&', '|', '\n', '(', ')']) {
        let mut words = part.split_whitespace().filter(|w| !w.contains('=') || w.starts_with('-'));
        let Some(first) = words.next() else { continue };
        let program = first.rsplit('/').next().unwrap_or(first);
        let rest: Vec<&str> = words.collect();
        let sub = rest.iter().find(|w| !w.starts_with('-')).copied().unwrap_or("");
        let place = match (program, sub) {
            ("ssh" | "scp" | "sftp" | "rsync" | "ssh-add", _) => Some("~/.ssh"),
            ("git", _)
                if rest.iter().any(|w| {
                    matches!(*w, "push" | "pull" | "fetch" | "clone" | "ls-remote" | "submodule" | "remote")
                }) =>
            {
                Some("~/.ssh (and ~/.git-credentials)")
            }
            ("aws", _) => Some("~/.aws"),
            ("gcloud" | "gsutil" | "bq", _) => Some("~/.config/gcloud"),
            ("az", _) => Some("~/.azure"),
            ("kubectl" | "helm" | "k9s", _) => Some("~/.kube"),
            ("docker" | "podman", "login" | "push" | "pull") => Some("~/.docker/config.json"),
            ("gh", _) => Some("~/.config/gh"),
            ("npm" | "pnpm" | "yarn", "publish" | "login" | "whoami") => Some("~/.npmrc"),
            ("cargo", "publish" | "login" | "owner" | "yank") => Some("~/.cargo/credentials.toml"),
            ("twine", _) => Some("~/.pypirc"),
            ("gpg" | "gpg2", _) => Some("~/.gnupg"),
            ("vault", _) => Some("~/.vault-token"),
            ("psql" | "pg_dump", _) => Some("~/.pgpass"),
            _ => None,
        };
        if place.is_some() {
            return place;
        }
    }
    None
}

/// Whether a failed command's output reads as a credential it could not find (an SSH key, a
/// token file).
pub fn missing(output: &str) -> bool {
    const SIGNS: &[&str] = &[
        "permission denied (publickey",
        "could not read from remote repository",
        "host key verification failed",
        "could not read username",
        "no such identity",
        "unable to locate credentials",
        "you must be logged in",
        "need to authenticate",
        "authentication required",
        "not logged in",
        "no credentials",
    ];
    let lower = output.to_lowercase();
    SIGNS.iter().any(|s| lower.contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_place_a_command_needs() {
        assert_eq!(needed("git push origin main"), Some("~/.ssh (and ~/.git-credentials)"));
        assert_eq!(needed("cd repo && git -C . push"), Some("~/.ssh (and ~/.git-credentials)"));
        assert_eq!(needed("GIT_SSH_COMMAND=x ssh host true"), Some("~/.ssh"));
        assert_eq!(needed("aws s3 ls"), Some("~/.aws"));
        assert_eq!(needed("npm publish"), Some("~/.npmrc"));
        assert_eq!(needed("git status"), None);
        assert_eq!(needed("npm test"), None);
        assert!(missing(
            "git@github.com: Permission denied (publickey).\r\nfatal: Could not read from remote repository."
        ));
        assert!(!missing("error: 2 tests failed"));
    }
}
