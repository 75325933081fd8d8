//! What the conversation already holds from outside the workspace, and which hosts the user
//! named: the two facts that decide whether a fetch to a new host asks in auto mode.
//!
//! A repository file can tell the model to read something outside the workspace and send it to
//! a host of the attacker's in a URL. Auto mode lets reads and fetches run without asking, so
//! once the conversation holds anything read from outside the workspace (a file tool's read) or
//! from a web page that is neither a documentation host nor one the user named, a fetch to a host
//! that is none of those — nor allowed by a rule or said yes to earlier — asks, once per host.
//! Before that, auto mode fetches as it always did; a host the user's own prompt names never
//! asks, so "read the docs at example.com" keeps running by itself.

use super::target::Target;
use octo_agent::{PermissionQuery, Subject};
use octo_tools::web::host::HostKind;
use std::collections::HashSet;
use std::sync::Mutex;

/// The session's record.
#[derive(Debug, Default)]
pub(crate) struct Taint {
    /// The first thing read from outside, said as "after …" reads ("reading /etc/hosts").
    why: Mutex<Option<String>>,
    /// Hosts named in the user's own prompts (a subdomain of one counts as named).
    named: Mutex<HashSet<String>>,
}

impl Taint {
    /// Why fetches to new hosts now ask, if they do.
    pub fn why(&self) -> Option<String> {
        self.why.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Notes that `q`, about to run, brings outside content into the conversation.
    pub fn note_call(&self, q: &PermissionQuery<'_>, t: &Target) {
        let brought = match (&q.meta.subject, &t.path, &t.url) {
            (Subject::Path { .. }, Some(p), _) if q.meta.read_only && !p.inside => {
                Some(format!("reading {} outside the workspace", p.real.display()))
            }
            (Subject::Url { .. }, _, Some(u)) => match (&u.kind, u.host.as_deref()) {
                (HostKind::Docs | HostKind::Private(_), _) => None,
                (HostKind::Public, Some(h)) if self.named_by_user(h) => None,
                (HostKind::Public, h) => Some(format!("a page from {}", h.unwrap_or("an unnamed host"))),
            },
            _ => None,
        };
        if let Some(b) = brought {
            self.why.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_or_insert(b);
        }
    }

    /// Takes note of the hosts the user's own text names (`https://example.com/x`,
    /// `docs.example.com`).
    pub fn note_user_text(&self, text: &str) {
        let mut named = self.named.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        named.extend(hosts_in(text));
    }

    /// Whether the user named `host` (or a domain it is under).
    pub fn named_by_user(&self, host: &str) -> bool {
        let named = self.named.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        named.iter().any(|n| host == n || host.strip_suffix(n.as_str()).is_some_and(|sub| sub.ends_with('.')))
    }
}

/// The first host `command` names that could carry the conversation off: not a documentation
/// or private host, not named by the user, not `known` (said yes to before).
pub(crate) fn new_host(taint: &Taint, command: &str, known: impl Fn(&str) -> bool) -> Option<String> {
    hosts_in(command).into_iter().find(|h| {
        let kind = octo_tools::web::host::parse(&format!("https://{h}/"))
            .map_or(HostKind::Public, |u| octo_tools::web::host::classify(&u));
        kind == HostKind::Public && !taint.named_by_user(h) && !known(h)
    })
}

/// Endings of file names a prompt mentions far more often than a domain under that top-level
/// domain (`main.rs`, `README.md`): such a word does not name a host.
const FILE_ENDINGS: &[&str] = &[
    "rs", "md", "py", "js", "ts", "go", "sh", "rb", "pl", "kt", "cc", "cpp", "hpp", "txt", "toml", "json",
    "yaml", "yml", "lock", "java", "css", "html", "sql", "log", "zip", "tar", "gz", "cfg", "ini", "mk",
];

/// The host names in `text`: those of URLs, and words shaped like a domain (two or more labels,
/// the last all letters).
pub(crate) fn hosts_in(text: &str) -> Vec<String> {
    let trim = |c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-');
    text.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '<' | '>' | '(' | ')' | ','))
        .filter_map(|word| {
            if word.contains("://") {
                return octo_tools::web::host::parse(word).as_ref().and_then(octo_tools::web::host::host_of);
            }
            let w = word.trim_matches(trim).trim_end_matches('.').to_ascii_lowercase();
            let w = w.split('/').next().unwrap_or_default();
            let labels: Vec<&str> = w.split('.').collect();
            let shaped = labels.len() >= 2
                && labels
                    .iter()
                    .all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
                && labels
                    .last()
                    .is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()));
            let file = labels.last().is_some_and(|ext| FILE_ENDINGS.contains(ext));
            (shaped && !file).then(|| w.to_owned())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_found_in_urls_and_bare_domains_but_not_in_file_names_of_prose() {
        let found =
            hosts_in("read https://Docs.Example.com/guide?x=1 and api.test.dev, not notes, main.rs or v1.2");
        assert_eq!(found, ["docs.example.com", "api.test.dev"]);
        let t = Taint::default();
        t.note_user_text("see example.org/spec");
        assert!(t.named_by_user("example.org") && t.named_by_user("cdn.example.org"));
        assert!(!t.named_by_user("evilexample.org") && !t.named_by_user("example.org.evil.io"));
    }
}
