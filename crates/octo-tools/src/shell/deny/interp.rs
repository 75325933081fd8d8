//! Interpreter one-liners read like their shell forms: `python3 -c`, `perl -e`, `node -e`,
//! `ruby -e` (and `deno eval`, `bun -e`, `php -r`) whose code deletes a tree with the language's
//! own call (`shutil.rmtree`, `fs.rmSync`, `FileUtils.rm_rf`, `File::Path::remove_tree` …) on
//! the home directory, the root or a parent of the working directory, or hands a shell command
//! to `os.system`/`subprocess`/`system`/`exec`/backticks — that command is judged as a shell
//! command would be.

use crate::shell::syntax::Word;

/// The languages, by program name (a version suffix such as `python3.12` is dropped), and the
/// options that take the code as their value.
fn code_options(name: &str) -> Option<&'static [&'static str]> {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match base {
        "python" | "pypy" => &["-c"],
        "perl" => &["-e", "-E"],
        "node" | "nodejs" | "bun" => &["-e", "--eval", "-p", "--print"],
        "ruby" => &["-e"],
        "php" => &["-r"],
        "deno" => &["eval"],
        _ => return None,
    })
}

/// The code given on the command line to an interpreter, when `name` is one.
pub(super) fn one_liner(name: &str, args: &[Word]) -> Option<String> {
    let options = code_options(name)?;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a.dynamic {
            return None;
        }
        let t = a.text.as_str();
        if options.contains(&t) {
            return it.next().filter(|w| !w.dynamic).map(|w| w.text.clone());
        }
        // `-c'code'` and clusters ending in the option (`-Ie`, `-ne`).
        if let Some(opt) = options.iter().find(|o| o.len() == 2 && t.starts_with('-') && !t.starts_with("--"))
        {
            let letter = &opt[1..];
            if t.len() > 2 && t[1..].starts_with(letter) {
                return Some(t[2..].to_owned());
            }
            if t.ends_with(letter) && t.len() > 2 && t[1..].chars().all(|c| c.is_ascii_alphabetic()) {
                return it.next().filter(|w| !w.dynamic).map(|w| w.text.clone());
            }
        }
        if !t.starts_with('-') {
            // A script file: not a one-liner.
            return None;
        }
    }
    None
}

/// Calls that delete a whole tree, in each language.
const TREE_DELETES: &[&str] = &[
    "rmtree",
    "rm_rf",
    "rm_r(",
    "remove_tree",
    "rmsync",
    "rmdirsync",
    "fs.rm(",
    "rimraf",
    "remove_dir_all",
    "rmdir(",
    "deltree",
];

/// How code names the home directory, the root or a parent folder.
const GRAVE_TARGETS: &[&str] = &[
    "expanduser",
    "path.home",
    "homedir",
    "'~'",
    "\"~\"",
    "'~/'",
    "\"~/\"",
    "$home",
    "env{home}",
    "env['home']",
    "env[\"home\"]",
    "environ['home']",
    "environ[\"home\"]",
    "environ.get('home'",
    "environ.get(\"home\"",
    "getenv('home'",
    "getenv(\"home\"",
    "dir.home",
    "'/'",
    "\"/\"",
    "'..'",
    "\"..\"",
    "'../'",
    "\"../\"",
    "'../..",
    "\"../..",
];

/// Why this one-liner is refused outright: a tree delete aimed at the home, the root or a
/// parent folder.
pub(super) fn destroys_tree(code: &str) -> Option<String> {
    let lower = code.to_ascii_lowercase();
    let call = TREE_DELETES.iter().find(|d| lower.contains(*d))?;
    let target = GRAVE_TARGETS.iter().find(|t| lower.contains(*t))?;
    Some(format!(
        "a one-liner deleting a whole tree (`{}`) aimed at {}",
        call.trim_end_matches('('),
        if target.contains("..") {
            "a parent folder"
        } else if *target == "'/'" || *target == "\"/\"" {
            "the root"
        } else {
            "the home directory"
        }
    ))
}

/// The shell commands a one-liner hands to a shell (`os.system("…")`, `subprocess.run("…",
/// shell=True)`, `system("…")`, `exec("…")`, `execSync("…")`, backticks): the string literals
/// inside those calls.
pub(super) fn shell_commands(code: &str) -> Vec<String> {
    const CALLS: &[&str] =
        &["system(", "popen(", "subprocess.", "exec(", "execsync(", "spawnsync(", "shell_exec(", "passthru("];
    let lower = code.to_ascii_lowercase();
    let mut out = Vec::new();
    for call in CALLS {
        let mut from = 0;
        while let Some(at) = lower[from..].find(call) {
            let start = from + at + call.len();
            out.extend(first_literal(&code[start..]));
            from = start;
        }
    }
    // Ruby's and Perl's backticks.
    let mut parts = code.split('`');
    parts.next();
    while let (Some(inner), Some(_)) = (parts.next(), parts.next()) {
        out.push(inner.to_owned());
    }
    out
}

/// The first string literal in `text` (single or double quoted, backslash escapes kept as they
/// are), within the call's parentheses.
fn first_literal(text: &str) -> Option<String> {
    let mut chars = text.char_indices();
    let (open, quote) = chars.by_ref().find(|(_, c)| matches!(c, '\'' | '"' | ')'))?;
    if quote == ')' {
        return None;
    }
    let rest = &text[open + 1..];
    let end = rest.find(quote)?;
    Some(rest[..end].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(t: &str) -> Word {
        Word { text: t.into(), dynamic: false, glob: false, vars: Vec::new() }
    }

    #[test]
    fn the_code_is_found_after_its_option() {
        assert_eq!(one_liner("python3", &[w("-c"), w("print(1)")]).as_deref(), Some("print(1)"));
        assert_eq!(one_liner("python3.12", &[w("-I"), w("-c"), w("x")]).as_deref(), Some("x"));
        assert_eq!(one_liner("perl", &[w("-MFile::Path"), w("-e"), w("y")]).as_deref(), Some("y"));
        assert_eq!(one_liner("node", &[w("--eval"), w("z")]).as_deref(), Some("z"));
        assert_eq!(one_liner("ruby", &[w("-e"), w("q")]).as_deref(), Some("q"));
        assert_eq!(one_liner("python3", &[w("script.py"), w("-c"), w("x")]), None);
        assert_eq!(one_liner("cat", &[w("-c"), w("x")]), None);
    }

    #[test]
    fn grave_tree_deletes_are_named_and_ordinary_ones_are_not() {
        for code in [
            "import shutil,os;shutil.rmtree(os.path.expanduser('~'))",
            "import shutil; shutil.rmtree('/')",
            "require('fs').rmSync(require('os').homedir(), {recursive: true})",
            "require 'fileutils'; FileUtils.rm_rf(Dir.home)",
            "use File::Path qw(remove_tree); remove_tree($ENV{HOME})",
            "import shutil; shutil.rmtree('..')",
        ] {
            assert!(destroys_tree(code).is_some(), "{code}");
        }
        for code in
            ["import shutil; shutil.rmtree('build')", "print('~')", "fs.rmSync('dist', {recursive:true})"]
        {
            assert_eq!(destroys_tree(code), None, "{code}");
        }
    }

    #[test]
    fn shell_commands_inside_are_found() {
        assert_eq!(shell_commands("import os; os.system('rm -rf ~')"), ["rm -rf ~"]);
        assert_eq!(shell_commands("require('child_process').execSync(\"rm -rf /\")"), ["rm -rf /"]);
        assert_eq!(shell_commands("`rm -rf ~`"), ["rm -rf ~"]);
        assert!(shell_commands("print(1)").is_empty());
    }
}
