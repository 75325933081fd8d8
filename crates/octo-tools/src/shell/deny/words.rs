//! A command's words read as the program sees them: the program's name without its directory,
//! the wrappers (`sudo`, `env`, `timeout`, …) in front of the real program, the shells, and the
//! fixed part of a glob.

use crate::shell::syntax::Word;

/// The programs that run a script they are given.
pub(super) const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "mksh"];

/// Wrappers that run another program, and their options that take a value.
const WRAPPERS: &[(&str, &[&str])] = &[
    ("sudo", &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"]),
    ("doas", &["-u", "-C"]),
    ("env", &["-u", "-C", "-S"]),
    ("nice", &["-n"]),
    ("ionice", &["-c", "-n", "-p"]),
    ("timeout", &["-s", "-k", "--signal", "--kill-after"]),
    ("stdbuf", &[]),
    ("xargs", &["-I", "-n", "-P", "-d", "-a", "-E", "-L", "-s"]),
    ("command", &[]),
    ("exec", &["-a"]),
    ("nohup", &[]),
    ("setsid", &[]),
    ("unbuffer", &[]),
    ("time", &[]),
    ("builtin", &[]),
    ("chroot", &["--userspec", "--groups"]),
    ("busybox", &[]),
    ("toybox", &[]),
];

/// A program's name without its directory (`/usr/bin/rm` → `rm`).
pub(super) fn basename(prog: &str) -> &str {
    prog.rsplit('/').next().unwrap_or(prog)
}

/// The part of a path before the first component with a glob character (`~/a/*/b` → `~/a`).
pub(super) fn glob_base(text: &str) -> String {
    let fixed: Vec<&str> = text.split('/').take_while(|p| !p.contains(['*', '?', '['])).collect();
    fixed.join("/")
}

/// Drops wrappers (`sudo -u root`, `env VAR=1`, `timeout 60`, `nice -n 5`, …) in front of the
/// real program.
pub(super) fn strip_wrappers(words: &[Word]) -> &[Word] {
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        if w.dynamic {
            break;
        }
        let Some((name, with_value)) = WRAPPERS.iter().find(|(n, _)| *n == basename(&w.text)) else {
            break;
        };
        i += 1;
        // The wrapper's own options (and their values).
        while i < words.len() && words[i].text.starts_with('-') && !words[i].dynamic {
            let takes_value = with_value.contains(&words[i].text.as_str());
            i += if takes_value { 2 } else { 1 };
        }
        // `timeout`'s duration and `chroot`'s new root come before the program.
        if (*name == "timeout" || *name == "chroot") && i < words.len() {
            i += 1;
        }
        if *name == "env" || *name == "sudo" {
            while i < words.len() && words[i].text.contains('=') && !words[i].text.starts_with('-') {
                i += 1;
            }
        }
    }
    &words[i.min(words.len())..]
}
