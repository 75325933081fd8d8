//! A command line as a shell would run it, from a real grammar (tree-sitter-bash): every simple
//! command — including those inside `$(…)`, subshells, pipelines, lists, loops and function
//! bodies — with its words after quote removal and the expansions octo can know (`~`, `$HOME`,
//! `${HOME…}`), the directory it runs in after earlier `cd`s, what a pipeline feeds it, and its
//! redirections. What cannot be known before running (other variables, command substitutions)
//! is marked dynamic, never guessed.

use std::path::{Path, PathBuf};
use tree_sitter::{Node, Parser};

/// One word of a command, evaluated as far as octo can.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The text after quote removal and known expansions; unknown parts are left out.
    pub text: String,
    /// Part of it is only known at run time (a variable, `$(…)`, backticks).
    pub dynamic: bool,
    /// It has an unquoted glob character (`*`, `?`, `[`).
    pub glob: bool,
    /// The variables it refers to (`PPID` in `$PPID`).
    pub vars: Vec<String>,
}

/// What a pipeline feeds a command on its standard input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Feed {
    /// Nothing from a pipeline.
    None,
    /// Text known before running (`echo 'x' | sh`).
    Static(String),
    /// Output only known at run time (`curl …`, `base64 -d`).
    Dynamic,
}

/// A redirection of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The operator (`>`, `>>`, `<`, `>|`, `&>`, `<<<`, `<<`).
    pub op: String,
    /// Its target (a file, or the text of a here-string / here-document).
    pub target: Word,
}

/// One simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simple {
    /// The command word and its arguments (assignments before it are not included).
    pub words: Vec<Word>,
    /// The directory it runs in, as far as earlier `cd`s show.
    pub cwd: PathBuf,
    /// Whether `cwd` is certain: false after a `cd` to a place only known at run time (`cd -`,
    /// `cd "$X"`, `popd`), when relative paths cannot be resolved.
    pub cwd_known: bool,
    /// The values of assignments before it (`F=~/.ssh/id_rsa cmd`), or of a statement that only
    /// assigns (then `words` is empty).
    pub assignments: Vec<Word>,
    /// What a pipeline feeds it.
    pub stdin: Feed,
    /// Its redirections.
    pub redirects: Vec<Redirect>,
    /// An argument is a process substitution (`<(…)`): a file whose content is only known at run
    /// time.
    pub process_substitution: bool,
}

/// A parsed command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    /// Every simple command, in source order.
    pub commands: Vec<Simple>,
    /// Functions that pipe into themselves in the background (`:(){ :|:& };:`).
    pub fork_bombs: Vec<String>,
    /// The grammar could not parse part of it.
    pub error: bool,
    /// It nests deeper than octo follows.
    pub too_deep: bool,
}

/// Whether a function whose body is `body` calls itself at least twice with one call in the
/// background or a pipe (`:(){ :|:& }`, `f(){ f & f; }`, `b(){ b | b; }`): each call doubles
/// the processes.
fn forks_itself(name: &str, body: &str) -> bool {
    let squashed: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    let calls = body
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '{' | '}'))
        .filter(|w| *w == name)
        .count()
        .max(squashed.matches(&format!("{name}|{name}")).count() * 2);
    let background = squashed.replace("&&", "").contains('&');
    calls >= 2 && (background || squashed.contains(&format!("{name}|")))
}

/// How deep octo follows nested constructs before giving up (and asking).
const MAX_NESTING: usize = 200;

/// Parses `command` as bash would, run in `cwd` by a user whose home is `home`.
pub fn parse(command: &str, cwd: &Path, home: &Path) -> Script {
    let mut parser = Parser::new();
    let mut script = Script::default();
    if parser.set_language(&tree_sitter_bash::LANGUAGE.into()).is_err() {
        script.error = true;
        return script;
    }
    let Some(tree) = parser.parse(command, None) else {
        script.error = true;
        return script;
    };
    let root = tree.root_node();
    script.error = root.has_error();
    let mut w = Walker {
        src: command.as_bytes(),
        home,
        cwd: lexical(cwd),
        cwd_known: true,
        depth: 0,
        script: &mut script,
    };
    w.node(root, &Feed::None);
    script
}

