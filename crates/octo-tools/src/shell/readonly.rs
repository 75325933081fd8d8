//! Commands that only look: `git status`, `git diff`, `git log`, `git branch --show-current`,
//! `ls`, `cat` … — decided on the command as the shell would run it ([`super::syntax`]), every
//! simple command in it (pipelines, `&&`, substitutions), never by a prefix: no output
//! redirection to a file, no word only known at run time, and for `git` and `find` the
//! subcommand and options that change nothing. A skill's or command's `` !`…` `` line that only
//! looks runs without a grant, as Claude Code runs them.

use super::syntax::{self, Simple};
use std::path::Path;

/// Programs that never change anything whatever their arguments (reading files and the system).
const LOOKERS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "pwd",
    "echo",
    "printf",
    "grep",
    "rg",
    "egrep",
    "fgrep",
    "which",
    "type",
    "date",
    "file",
    "stat",
    "tree",
    "du",
    "df",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "whoami",
    "id",
    "uname",
    "true",
    "false",
    "test",
    "[",
    "sort",
    "uniq",
    "cut",
    "tr",
    "diff",
    "cmp",
    "comm",
    "nl",
    "less",
    "more",
    "jq",
    "env",
    "printenv",
    "hostname",
    "column",
    "fold",
    "rev",
    "tac",
    "od",
    "xxd",
    "hexdump",
    "md5sum",
    "sha1sum",
    "sha256sum",
];

/// `git` subcommands that only read (with the options below for the ones that can also write).
const GIT_LOOKERS: &[&str] = &[
    "status",
    "diff",
    "log",
    "show",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "blame",
    "describe",
    "shortlog",
    "cat-file",
    "grep",
    "reflog",
    "merge-base",
    "name-rev",
    "rev-list",
    "whatchanged",
    "count-objects",
];

/// Whether `command` only looks (see the module).
pub fn only_looks(command: &str, cwd: &Path, home: &Path) -> bool {
    // What the walker below does not model (a declaration, a test, a function's redirection)
    // could act where no word shows it: only a plain line can only look.
    if super::plain::parts(command).is_none() {
        return false;
    }
    let script = syntax::parse(command, cwd, home);
    if script.error || script.too_deep || !script.fork_bombs.is_empty() || script.commands.is_empty() {
        return false;
    }
    script.commands.iter().all(looks)
}

fn looks(c: &Simple) -> bool {
    if c.process_substitution || c.words.iter().any(|w| w.dynamic) || c.assignments.iter().any(|w| w.dynamic)
    {
        return false;
    }
    let writes = c.redirects.iter().any(|r| {
        r.op.contains('>') && !matches!(r.target.text.as_str(), "/dev/null" | "&1" | "&2" | "1" | "2")
    });
    if writes {
        return false;
    }
    let Some((prog, args)) = c.words.split_first() else { return c.assignments.is_empty() };
    let name = prog.text.rsplit('/').next().unwrap_or(&prog.text);
    let arg = |i: usize| args.get(i).map(|w| w.text.as_str());
    match name {
        "git" => git_looks(args.iter().map(|w| w.text.as_str()).collect()),
        "find" => !args.iter().any(|w| {
            matches!(
                w.text.as_str(),
                "-delete" | "-exec" | "-execdir" | "-ok" | "-okdir" | "-fprint" | "-fprintf" | "-fls"
            )
        }),
        "sed" => !args.iter().any(|w| w.text.starts_with("-i") || w.text == "--in-place"),
        "sort" => !args.iter().any(|w| w.text.starts_with("-o") || w.text.starts_with("--output")),
        "env" | "printenv" => {
            args.iter().all(|w| !w.text.contains('=')) && arg(0).is_none_or(|a| a.starts_with('-'))
        }
        n => LOOKERS.contains(&n),
    }
}

/// `git [-C dir] SUB …` that only reads; `branch`, `remote`, `tag`, `stash` and `config` only in
/// their listing forms.
fn git_looks(args: Vec<&str>) -> bool {
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        // Options before the subcommand; `-c key=value` would set configuration for the run
        // (an alias, a hook path): not a look.
        match args[i] {
            "-C" => i += 2,
            "--no-pager" | "--no-optional-locks" | "-P" => i += 1,
            _ => return false,
        }
    }
    let Some(sub) = args.get(i) else { return false };
    let rest = &args[i + 1..];
    let listing = |allowed: &[&str]| {
        rest.iter().all(|a| allowed.contains(a) || a.starts_with("--format") || a.starts_with("--sort"))
    };
    match *sub {
        s if GIT_LOOKERS.contains(&s) => {
            !rest.iter().any(|a| a.starts_with("--output") || *a == "--ext-diff")
        }
        "branch" => listing(&[
            "--show-current",
            "-a",
            "--all",
            "-r",
            "--remotes",
            "-v",
            "-vv",
            "--list",
            "--contains",
            "--merged",
            "--no-merged",
        ]),
        "remote" => listing(&["-v", "--verbose", "show", "get-url"]) || rest.is_empty(),
        "tag" => listing(&["-l", "--list", "-n"]) || rest.is_empty(),
        "stash" => matches!(rest.first(), Some(&"list") | Some(&"show")),
        "config" => {
            matches!(rest.first(), Some(&"--get") | Some(&"--list") | Some(&"-l") | Some(&"--get-all"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::only_looks;
    use std::path::Path;

    fn looks(c: &str) -> bool {
        only_looks(c, Path::new("/home/u/ws"), Path::new("/home/u"))
    }

    #[test]
    fn looking_commands_are_told_from_the_others() {
        for c in [
            "git status",
            "git diff HEAD",
            "git log --oneline -10",
            "git branch --show-current",
            "git -C sub status --short",
            "ls -la && cat README.md | head -5",
            "git diff --cached 2>/dev/null",
            "find . -name '*.rs'",
            "rg -n TODO src",
        ] {
            assert!(looks(c), "only looks: {c}");
        }
        for c in [
            "git commit -m x",
            "git add .",
            "git branch -D main",
            "git -c core.pager=evil log",
            "git diff --output=x",
            "ls > files.txt",
            "cat $(echo x)",
            "find . -delete",
            "sed -i s/a/b/ f",
            "echo hi; rm -rf build",
            "git log | sh",
            "npm test",
            "",
        ] {
            assert!(!looks(c), "changes things (or may): {c}");
        }
    }
}
