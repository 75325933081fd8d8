//! The verdict on a whole command line: each simple command in it, in the order a shell runs
//! them, judged by its redirections, its program, the scripts it runs inside it and its
//! arguments — the graver verdict wins.

use super::inner::{env_split, inner_script, MAX_DEPTH};
use super::interp;
use super::kill::kills_octo;
use super::reach::{argument, dynamic_path, secret};
use super::rm;
use super::system::{destroys_system, is_device};
use super::verdict::{Context, Verdict};
use super::words::{basename, strip_wrappers, SHELLS};
use crate::secrets::Secrets;
use crate::shell::syntax::{self, Simple, Word};
use std::path::{Path, PathBuf};

/// What octo decides about `command` run in `ctx`.
pub fn check(command: &str, ctx: &Context<'_>) -> Verdict {
    check_at(command, ctx, ctx.cwd, 0)
}

/// Why `command` is refused outright (run in the current directory by the user of `$HOME`), or
/// `None` when it is not.
pub fn hard_denied(command: &str) -> Option<String> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    match check(command, &Context { cwd: &cwd, secrets: &Secrets::from_env() }) {
        Verdict::Refuse(why) => Some(why),
        _ => None,
    }
}

fn check_at(command: &str, ctx: &Context<'_>, cwd: &Path, depth: usize) -> Verdict {
    let home = ctx.secrets.home();
    let script = syntax::parse(command, cwd, home);
    if !script.fork_bombs.is_empty() {
        return Verdict::Refuse("a fork bomb".into());
    }
    if script.too_deep {
        return Verdict::Ask("it nests deeper than octo reads".into());
    }
    if script.commands.is_empty() && !command.trim().is_empty() && script.error {
        return Verdict::Ask("octo could not read this command's syntax".into());
    }
    let mut verdict = Verdict::Run;
    for c in &script.commands {
        verdict = verdict.worst(simple(c, ctx, depth));
        if matches!(verdict, Verdict::Refuse(_)) {
            break;
        }
    }
    verdict
}

/// The verdict on one simple command; `depth` counts the inner scripts it sits in.
fn simple(c: &Simple, ctx: &Context<'_>, depth: usize) -> Verdict {
    if let Some(why) = device_redirect(c) {
        return Verdict::Refuse(why);
    }
    let mut verdict = redirects(c, ctx);
    for a in &c.assignments {
        verdict = verdict.worst(argument(a, &c.cwd, ctx));
    }
    if let Some(inner) = env_split(&c.words) {
        return verdict.worst(nested(&inner, ctx, &c.cwd, depth));
    }
    let words = strip_wrappers(&c.words);
    let Some((prog, args)) = words.split_first() else { return verdict };
    if prog.dynamic {
        return verdict.worst(Verdict::Ask(
            "the program to run is only known when the command runs (a variable, `$(…)` or backticks)".into(),
        ));
    }
    verdict = verdict.worst(runs_inside(c, words, ctx, depth));
    let name = basename(&prog.text);
    if let Some(why) = refused(name, args, &c.cwd, ctx.secrets.home()) {
        return Verdict::Refuse(why);
    }
    if let Some(code) = interp::one_liner(name, args) {
        if let Some(why) = interp::destroys_tree(&code) {
            return Verdict::Refuse(why);
        }
        for inner in interp::shell_commands(&code) {
            verdict = verdict.worst(nested(&inner, ctx, &c.cwd, depth));
        }
    }
    verdict = verdict.worst(via_xargs(c, words, name));
    if name == "rm" && rm::unknown_target(c, args) {
        verdict = verdict.worst(Verdict::Ask(
            "`rm -r` on a target only known when the command runs (a computed path, or after `cd` to one)"
                .into(),
        ));
    }
    // `echo` and `printf` print their words; they open no file.
    if !matches!(name, "echo" | "printf") {
        for a in args {
            verdict = verdict.worst(argument(a, &c.cwd, ctx));
        }
    }
    verdict
}

/// Why a redirection of `c` is refused: the first one writing onto a device.
fn device_redirect(c: &Simple) -> Option<String> {
    c.redirects
        .iter()
        .filter(|r| !r.op.starts_with("<<") && !r.target.dynamic && r.op.contains('>'))
        .map(|r| syntax::resolve(&c.cwd, &r.target.text))
        .find(|path| is_device(path))
        .map(|path| format!("redirecting output onto the device {}", path.display()))
}

/// What the files `c` redirects from or to reach (here-documents and here-strings are text, not
/// files).
fn redirects(c: &Simple, ctx: &Context<'_>) -> Verdict {
    let mut verdict = Verdict::Run;
    for r in c.redirects.iter().filter(|r| !r.op.starts_with("<<")) {
        let reach = if r.target.dynamic {
            dynamic_path(&r.target, ctx)
        } else {
            secret(&syntax::resolve(&c.cwd, &r.target.text), ctx)
        };
        verdict = verdict.worst(reach);
    }
    verdict
}

/// The verdict on an inner script, `depth` scripts deep already.
fn nested(inner: &str, ctx: &Context<'_>, cwd: &Path, depth: usize) -> Verdict {
    if depth >= MAX_DEPTH {
        return Verdict::Ask("scripts nested too deeply to read".into());
    }
    check_at(inner, ctx, cwd, depth + 1)
}

/// The verdict on the script `words` (the program and its arguments) run inside `c`, if any.
fn runs_inside(c: &Simple, words: &[Word], ctx: &Context<'_>, depth: usize) -> Verdict {
    match inner_script(c, words) {
        Some(Some(inner)) => nested(&inner, ctx, &c.cwd, depth),
        Some(None) => Verdict::Ask(
            "it runs a script that is only known when the command runs (decoded, downloaded or computed)"
                .into(),
        ),
        None => Verdict::Run,
    }
}

/// Why program `name` run with `args` in `cwd` is refused outright.
fn refused(name: &str, args: &[Word], cwd: &Path, home: &Path) -> Option<String> {
    match name {
        "rm" => rm::dangerous_rm(args, cwd, home),
        "find" => rm::dangerous_find(args, cwd, home),
        "kill" | "pkill" | "killall" => kills_octo(name, args),
        _ => destroys_system(name, args, cwd),
    }
}

/// `xargs` appends what it reads to the command: for a program that deletes, kills or runs a
/// script, a target only known at run time.
fn via_xargs(c: &Simple, words: &[Word], name: &str) -> Verdict {
    let wrappers = &c.words[..c.words.len() - words.len()];
    let xargs = wrappers.iter().any(|w| !w.dynamic && basename(&w.text) == "xargs");
    if xargs
        && (matches!(name, "rm" | "find" | "kill" | "pkill" | "killall" | "eval" | "dd")
            || SHELLS.contains(&name))
    {
        return Verdict::Ask(format!("`xargs {name}` takes its arguments from its input"));
    }
    Verdict::Run
}
