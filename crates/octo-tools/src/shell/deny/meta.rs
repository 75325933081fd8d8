//! Commands that change a file's mode, owner or times: `chmod`, `chown`, `chgrp`, `touch`,
//! `setfacl`, `chattr`, `find … -exec chmod`, `xargs chown`, and interpreter one-liners calling
//! the language's own `chmod`/`chown`/`utime`. Landlock has no right for these, so where it
//! confines alone (no mount namespace) octo asks before such a command reaches outside the
//! workspace ([`changes_metadata_outside`]).

use super::inner::first_command;
use super::interp::one_liner;
use super::words::basename;
use crate::shell::syntax::{self, Simple, Word};
use std::path::{Path, PathBuf};

/// The programs that change a mode, an owner, times or attributes.
const PROGRAMS: &[&str] = &["chmod", "chown", "chgrp", "touch", "setfacl", "chattr"];

/// The languages' own calls that change a mode, an owner or times.
const CALLS: &[&str] = &["chmod", "chown", "utime", "chflags", "setfacl", "chattr"];

/// What in `command` would change the mode, owner or times of a file outside `workspace` (or
/// of one only known at run time), as a reason to ask; `None` when nothing does.
pub fn changes_metadata_outside(command: &str, cwd: &Path, home: &Path, workspace: &Path) -> Option<String> {
    let ws = crate::path::real_path(workspace);
    first_command(command, cwd, home, &|c, words| simple(c, words, &ws))
}

fn simple(c: &Simple, words: &[Word], ws: &Path) -> Option<String> {
    let (prog, args) = words.split_first()?;
    let name = basename(&prog.text);
    if let Some(code) = one_liner(name, args) {
        let called = CALLS.iter().find(|call| code.contains(*call))?;
        return Some(format!("its {name} code calls `{called}`, on files octo cannot tell"));
    }
    if matches!(name, "xargs" | "parallel") {
        let runs = args.iter().find(|a| is_program(basename(&a.text)))?;
        return Some(format!("`{name} {}` takes its files from its input", basename(&runs.text)));
    }
    if name == "find" {
        return find_exec(c, args, ws);
    }
    if !is_program(name) {
        return None;
    }
    // `xargs` may be taken as a wrapper: then the files come from its input.
    if c.words.iter().any(|w| matches!(basename(&w.text), "xargs" | "parallel")) {
        return Some(format!("`xargs {name}` takes its files from its input"));
    }
    outside(c, name, &files(name, args), ws)
}

fn is_program(name: &str) -> bool {
    PROGRAMS.contains(&name)
}

/// The files `name` changes: its operands but the mode or owner (`chmod MODE FILE…`, `chown
/// OWNER FILE…`, none with `--reference=`), options and their values (`touch -d DATE`,
/// `setfacl -m SPEC`) and `chattr`'s attributes (`+i`) left out. After `--` every word is an
/// operand.
fn files<'a>(name: &str, args: &'a [Word]) -> Vec<&'a Word> {
    let values: &[&str] = match name {
        "touch" => &["-d", "-t", "-r"],
        "setfacl" => &["-m", "-M", "-x", "-X", "--set", "--set-file"],
        "chattr" => &["-v", "-p"],
        _ => &[],
    };
    let mut skip = usize::from(matches!(name, "chmod" | "chown" | "chgrp"));
    let (mut out, mut ended, mut value_next) = (Vec::new(), false, false);
    for a in args {
        let t = a.text.as_str();
        if ended {
            out.push(a);
        } else if value_next {
            value_next = false;
        } else if t == "--" {
            ended = true;
        } else if t.starts_with('-') && t.len() > 1 && !a.dynamic {
            // `chmod -x FILE`: the mode itself looks like an option.
            let mode_like = name == "chmod" && t[1..].chars().all(|ch| "rwxXst".contains(ch));
            if mode_like || t.starts_with("--reference") {
                skip = 0;
            }
            value_next = values.contains(&t);
        } else if !(name == "chattr" && (t.starts_with('+') || t.starts_with('='))) {
            out.push(a);
        }
    }
    out.into_iter().skip(skip).collect()
}

/// The first of `files` outside the workspace (or only known at run time), as a reason.
fn outside(c: &Simple, name: &str, files: &[&Word], ws: &Path) -> Option<String> {
    for f in files {
        if f.dynamic || (!c.cwd_known && !f.text.starts_with('/')) {
            return Some(format!("`{name}` changes a file only known at run time"));
        }
        let path = syntax::resolve(&c.cwd, &super::words::glob_base(&f.text));
        if !inside(&path, ws) {
            return Some(format!("`{name}` changes {}, outside the workspace", path.display()));
        }
    }
    None
}

/// `find START… -exec chmod …` (or `-execdir`, `-ok`): the starting points are what it changes.
fn find_exec(c: &Simple, args: &[Word], ws: &Path) -> Option<String> {
    let exec =
        args.iter().position(|a| matches!(a.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"))?;
    let runs = args.get(exec + 1)?;
    if !is_program(basename(&runs.text)) {
        return None;
    }
    let starts: Vec<&Word> =
        args.iter().take_while(|a| !a.text.starts_with('-') && a.text != "(" && a.text != "!").collect();
    let dot = Word { text: ".".into(), dynamic: false, glob: false, vars: Vec::new() };
    let starts = if starts.is_empty() { vec![&dot] } else { starts };
    outside(c, "find", &starts, ws)
}

fn inside(path: &Path, ws: &Path) -> bool {
    let real: PathBuf = crate::path::real_path(path);
    real.starts_with(ws) || syntax::lexical(path).starts_with(ws)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(cmd: &str) -> Option<String> {
        let root = tempfile::tempdir().unwrap();
        let ws = root.path().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        let home = root.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        changes_metadata_outside(cmd, &ws, &home, &ws)
    }

    #[test]
    fn changes_outside_the_workspace_are_named() {
        for cmd in [
            "chmod 000 ..",
            "chmod -R 777 ~/",
            "chown nobody ../other/file",
            "touch -d 2000-01-01 ~/.bashrc",
            "touch ../x",
            "chmod 644 src/a.rs && chmod 600 /etc/hosts",
            "sudo chgrp staff /srv/data",
            "setfacl -m u:evil:rwx ~/.ssh",
            "find ~ -exec chmod 777 {} +",
            "find .. -name '*.sh' -execdir chmod +x {} ;",
            "echo ~ | xargs chmod 000",
            "python3 -c \"import os; os.chmod(os.path.expanduser('~'), 0)\"",
            "node -e \"require('fs').chmodSync('/home', 0)\"",
            "perl -e 'utime 0, 0, glob(\"~/*\")'",
            "sh -c 'chmod 000 ../..'",
            "chmod 000 \"$TARGET\"",
            "cd \"$X\" && chmod 000 file",
        ] {
            assert!(check(cmd).is_some(), "{cmd}");
        }
    }

    #[test]
    fn changes_inside_the_workspace_and_other_programs_are_not() {
        for cmd in [
            "chmod +x run.sh",
            "chmod -R u+w src",
            "touch src/new.rs && touch -d 2000-01-01 src/new.rs",
            "chmod --reference=/etc/hosts src",
            "find . -name '*.sh' -exec chmod +x {} +",
            "find src -type f",
            "cargo build",
            "ls -la ..",
            "python3 -c 'print(1)'",
            "chattr +i src",
        ] {
            assert_eq!(check(cmd), None, "{cmd}");
        }
    }
}
