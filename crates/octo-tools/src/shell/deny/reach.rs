//! What a word reaches: secret locations named in it (also through a glob, a symlink or a
//! computed path), `/proc` files of other processes, and cloud metadata services.

use super::verdict::{Context, Verdict};
use super::words::glob_base;
use crate::secrets::Secret;
use crate::shell::syntax::{self, Word};
use std::path::{Path, PathBuf};

/// What an argument (or an assignment's value) reaches: secret locations named in it — the
/// whole word, after `--opt=`, `key=`, curl's `@`, a short option's glued value (`-T/path`), or
/// from its first `/` — files a glob in it matches, and addresses of cloud metadata services.
pub(super) fn argument(a: &Word, cwd: &Path, ctx: &Context<'_>) -> Verdict {
    if a.dynamic {
        return dynamic_path(a, ctx);
    }
    let mut verdict = Verdict::Run;
    if let Some(why) = crate::web::host::metadata_service(&a.text) {
        verdict = verdict.worst(Verdict::Ask(format!("it reaches {why}")));
    }
    for text in candidates(&a.text) {
        if a.glob && text.contains(['*', '?', '[']) {
            // The part before the first glob character, then every file the glob matches.
            let fixed = glob_base(text);
            if !fixed.is_empty() {
                verdict = verdict.worst(secret(&syntax::resolve(cwd, &fixed), ctx));
            }
            for p in expand_glob(cwd, text) {
                verdict = verdict.worst(secret(&p, ctx));
            }
        } else {
            verdict = verdict.worst(secret(&syntax::resolve(cwd, text), ctx));
        }
        if matches!(verdict, Verdict::Refuse(_)) {
            break;
        }
    }
    verdict
}

/// The parts of a word that may name a path.
fn candidates(text: &str) -> Vec<&str> {
    let mut out = vec![text.strip_prefix('@').unwrap_or(text)];
    if let Some((_, v)) = text.split_once('=') {
        out.push(v.strip_prefix('@').unwrap_or(v));
    }
    if let Some(i) = text.find('@') {
        out.push(&text[i + 1..]);
    }
    if text.starts_with('-') && !text.starts_with("--") && text.len() > 2 {
        let v = &text[2..];
        out.push(v.strip_prefix('@').or_else(|| v.strip_prefix('=')).unwrap_or(v));
    }
    if let Some(i) = text.find('/').filter(|i| *i > 0) {
        out.push(&text[i..]);
    }
    out.retain(|t| !t.is_empty() && (!t.starts_with('-') || t.contains('/')));
    out.sort_unstable();
    out.dedup();
    out
}

/// A word only partly known: `/proc/$PID/environ` is refused, `/proc/$PID/$F` and a word that
/// mentions a secret location (`$X/.ssh/id_rsa`) are asked about.
pub(super) fn dynamic_path(a: &Word, ctx: &Context<'_>) -> Verdict {
    let t = a.text.as_str();
    if t.contains("/proc/") || t.starts_with("proc/") {
        if t.contains("environ") || t.ends_with("/mem") || t.contains("/mem/") {
            return Verdict::Refuse("reading a process's environment or memory (`/proc/…/environ`)".into());
        }
        // The file name itself is computed: it could be `environ`.
        if t.ends_with('/') {
            return Verdict::Ask("a `/proc` path only known when the command runs".into());
        }
    }
    match ctx.secrets.mentions(t) {
        Some(what) => Verdict::Ask(format!("it names {what} (a secret location) in a computed path")),
        None => Verdict::Run,
    }
}

/// The files a glob matches, as the shell would expand it (bounded: a few thousand entries
/// looked at).
fn expand_glob(cwd: &Path, pattern: &str) -> Vec<PathBuf> {
    const BUDGET: usize = 4096;
    let full = syntax::resolve(cwd, pattern);
    let mut found = vec![PathBuf::from("/")];
    let mut looked = 0;
    for part in full.components().skip(1) {
        let part = part.as_os_str().to_string_lossy();
        let mut next = Vec::new();
        if part.contains(['*', '?', '[']) {
            let Ok(glob) = globset::GlobBuilder::new(&part).literal_separator(true).build() else {
                return Vec::new();
            };
            let m = glob.compile_matcher();
            for dir in &found {
                let Ok(entries) = std::fs::read_dir(dir) else { continue };
                for e in entries.flatten() {
                    looked += 1;
                    if looked > BUDGET {
                        return next;
                    }
                    if m.is_match(e.file_name()) {
                        next.push(dir.join(e.file_name()));
                    }
                }
            }
        } else {
            next = found.iter().map(|d| d.join(&*part)).collect();
        }
        found = next;
        if found.is_empty() {
            break;
        }
    }
    found
}

/// Whether `path` is a secret location, and how grave touching it is.
pub(super) fn secret(path: &Path, ctx: &Context<'_>) -> Verdict {
    let found = ctx.secrets.check(path).or_else(|| {
        // Through a symlink, too.
        let real = crate::path::real_path(path);
        (real != path).then(|| ctx.secrets.check(&real)).flatten()
    });
    match found {
        Some(Secret::Process(what)) => Verdict::Refuse(format!("reading {what} (another process's secrets)")),
        Some(Secret::EnvFile(name)) => {
            Verdict::Caution(format!("it names {name}, which usually holds secrets"))
        }
        Some(s) => Verdict::Ask(format!("it touches {} (a secret location)", s.describe())),
        None => Verdict::Run,
    }
}