/// `path` with `.` and `..` resolved without touching the file system (never empty).
pub fn lexical(path: &Path) -> PathBuf {
    let out = crate::path::normalize(path);
    if out.as_os_str().is_empty() {
        PathBuf::from("/")
    } else {
        out
    }
}

/// `arg` as a path from `cwd` (`~` already expanded in the word), lexically normalized.
pub fn resolve(cwd: &Path, arg: &str) -> PathBuf {
    lexical(&cwd.join(arg))
}

struct Walker<'a> {
    src: &'a [u8],
    home: &'a Path,
    cwd: PathBuf,
    cwd_known: bool,
    depth: usize,
    script: &'a mut Script,
}

pub(super) fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            }
        } else {
            out.push(c);
        }
    }
    out
}

impl Walker<'_> {
    fn text(&self, n: Node<'_>) -> &str {
        n.utf8_text(self.src).unwrap_or("")
    }

    /// Walks any node, collecting the simple commands inside it.
    fn node(&mut self, n: Node<'_>, feed: &Feed) {
        if self.depth >= MAX_NESTING {
            self.script.too_deep = true;
            return;
        }
        self.depth += 1;
        self.node_inner(n, feed);
        self.depth -= 1;
    }

    fn simple(&self, words: Vec<Word>, feed: Feed, redirects: Vec<Redirect>) -> Simple {
        Simple {
            words,
            cwd: self.cwd.clone(),
            cwd_known: self.cwd_known,
            assignments: Vec::new(),
            stdin: feed,
            redirects,
            process_substitution: false,
        }
    }

    fn node_inner(&mut self, n: Node<'_>, feed: &Feed) {
        match n.kind() {
            // `for f in ~/.ssh/*`: the list is checked like arguments.
            "for_statement" => {
                let mut cursor = n.walk();
                let values: Vec<Node<'_>> = n.children_by_field_name("value", &mut cursor).collect();
                if !values.is_empty() {
                    let mut list = self.simple(Vec::new(), Feed::None, Vec::new());
                    list.assignments = values.iter().map(|v| self.word(*v)).collect();
                    self.script.commands.push(list);
                }
                for v in values {
                    self.nested(v);
                }
                if let Some(body) = n.child_by_field_name("body") {
                    self.node(body, feed);
                }
            }
            // A statement that only assigns: its value is checked like an argument.
            "variable_assignment" => {
                if let Some(v) = n.child_by_field_name("value") {
                    let mut only = self.simple(Vec::new(), Feed::None, Vec::new());
                    only.assignments.push(self.word(v));
                    self.script.commands.push(only);
                    self.nested(v);
                }
            }
            "command" => self.command(n, feed, Vec::new()),
            "redirected_statement" => {
                let redirects = self.redirects(n);
                match n.child_by_field_name("body") {
                    Some(body) if body.kind() == "command" => self.command(body, feed, redirects),
                    Some(body) => {
                        self.node(body, feed);
                        // Redirections of a compound statement: checked as a command of their own.
                        if !redirects.is_empty() {
                            let only = self.simple(Vec::new(), Feed::None, redirects);
                            self.script.commands.push(only);
                        }
                    }
                    None => {}
                }
            }
            "pipeline" => {
                let mut feed = feed.clone();
                let mut cursor = n.walk();
                for child in n.named_children(&mut cursor) {
                    self.node(child, &feed);
                    feed = self.output_of(child);
                }
            }
            "function_definition" => {
                if let (Some(name), Some(body)) =
                    (n.child_by_field_name("name"), n.child_by_field_name("body"))
                {
                    let name = self.text(name).to_owned();
                    if forks_itself(&name, self.text(body)) {
                        self.script.fork_bombs.push(name);
                    }
                    self.node(body, &Feed::None);
                }
            }
            _ => {
                let mut cursor = n.walk();
                let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
                for child in children {
                    self.node(child, feed);
                }
            }
        }
    }

    /// What a pipeline stage writes: the static text of `echo`/`printf`, else only known at run
    /// time.
    fn output_of(&self, n: Node<'_>) -> Feed {
        let cmd = match n.kind() {
            "command" => n,
            "redirected_statement" => match n.child_by_field_name("body") {
                Some(b) if b.kind() == "command" => b,
                _ => return Feed::Dynamic,
            },
            _ => return Feed::Dynamic,
        };
        let words = self.words_of(cmd);
        match words.split_first() {
            Some((prog, args)) if !prog.dynamic && matches!(prog.text.as_str(), "echo" | "printf") => {
                // Escapes (`\176` is `~` to printf and to dash's echo) and printf's formats make
                // the output differ from the words.
                if args.iter().any(|a| {
                    a.dynamic || a.text.contains('\\') || (prog.text == "printf" && a.text.contains('%'))
                }) {
                    return Feed::Dynamic;
                }
                let args: Vec<&str> =
                    args.iter().map(|a| a.text.as_str()).skip_while(|a| a.starts_with('-')).collect();
                Feed::Static(args.join(" "))
            }
            _ => Feed::Dynamic,
        }
    }

    /// The words of a command node, without walking into it.
    fn words_of(&self, cmd: Node<'_>) -> Vec<Word> {
        let mut words = Vec::new();
        let mut cursor = cmd.walk();
        for child in cmd.named_children(&mut cursor) {
            match child.kind() {
                "command_name" => words.extend(child.named_child(0).map(|inner| self.word(inner))),
                "variable_assignment" | "file_redirect" | "herestring_redirect" | "heredoc_redirect" => {}
                "process_substitution" => {
                    words.push(Word { text: String::new(), dynamic: true, glob: false, vars: Vec::new() });
                }
                _ => words.push(self.word(child)),
            }
        }
        words
    }

    fn command(&mut self, n: Node<'_>, feed: &Feed, mut redirects: Vec<Redirect>) {
        let mut cursor = n.walk();
        let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
        let mut words = Vec::new();
        let mut assignments = Vec::new();
        let mut process_substitution = false;
        for child in children {
            match child.kind() {
                "command_name" => {
                    if let Some(inner) = child.named_child(0) {
                        words.push(self.word(inner));
                        self.nested(inner);
                    }
                }
                "variable_assignment" => {
                    if let Some(v) = child.child_by_field_name("value") {
                        assignments.push(self.word(v));
                        self.nested(v);
                    }
                }
                "file_redirect" | "herestring_redirect" | "heredoc_redirect" => {
                    redirects.extend(self.redirect(child));
                }
                "process_substitution" => {
                    process_substitution = true;
                    words.push(Word { text: String::new(), dynamic: true, glob: false, vars: Vec::new() });
                    self.nested(child);
                }
                _ => {
                    words.push(self.word(child));
                    self.nested(child);
                }
            }
        }
        self.follow_cd(&words);
        let mut simple = self.simple(words, feed.clone(), redirects);
        simple.assignments = assignments;
        simple.process_substitution = process_substitution;
        self.script.commands.push(simple);
    }

    /// `cd DIR` (also `builtin cd`, `command cd`, `pushd`) changes where later commands run; a
    /// directory only known at run time (`cd -`, `cd "$X"`, `popd`) makes it unknown.
    fn follow_cd(&mut self, words: &[Word]) {
        let mut rest = words;
        while let Some((first, tail)) = rest.split_first() {
            if !first.dynamic && matches!(first.text.as_str(), "builtin" | "command") {
                rest = tail;
            } else {
                break;
            }
        }
        let Some((prog, args)) = rest.split_first() else { return };
        if prog.dynamic {
            return;
        }
        match prog.text.as_str() {
            "cd" | "pushd" => match args.iter().find(|a| !a.text.starts_with('-') || a.text == "-") {
                None if prog.text == "cd" => {
                    self.cwd = self.home.to_path_buf();
                    self.cwd_known = true;
                }
                Some(a) if !a.dynamic && a.text != "-" && !a.text.starts_with('+') => {
                    let absolute = Path::new(&a.text).is_absolute();
                    self.cwd = resolve(&self.cwd, &a.text);
                    self.cwd_known = self.cwd_known || absolute;
                }
                _ => self.cwd_known = false,
            },
            "popd" => self.cwd_known = false,
            _ => {}
        }
    }

    /// Commands inside a word (`$(…)`, backticks, `<(…)`) run too.
    fn nested(&mut self, n: Node<'_>) {
        if self.depth >= MAX_NESTING {
            self.script.too_deep = true;
            return;
        }
        self.depth += 1;
        self.nested_inner(n);
        self.depth -= 1;
    }

    fn nested_inner(&mut self, n: Node<'_>) {
        if matches!(n.kind(), "command_substitution" | "process_substitution") {
            let saved = (self.cwd.clone(), self.cwd_known);
            let mut cursor = n.walk();
            let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
            for child in children {
                self.node(child, &Feed::None);
            }
            (self.cwd, self.cwd_known) = saved;
            return;
        }
        let mut cursor = n.walk();
        let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
        for child in children {
            self.nested(child);
        }
    }

    fn redirects(&mut self, n: Node<'_>) -> Vec<Redirect> {
        let mut out = Vec::new();
        let mut cursor = n.walk();
        let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
        for child in children {
            if matches!(child.kind(), "file_redirect" | "herestring_redirect" | "heredoc_redirect") {
                out.extend(self.redirect(child));
            }
        }
        out
    }

    fn redirect(&mut self, n: Node<'_>) -> Option<Redirect> {
        match n.kind() {
            "herestring_redirect" => {
                let target = n.named_child(0).map(|t| self.word(t))?;
                Some(Redirect { op: "<<<".into(), target })
            }
            "heredoc_redirect" => {
                let mut cursor = n.walk();
                let body = n.named_children(&mut cursor).find(|c| c.kind() == "heredoc_body");
                let target = match body {
                    Some(b) => {
                        let mut c = b.walk();
                        let dynamic = b.named_children(&mut c).any(|x| x.kind() != "heredoc_content");
                        Word { text: self.text(b).to_owned(), dynamic, glob: false, vars: Vec::new() }
                    }
                    None => Word { text: String::new(), dynamic: true, glob: false, vars: Vec::new() },
                };
                Some(Redirect { op: "<<".into(), target })
            }
            _ => {
                let dest = n.child_by_field_name("destination")?;
                self.nested(dest);
                let target = self.word(dest);
                let mut op = String::new();
                let mut cursor = n.walk();
                for c in n.children(&mut cursor) {
                    if !c.is_named() {
                        op.push_str(self.text(c));
                    }
                }
                Some(Redirect { op, target })
            }
        }
    }

    /// Evaluates a word node.
    fn word(&self, n: Node<'_>) -> Word {
        let mut w = Word { text: String::new(), dynamic: false, glob: false, vars: Vec::new() };
        self.word_into(n, &mut w, false);
        if !w.dynamic {
            // A leading `~` (alone or before `/`) is the home directory.
            if w.text == "~" {
                w.text = self.home.display().to_string();
            } else if let Some(rest) = w.text.strip_prefix("~/") {
                w.text = format!("{}/{rest}", self.home.display());
            } else if let Some(named) = w.text.strip_prefix('~') {
                // `~user`: that user's home, taken to sit beside this user's (`/home/<user>`).
                let (user, rest) = named.split_once('/').unwrap_or((named, ""));
                if !user.is_empty()
                    && user.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
                {
                    let parent = self.home.parent().unwrap_or(self.home);
                    let dir = if self.home.file_name().is_some_and(|n| n == user) {
                        self.home.to_path_buf()
                    } else {
                        parent.join(user)
                    };
                    w.text = if rest.is_empty() {
                        dir.display().to_string()
                    } else {
                        format!("{}/{rest}", dir.display())
                    };
                }
            }
        }
        w
    }

    fn word_into(&self, n: Node<'_>, w: &mut Word, quoted: bool) {
        match n.kind() {
            "word" | "number" => {
                let t = self.text(n);
                if !quoted && t.contains(['*', '?', '[']) {
                    w.glob = true;
                }
                w.text.push_str(&unescape(t));
            }
            "raw_string" => {
                let t = self.text(n);
                w.text.push_str(t.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')).unwrap_or(t));
            }
            "ansi_c_string" => {
                let t = self.text(n);
                let inner = t.strip_prefix("$'").and_then(|t| t.strip_suffix('\'')).unwrap_or(t);
                w.text.push_str(&unescape(inner));
            }
            "string_content" => w.text.push_str(&unescape(self.text(n))),
            "string" | "concatenation" => {
                let mut cursor = n.walk();
                let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
                for child in children {
                    self.word_into(child, w, quoted || n.kind() == "string");
                }
            }
            "simple_expansion" | "expansion" => {
                let mut cursor = n.walk();
                let var = n.named_children(&mut cursor).find(|c| c.kind() == "variable_name");
                match var.map(|v| self.text(v)) {
                    // `$HOME`, `${HOME}`, `${HOME:?}`, `${HOME:-x}`: the home directory.
                    Some("HOME") => w.text.push_str(&self.home.display().to_string()),
                    Some(other) => {
                        w.vars.push(other.to_owned());
                        w.dynamic = true;
                    }
                    None => {
                        // `$$`, `$!`, `$@` and the like.
                        let t = self.text(n).trim_start_matches('$').trim_matches(|c| c == '{' || c == '}');
                        w.vars.push(t.to_owned());
                        w.dynamic = true;
                    }
                }
            }
            _ => w.dynamic = true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &Simple) -> Vec<&str> {
        s.words.iter().map(|w| w.text.as_str()).collect()
    }

    #[test]
    fn commands_are_found_wherever_they_are_and_words_evaluated() {
        let home = Path::new("/home/u");
        let s = parse(
            "cd /tmp && echo \"$(rm -rf ~)\" | sudo env A=1 'r'm -r\\f ${HOME:?}/* ; R=rm; $R x",
            Path::new("/ws"),
            home,
        );
        let all: Vec<Vec<&str>> = s.commands.iter().map(words).collect();
        assert!(all.contains(&vec!["rm", "-rf", "/home/u"]), "{all:?}");
        assert!(all.contains(&vec!["sudo", "env", "A=1", "rm", "-rf", "/home/u/*"]), "{all:?}");
        let sudo = s.commands.iter().find(|c| c.words[0].text == "sudo").unwrap();
        assert_eq!(sudo.cwd, Path::new("/tmp"), "after the cd");
        assert!(sudo.words[5].glob);
        assert_eq!(sudo.stdin, Feed::Dynamic, "echo of a command substitution");
        let dyn_cmd = s.commands.iter().find(|c| c.words.first().is_some_and(|w| w.dynamic)).unwrap();
        assert_eq!(words(dyn_cmd), ["", "x"]);
    }

    #[test]
    fn feeds_redirects_and_bombs() {
        let s = parse(
            "echo 'rm -rf /' | sh; cat x > /dev/sda; bash <<< 'ls'; :(){ :|:& };:",
            Path::new("/"),
            Path::new("/h"),
        );
        let sh = s.commands.iter().find(|c| c.words[0].text == "sh").unwrap();
        assert_eq!(sh.stdin, Feed::Static("rm -rf /".into()));
        let cat = s.commands.iter().find(|c| c.words[0].text == "cat").unwrap();
        assert_eq!(cat.redirects[0].target.text, "/dev/sda");
        assert_eq!(cat.redirects[0].op, ">");
        let bash = s.commands.iter().find(|c| c.words[0].text == "bash").unwrap();
        assert_eq!((bash.redirects[0].op.as_str(), bash.redirects[0].target.text.as_str()), ("<<<", "ls"));
        assert_eq!(s.fork_bombs, [":"]);
    }

    #[test]
    fn paths_resolve_lexically() {
        assert_eq!(resolve(Path::new("/home/u/ws"), "../../u"), Path::new("/home/u"));
        assert_eq!(resolve(Path::new("/"), "../.."), Path::new("/"));
        assert_eq!(lexical(Path::new("/a/./b/../c")), Path::new("/a/c"));
    }
}
