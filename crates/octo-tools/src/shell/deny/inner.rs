//! The scripts a command runs inside it: `sh -c`, `eval`, `source`, a shell fed by a pipeline, a
//! here-string or a here-document, and `env -S`.

use super::words::{basename, strip_wrappers, SHELLS};
use crate::shell::syntax::{self, Feed, Simple, Word};
use std::path::Path;

/// How deep inner scripts (`sh -c 'sh -c …'`) are followed.
pub(super) const MAX_DEPTH: usize = 4;

/// The first answer `f` gives for a simple command of `command` run in `cwd` (its words behind
/// their wrappers), the scripts it runs inside included, as deep as [`MAX_DEPTH`].
pub(super) fn first_command<T>(
    command: &str,
    cwd: &Path,
    home: &Path,
    f: &dyn Fn(&Simple, &[Word]) -> Option<T>,
) -> Option<T> {
    fn at<T>(
        command: &str,
        cwd: &Path,
        home: &Path,
        depth: usize,
        f: &dyn Fn(&Simple, &[Word]) -> Option<T>,
    ) -> Option<T> {
        for c in &syntax::parse(command, cwd, home).commands {
            let words = strip_wrappers(&c.words);
            if let Some(found) = f(c, words) {
                return Some(found);
            }
            if depth < MAX_DEPTH {
                if let Some(found) =
                    inner_script(c, words).flatten().and_then(|s| at(&s, &c.cwd, home, depth + 1, f))
                {
                    return Some(found);
                }
            }
        }
        None
    }
    at(command, cwd, home, 0, f)
}

/// The script a shell, `eval` or `source` will run: `Some(Some(text))` when it is known before
/// running, `Some(None)` when it is only known at run time, `None` when the command runs no
/// inner script.
pub(super) fn inner_script(c: &Simple, words: &[Word]) -> Option<Option<String>> {
    let (prog, args) = words.split_first()?;
    let name = basename(&prog.text);
    let known = |w: &Word| (!w.dynamic).then(|| w.text.clone());
    if name == "eval" {
        return Some(
            (!args.iter().any(|a| a.dynamic))
                .then(|| args.iter().map(|a| a.text.as_str()).collect::<Vec<_>>().join(" ")),
        );
    }
    if matches!(name, "source" | ".") {
        let file = args.first()?;
        return (file.dynamic || file.text == "/dev/stdin" || c.process_substitution).then_some(None);
    }
    if !SHELLS.contains(&name) {
        return None;
    }
    // `sh -c SCRIPT`, also `sh -ec`, `bash -lc`, `bash -ce`, `bash -c -- SCRIPT`: with `c` in
    // any option cluster, the script is the first operand.
    let mut command_mode = false;
    let mut operands = args.iter().skip_while(|a| {
        let t = a.text.as_str();
        if a.dynamic || t == "--" {
            return t == "--";
        }
        let option = (t.starts_with('-') || t.starts_with('+')) && t.len() > 1;
        if option && !t.starts_with("--") && t.contains('c') {
            command_mode = true;
        }
        option
    });
    let first = operands.next();
    drop(operands);
    if command_mode {
        return Some(first.and_then(known));
    }
    // A script file: `bash script.sh`, `bash <(curl …)`.
    if let Some(file) = args.iter().find(|a| !a.text.starts_with('-') || a.dynamic) {
        return (file.dynamic || c.process_substitution).then_some(None);
    }
    // Standard input: a here-string or here-document, or what a pipeline feeds it.
    if let Some(r) = c.redirects.iter().find(|r| r.op == "<<<" || r.op.starts_with("<<")) {
        return Some(known(&r.target));
    }
    match &c.stdin {
        Feed::Static(text) => Some(Some(text.clone())),
        Feed::Dynamic => Some(None),
        Feed::None => None,
    }
}

/// `env -S 'a b c' d` (or `--split-string`) runs the split string as the command line.
pub(super) fn env_split(words: &[Word]) -> Option<String> {
    let pos = words.iter().position(|w| !w.dynamic && basename(&w.text) == "env")?;
    let rest = &words[pos + 1..];
    let mut i = 0;
    while i < rest.len() && rest[i].text.starts_with('-') {
        let t = rest[i].text.as_str();
        let (value, next) = if t == "-S" || t == "--split-string" {
            match rest.get(i + 1) {
                Some(w) if w.dynamic => return Some("\"$OCTO_UNKNOWN\"".into()),
                Some(w) => (w.text.clone(), i + 2),
                None => return None,
            }
        } else if let Some(v) = t.strip_prefix("--split-string=").or_else(|| t.strip_prefix("-S")) {
            if rest[i].dynamic {
                return Some("\"$OCTO_UNKNOWN\"".into());
            }
            (v.to_owned(), i + 1)
        } else {
            i += 1;
            continue;
        };
        let tail: Vec<&str> = rest[next..].iter().map(|w| w.text.as_str()).collect();
        return Some(if tail.is_empty() { value } else { format!("{value} {}", tail.join(" ")) });
    }
    None
}
