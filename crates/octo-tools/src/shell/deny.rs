//! Commands no rule can allow: wiping the file system or home, fork bombs, writing file systems
//! or raw bytes onto devices, and killing octo itself.

use regex::Regex;
use std::sync::OnceLock;

/// Why `command` is refused outright, or `None` when it is not one of the hard-denied commands.
pub fn hard_denied(command: &str) -> Option<String> {
    let c = command.trim();
    for segment in segments(c) {
        let words: Vec<&str> = segment.split_whitespace().collect();
        let words = strip_prefixes(&words);
        let Some((&prog, args)) = words.split_first() else { continue };
        let prog = prog.rsplit('/').next().unwrap_or(prog);
        match prog {
            "rm" => {
                if let Some(why) = dangerous_rm(args) {
                    return Some(why);
                }
            }
            p if p == "mkfs" || p.starts_with("mkfs.") || p == "mke2fs" || p == "wipefs" => {
                return Some(format!("`{p}` formats a file system"));
            }
            "dd" => {
                if let Some(of) = args.iter().find_map(|a| a.strip_prefix("of=")) {
                    if is_device(of) {
                        return Some(format!("`dd` writing onto the device {of}"));
                    }
                }
            }
            "kill" | "pkill" | "killall" => {
                if let Some(why) = kills_octo(prog, args) {
                    return Some(why);
                }
            }
            _ => {}
        }
    }
    if fork_bomb().is_some_and(|re| re.is_match(&c.split_whitespace().collect::<String>())) {
        return Some("a fork bomb".into());
    }
    if let Some(m) = device_redirect().and_then(|re| re.find(c)) {
        return Some(format!("redirecting output onto a device (`{}`)", m.as_str().trim()));
    }
    None
}

/// Splits on the shell's command separators so `true && rm -rf /` is seen.
fn segments(c: &str) -> Vec<&str> {
    c.split(['\n', ';', '&', '|', '(', ')', '`']).map(str::trim).filter(|s| !s.is_empty()).collect()
}

/// Drops `sudo`, `doas`, `env`, `command`, `exec`, `nohup`, `time` and their flags in front of
/// the real program.
fn strip_prefixes<'a>(words: &'a [&'a str]) -> &'a [&'a str] {
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        if matches!(w, "sudo" | "doas" | "env" | "command" | "exec" | "nohup" | "time" | "builtin")
            || (i > 0 && w.starts_with('-'))
            || w.contains('=') && !w.starts_with('-')
        {
            i += 1;
        } else {
            break;
        }
    }
    &words[i..]
}

fn dangerous_rm(args: &[&str]) -> Option<String> {
    let mut recursive = false;
    let mut targets = Vec::new();
    let mut end_of_flags = false;
    for a in args {
        if !end_of_flags && *a == "--" {
            end_of_flags = true;
        } else if !end_of_flags && a.starts_with("--") {
            recursive |= *a == "--recursive";
        } else if !end_of_flags && a.starts_with('-') && a.len() > 1 {
            recursive |= a.contains('r') || a.contains('R');
        } else {
            targets.push(a.trim_matches(|c| c == '"' || c == '\''));
        }
    }
    if !recursive {
        return None;
    }
    let home = std::env::var("HOME").unwrap_or_default();
    for t in targets {
        let t_norm = t.trim_end_matches('/');
        let t_norm = t_norm.strip_suffix("/*").unwrap_or(t_norm).trim_end_matches('/');
        let is_root = t_norm.is_empty() || t == "/*" || t == "/.";
        let is_home = matches!(t_norm, "~" | "$HOME" | "${HOME}" | "~/*" | "$HOME/*")
            || (!home.is_empty() && t_norm == home.trim_end_matches('/'));
        let is_top = !t_norm.is_empty()
            && t_norm.starts_with('/')
            && t_norm.matches('/').count() == 1
            && is_system_dir(t_norm);
        if is_root {
            return Some("`rm -r` on the root of the file system".into());
        }
        if is_home {
            return Some("`rm -r` on the home directory".into());
        }
        if is_top {
            return Some(format!("`rm -r` on the system directory {t_norm}"));
        }
    }
    None
}

fn is_system_dir(d: &str) -> bool {
    matches!(
        d,
        "/bin"
            | "/boot"
            | "/dev"
            | "/etc"
            | "/home"
            | "/lib"
            | "/lib64"
            | "/opt"
            | "/proc"
            | "/root"
            | "/sbin"
            | "/sys"
            | "/usr"
            | "/var"
            | "/Users"
            | "/System"
            | "/Library"
            | "/Applications"
    )
}

fn is_device(path: &str) -> bool {
    path.starts_with("/dev/")
        && !matches!(path, "/dev/null" | "/dev/zero" | "/dev/stdout" | "/dev/stderr" | "/dev/tty")
}

fn kills_octo(prog: &str, args: &[&str]) -> Option<String> {
    let me = std::process::id().to_string();
    let args: Vec<&str> = args.iter().map(|a| a.trim_matches(|c| c == '"' || c == '\'')).collect();
    if prog == "kill" {
        if args.iter().any(|a| *a == me || *a == "$PPID" || *a == "${PPID}") {
            return Some("killing octo's own process".into());
        }
        // `kill -9 -1`: pid -1 is every process of the user, octo included.
        if args.len() >= 2 && args.last() == Some(&"-1") {
            return Some("`kill -1` kills every process of the user, octo included".into());
        }
    } else if args.iter().any(|a| !a.starts_with('-') && a.contains("octo")) {
        return Some("killing octo's own process".into());
    }
    None
}

fn fork_bomb() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    // name(){ name|name& };name — the classic and its renamed variants, whitespace removed.
    RE.get_or_init(|| Regex::new(r"([A-Za-z_:.][\w:.]*)\(\)\{[^}]*\|[^}]*&[^}]*\};").ok()).as_ref()
}

fn device_redirect() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r">\s*/dev/(sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|disk\d|mmcblk\d|mapper/)").ok()
    })
    .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_the_classics_in_their_spellings() {
        for c in [
            "rm -rf /",
            "rm -rf /*",
            "rm -fr /",
            "rm -r -f /",
            "rm --recursive --force /",
            "sudo rm -rf --no-preserve-root /",
            "rm -rf ~",
            "rm -rf ~/",
            "rm -rf $HOME",
            "rm -Rf \"$HOME\"",
            "echo hi && rm -rf /",
            "cd /tmp; rm -rf /usr",
            "/bin/rm -rf /",
            ":(){ :|:& };:",
            "bomb() { bomb | bomb & }; bomb",
            "mkfs.ext4 /dev/sda1",
            "dd if=/dev/zero of=/dev/sda bs=1M",
            "cat image.iso > /dev/sdb",
            "kill -9 $PPID",
            "kill -9 -1",
            "pkill octo",
            "killall octo",
        ] {
            assert!(hard_denied(c).is_some(), "should refuse: {c}");
        }
        let me = std::process::id();
        assert!(hard_denied(&format!("kill {me}")).is_some());
    }

    #[test]
    fn allows_ordinary_commands() {
        for c in [
            "rm -rf target",
            "rm -rf ./build /tmp/octo-test",
            "rm file.txt",
            "rm -f /",
            "ls -la /",
            "cargo test",
            "dd if=/dev/zero of=disk.img bs=1M count=10",
            "echo x > /dev/null",
            "kill 12345678",
            "git commit -m 'rm -rf / is bad'",
            "grep -r 'fn main' .",
        ] {
            assert_eq!(hard_denied(c), None, "should allow: {c}");
        }
    }
}
