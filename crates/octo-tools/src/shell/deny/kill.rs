//! Killing octo itself or every process: `kill $PPID`, `kill` of octo's pid, `kill -1`, and a
//! `pkill`/`killall` whose pattern matches octo or whose selector (a user, session, group, …)
//! takes octo along.

use crate::shell::syntax::Word;

/// Why `name` (`kill`, `pkill` or `killall`) run with `args` is refused: it would kill octo.
pub(super) fn kills_octo(name: &str, args: &[Word]) -> Option<String> {
    if name == "kill" {
        return kill(args);
    }
    let options = if name == "pkill" { &PKILL } else { &KILLALL };
    let targets = targets(args, options);
    if targets.patterns.is_empty() {
        return targets
            .selected
            .then(|| format!("`{name}` of every process of a user, session or group, octo included"));
    }
    if targets.patterns.iter().any(|p| p.dynamic) {
        return None;
    }
    let regex = name == "pkill" || args.iter().any(|a| a.text == "-r" || a.text == "--regexp");
    let full = args.iter().any(|a| a.text == "-f" || a.text == "--full");
    let names = own_names(full);
    targets
        .patterns
        .iter()
        .find(|p| matches_octo(&p.text, regex, &names))
        .map(|p| format!("killing octo's own process (`{}` matches it)", p.text))
}

/// Why `kill ARGS` is refused: it names octo's process (or `$PPID`, which is octo) or `-1`
/// (every process of the user).
fn kill(args: &[Word]) -> Option<String> {
    let me = std::process::id().to_string();
    let mut signal_done = false;
    let mut skip_value = false;
    for a in args {
        if a.vars.iter().any(|v| v == "PPID") {
            return Some("killing octo's own process (`$PPID` is octo)".into());
        }
        let t = a.text.as_str();
        if skip_value {
            skip_value = false;
            continue;
        }
        if t == "--" {
            signal_done = true;
            continue;
        }
        if !signal_done && matches!(t, "-s" | "-n" | "--signal") {
            skip_value = true;
            signal_done = true;
            continue;
        }
        if !signal_done && matches!(t, "-l" | "-L" | "--list" | "--table") {
            return None;
        }
        if t.starts_with('-') && t != "-1" && !signal_done {
            // The first `-N` or `-SIG` is the signal; a later `-N` is a process group.
            signal_done = true;
            continue;
        }
        let pid = t.strip_prefix('-').unwrap_or(t);
        if pid == "1" && t.starts_with('-') && (signal_done || args.len() == 1) {
            return Some("`kill -1` kills every process of the user, octo included".into());
        }
        if t == "-1" {
            // `kill -1 PID` sends signal 1 (SIGHUP).
            signal_done = true;
            continue;
        }
        if pid == me {
            return Some("killing octo's own process".into());
        }
    }
    None
}

/// A kill program's options: those that take a value, and those among them that pick processes
/// without a pattern (every process of a user, session, group, …).
struct Options {
    valued: &'static [&'static str],
    selectors: &'static [&'static str],
}

const PKILL: Options = Options {
    valued: &[
        "-u",
        "-U",
        "-P",
        "-g",
        "-G",
        "-s",
        "-t",
        "-F",
        "--euid",
        "--uid",
        "--parent",
        "--pgroup",
        "--group",
        "--session",
        "--terminal",
        "--pidfile",
        "--signal",
        "--ns",
        "--nslist",
    ],
    selectors: &[
        "-u",
        "-U",
        "-P",
        "-g",
        "-G",
        "-s",
        "-t",
        "--euid",
        "--uid",
        "--parent",
        "--pgroup",
        "--group",
        "--session",
        "--terminal",
    ],
};

const KILLALL: Options = Options {
    valued: &[
        "-s",
        "--signal",
        "-o",
        "--older-than",
        "-y",
        "--younger-than",
        "-u",
        "--user",
        "-n",
        "--ns",
        "-Z",
        "--context",
    ],
    selectors: &["-u", "--user"],
};

/// What a `pkill` or `killall` aims at: its patterns, and whether a selector picks processes.
struct Targets<'a> {
    patterns: Vec<&'a Word>,
    selected: bool,
}

/// The patterns among `args` (the options and their values left out), and whether a selector
/// is among the options.
fn targets<'a>(args: &'a [Word], options: &Options) -> Targets<'a> {
    let mut patterns = Vec::new();
    let mut selected = false;
    let mut i = 0;
    while i < args.len() {
        let t = args[i].text.as_str();
        if options.valued.contains(&t) {
            selected |= options.selectors.contains(&t);
            i += 2;
            continue;
        }
        if t.starts_with('-') && t.len() > 1 {
            // `-ualice`: a selector with its value glued on.
            selected |=
                options.selectors.iter().any(|s| !s.starts_with("--") && t.starts_with(s) && t.len() > 2);
            i += 1;
            continue;
        }
        patterns.push(&args[i]);
        i += 1;
    }
    Targets { patterns, selected }
}

/// The names octo runs under (what a `pkill` pattern must not match); with `full`, its whole
/// command line too (what `pkill -f` matches against).
fn own_names(full: bool) -> Vec<String> {
    let mut names = vec!["octo".to_owned()];
    if let Some(exe) =
        std::env::current_exe().ok().and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
    {
        names.push(exe);
    }
    if full {
        names.push(std::env::args().collect::<Vec<_>>().join(" "));
    }
    names
}

/// Whether `pattern` (a regular expression when `regex`, an exact name otherwise) matches one
/// of octo's `names`.
fn matches_octo(pattern: &str, regex: bool, names: &[String]) -> bool {
    if regex {
        regex::Regex::new(pattern).is_ok_and(|re| names.iter().any(|n| re.is_match(n)))
    } else {
        names.iter().any(|n| n == pattern)
    }
}
