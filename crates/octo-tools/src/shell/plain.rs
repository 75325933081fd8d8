//! A command line built only of plain parts: simple commands whose words are literal (plain
//! words, single- and double-quoted text without expansions), joined by `&&`, `||`, `;`, `|`,
//! `&`, newlines and `( … )`, with no redirection but to `/dev/null` or between the standard
//! streams. What the grammar reads differently from the shell that runs it (octo runs `sh`,
//! which may be dash or bash: `$'…'`, `((…))`, `&>`), and every construct whose effect hides
//! from the words (declarations, tests, functions, arithmetic, here-documents, expansions,
//! assignments, negation, loops), makes the line not plain. Allow rules judge a compound
//! command part by part only when it is plain; anything else stays asked.

use super::syntax::unescape;
use tree_sitter::{Node, Parser};

/// How deep a plain line may nest (`( ( … ) )`).
const MAX_DEPTH: usize = 64;

/// The simple commands of `command`, each as its words after quote removal joined by spaces,
/// when the whole line is plain (see the module); `None` otherwise.
pub fn parts(command: &str) -> Option<Vec<String>> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
    let tree = parser.parse(command, None)?;
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    let mut out = Vec::new();
    walk(root, command.as_bytes(), &mut out, 0)?;
    (!out.is_empty()).then_some(out)
}

fn walk(n: Node<'_>, src: &[u8], out: &mut Vec<String>, depth: usize) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    match n.kind() {
        "program" | "list" | "pipeline" | "subshell" | "redirected_statement" => {
            let mut cursor = n.walk();
            for child in n.named_children(&mut cursor) {
                walk(child, src, out, depth + 1)?;
            }
            // Operators are anonymous: only those of a plain line may appear.
            let mut cursor = n.walk();
            let ops_ok = n.children(&mut cursor).filter(|c| !c.is_named()).all(|c| {
                matches!(c.utf8_text(src).unwrap_or(""), "&&" | "||" | ";" | "|" | "&" | "\n" | "(" | ")")
            });
            ops_ok.then_some(())
        }
        "comment" => Some(()),
        "file_redirect" => harmless(n, src),
        "command" => {
            out.push(command(n, src)?);
            Some(())
        }
        _ => None,
    }
}

/// A redirection that writes nowhere: `>`/`>>` to `/dev/null`, or `>&` between the standard
/// streams (`2>&1`).
fn harmless(n: Node<'_>, src: &[u8]) -> Option<()> {
    let mut cursor = n.walk();
    let mut op = String::new();
    let mut dest = Vec::new();
    for c in n.children(&mut cursor) {
        match (c.is_named(), c.kind()) {
            (false, _) => op.push_str(c.utf8_text(src).ok()?),
            (true, "file_descriptor") => {}
            (true, _) => dest.push(literal(c, src)?),
        }
    }
    let [dest] = dest.as_slice() else { return None };
    let fine = match op.as_str() {
        ">" | ">>" => dest == "/dev/null",
        ">&" => dest == "1" || dest == "2",
        _ => false,
    };
    fine.then_some(())
}

/// A simple command of literal words, as its words joined by spaces.
fn command(n: Node<'_>, src: &[u8]) -> Option<String> {
    let mut words = Vec::new();
    let mut cursor = n.walk();
    for c in n.named_children(&mut cursor) {
        match c.kind() {
            "command_name" => words.push(literal(c.named_child(0)?, src)?),
            "word" | "string" | "raw_string" | "concatenation" | "number" => words.push(literal(c, src)?),
            "file_redirect" => harmless(c, src)?,
            _ => return None,
        }
    }
    (!words.is_empty()).then(|| words.join(" "))
}

/// A word's text after quote removal, when it has no expansion of any kind.
fn literal(n: Node<'_>, src: &[u8]) -> Option<String> {
    let text = n.utf8_text(src).ok()?;
    match n.kind() {
        // A brace expansion can make a word into several, one of them a program.
        "word" | "number" if !text.contains(['{', '}', '$', '`']) => Some(unescape(text)),
        "raw_string" => Some(text.strip_prefix('\'')?.strip_suffix('\'')?.to_owned()),
        "string" => {
            let mut cursor = n.walk();
            let mut out = String::new();
            for c in n.named_children(&mut cursor) {
                if c.kind() != "string_content" {
                    return None;
                }
                let t = c.utf8_text(src).ok()?;
                if t.contains(['$', '`']) {
                    return None;
                }
                out.push_str(&unescape(t));
            }
            Some(out)
        }
        "concatenation" => {
            let mut cursor = n.walk();
            let pieces: Option<Vec<String>> =
                n.named_children(&mut cursor).map(|c| literal(c, src)).collect();
            Some(pieces?.concat())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::parts;

    #[test]
    fn plain_lines_split_into_their_commands() {
        assert_eq!(parts("git status && ls").unwrap(), ["git status", "ls"]);
        assert_eq!(
            parts("git status; ls -la\ncargo test -p 'a b'").unwrap(),
            ["git status", "ls -la", "cargo test -p a b"]
        );
        assert_eq!(
            parts("(git status) || echo \"it failed\" 2>&1 | head").unwrap(),
            ["git status", "echo it failed", "head"]
        );
        assert_eq!(parts("git status > /dev/null && ls 2>/dev/null").unwrap(), ["git status", "ls"]);
        assert_eq!(parts("ls # a comment; touch x").unwrap(), ["ls"]);
        // A keyword-like word is just the command's first word: a rule must allow `time ls`.
        assert_eq!(parts("time ls").unwrap(), ["time ls"]);
    }

    #[test]
    fn anything_that_hides_from_the_words_is_not_plain() {
        for line in [
            // The attacks that got through the first version, as found.
            "export 'GIT_CONFIG_COUNT=1' 'GIT_CONFIG_KEY_0=core.fsmonitor' 'GIT_CONFIG_VALUE_0=touch p; false'; git status",
            "ls() { echo hi; } >\"$(touch p)\"; ls",
            "ls() { echo hi; } >p8; ls",
            "ls; ((touch + p5))",
            "echo $'\\' ; touch p19 ; echo ' #'",
            "echo hi &>/dev/null touch p13",
            "ls; declare -i 'x=a[$(touch p1)]'",
            "ls; [[ 'a[$(touch p3)]' -eq 0 ]]",
            "ls; [ -v 'a[$(touch p25)]' ]",
            "ls; (( 'a[$(touch p5)]' ))",
            "ls; [ x > p23 ]",
            "ls >1",
            "echo pwned >2; ls",
            "ls; unset 'a[$(touch p2)]'",
            // And their kin.
            "ls; readonly X=1",
            "ls; local x",
            "ls; typeset x",
            "ls > out.txt",
            "ls >| out.txt",
            "ls >/dev/null 1>out.txt",
            "ls <in.txt",
            "cat <<EOF\nx\nEOF",
            "cat <<< hi",
            "ls $(echo src)",
            "ls `echo src`",
            "ls $HOME",
            "ls ${X}",
            "X=1 ls",
            "ls <(cat x)",
            "! ls",
            "for f in a; do ls; done",
            "if ls; then ls; fi",
            "case x in x) ls;; esac",
            "{ ls; }",
            "{touch,p} x",
            "ls {a,b}",
            "ls \"$X\"",
            "ls &>/dev/null",
            "ls |& head",
            "git status &&",
            "",
        ] {
            assert_eq!(parts(line), None, "{line:?}");
        }
    }
}
