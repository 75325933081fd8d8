//! One file's tags: the symbols it defines (name, kind, line and that line's text) and the
//! names it refers to (with how often), read with its language's tag query. A file that is
//! binary, not UTF-8, too large, mostly unparsable or not parsed in time is skipped, not
//! guessed at.

use crate::lang::Lang;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;
use tree_sitter::{ParseOptions, Parser, QueryCursor, StreamingIterator, Tree};

/// Files larger than this are not read (generated code, bundles, data).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The most characters of a definition's line kept.
const MAX_LINE_CHARS: usize = 120;

/// The most distinct names one file's references keep.
const MAX_REF_NAMES: usize = 4_000;

/// A symbol a file defines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Def {
    /// The symbol's name.
    pub name: String,
    /// What the query calls it: `function`, `method`, `class`, `interface`, `module`, `type` …
    pub kind: String,
    /// The line its name is on, from 1.
    pub line: u32,
    /// That line, trimmed and shortened.
    pub text: String,
}

/// What one file defines and refers to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileTags {
    /// Definitions, in the order of their lines.
    pub defs: Vec<Def>,
    /// Names referred to, with how many times.
    pub refs: BTreeMap<String, u32>,
}

/// Why a file has no tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Skip {
    /// It holds NUL bytes.
    Binary,
    /// It is not UTF-8.
    NotUtf8,
    /// It is larger than [`MAX_FILE_BYTES`].
    TooLarge,
    /// Most of it is not valid in its language.
    Unparsable,
    /// Its parse did not finish before the deadline.
    OutOfTime,
    /// It could not be read.
    Unreadable,
}

impl Skip {
    /// Whether another try, with more time, might succeed.
    pub fn is_transient(self) -> bool {
        matches!(self, Skip::OutOfTime)
    }
}

/// The tags of `source`, a file of `lang`, parsed before `deadline`.
pub fn extract(lang: Lang, source: &[u8], parser: &mut Parser, deadline: Instant) -> Result<FileTags, Skip> {
    if source.len() as u64 > MAX_FILE_BYTES {
        return Err(Skip::TooLarge);
    }
    if source.contains(&0) {
        return Err(Skip::Binary);
    }
    let text = std::str::from_utf8(source).map_err(|_| Skip::NotUtf8)?;
    let query = lang.query().ok_or(Skip::Unparsable)?;
    parser.set_language(&lang.grammar()).map_err(|_| Skip::Unparsable)?;
    let mut out_of_time = |_: &tree_sitter::ParseState| Instant::now() > deadline;
    let options = ParseOptions::new().progress_callback(&mut out_of_time);
    let tree = parser
        .parse_with_options(&mut |i, _| source.get(i..).unwrap_or_default(), None, Some(options))
        .ok_or(Skip::OutOfTime)?;
    parser.reset();
    if mostly_errors(&tree, source.len()) {
        return Err(Skip::Unparsable);
    }
    let names = query.capture_names();
    let mut tags = FileTags::default();
    let lines: Vec<&str> = text.lines().collect();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), source);
    while let Some(m) = matches.next() {
        let mut name = None;
        let mut kind = None;
        for c in m.captures {
            let capture = names.get(c.index as usize).copied().unwrap_or_default();
            if capture == "name" {
                name = Some(c.node);
            } else if let Some(k) = capture.strip_prefix("definition.") {
                kind = Some((true, k));
            } else if let Some(k) = capture.strip_prefix("reference.") {
                kind = Some((false, k));
            }
        }
        let (Some(node), Some((is_def, kind))) = (name, kind) else { continue };
        let Some(symbol) = text.get(node.byte_range()).filter(|s| !s.is_empty() && s.len() <= 200) else {
            continue;
        };
        if is_def && (kind == "module" || restates_trait(node)) {
            // `mod x;`, a namespace: the file list shows them, and their names collide with
            // calls (`format!` against `mod format`). What a trait's `impl` restates is the trait's.
            continue;
        }
        if is_def {
            let row = node.start_position().row;
            tags.defs.push(Def {
                name: symbol.to_owned(),
                kind: kind.to_owned(),
                line: u32::try_from(row + 1).unwrap_or(u32::MAX),
                text: line_text(lines.get(row).copied().unwrap_or_default()),
            });
        } else if let Some(n) = tags.refs.get_mut(symbol) {
            *n = n.saturating_add(1);
        } else if tags.refs.len() < MAX_REF_NAMES {
            tags.refs.insert(symbol.to_owned(), 1);
        }
    }
    tags.defs.sort_by_key(|d| d.line);
    let mut seen = std::collections::HashSet::new();
    tags.defs.retain(|d| seen.insert((d.line, d.name.clone())));
    Ok(tags)
}

/// Whether `name` names what a Rust `impl` block only restates: an associated type
/// (`type Item = …;`), or a method of a trait implementation (`fn fmt` in `impl Display for X`).
fn restates_trait(name: tree_sitter::Node<'_>) -> bool {
    let item = name.parent();
    let list = item.and_then(|i| i.parent());
    let block = list.and_then(|l| l.parent()).filter(|b| b.kind() == "impl_item");
    let in_impl = list.is_some_and(|d| d.kind() == "declaration_list") && block.is_some();
    let kind = item.map(|i| i.kind()).unwrap_or_default();
    in_impl
        && (kind == "type_item"
            || (kind == "function_item" && block.is_some_and(|b| b.child_by_field_name("trait").is_some())))
}

/// A line as shown in the map: trimmed, at most [`MAX_LINE_CHARS`] characters.
fn line_text(line: &str) -> String {
    let line = line.trim();
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

/// Whether more than half of the file's bytes are inside error nodes (or the whole is one).
fn mostly_errors(tree: &Tree, len: usize) -> bool {
    let root = tree.root_node();
    if !root.has_error() {
        return false;
    }
    if root.is_error() {
        return true;
    }
    let mut error_bytes = 0usize;
    let mut cursor = root.walk();
    let mut descend = true;
    loop {
        let node = cursor.node();
        if descend && node.is_error() {
            error_bytes += node.byte_range().len();
        }
        let go_down = descend && node.has_error() && !node.is_error();
        if (go_down && cursor.goto_first_child()) || cursor.goto_next_sibling() {
            descend = true;
        } else if cursor.goto_parent() {
            descend = false;
        } else {
            break;
        }
    }
    error_bytes.saturating_mul(2) > len
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn tags(lang: Lang, src: &str) -> Result<FileTags, Skip> {
        extract(lang, src.as_bytes(), &mut Parser::new(), Instant::now() + Duration::from_secs(5))
    }

    fn def_names(t: &FileTags) -> Vec<&str> {
        t.defs.iter().map(|d| d.name.as_str()).collect()
    }

    #[test]
    fn rust_definitions_and_references() {
        let t = tags(
            Lang::Rust,
            "use crate::store::Store;\n\npub struct Cache { store: Store }\n\nimpl Cache {\n    pub fn get(&self) -> u32 {\n        helper(self.store.load())\n    }\n}\n\nfn helper(x: u32) -> u32 { x }\n",
        )
        .unwrap();
        assert_eq!(def_names(&t), ["Cache", "get", "helper"]);
        assert_eq!(t.defs[1].line, 6);
        assert_eq!(t.defs[1].text, "pub fn get(&self) -> u32 {");
        for name in ["Store", "helper", "load"] {
            assert!(t.refs.contains_key(name), "{name} in {:?}", t.refs);
        }
    }

    #[test]
    fn each_language_yields_its_definitions() {
        let cases: &[(Lang, &str, &str)] = &[
            (Lang::Python, "class Shop:\n    def buy(self):\n        pay()\n", "buy"),
            (Lang::JavaScript, "function total(a) { return sum(a); }\n", "total"),
            (
                Lang::TypeScript,
                "interface Cart { n: number }\nfunction add(c: Cart): Cart { return c; }\n",
                "Cart",
            ),
            (Lang::Tsx, "export function View(): JSX.Element { return <div/>; }\n", "View"),
            (Lang::Go, "package m\nfunc Open(p string) error { return nil }\n", "Open"),
            (Lang::C, "int area(int w, int h) { return w * h; }\n", "area"),
            (Lang::Cpp, "class Shape { public: int area(); };\nint Shape::area() { return 1; }\n", "Shape"),
            (Lang::Java, "class Account { void deposit(int n) { log(n); } }\n", "deposit"),
        ];
        for (lang, src, want) in cases {
            let t = tags(*lang, src).unwrap();
            assert!(def_names(&t).contains(want), "{lang:?}: {:?}", t.defs);
        }
    }

    #[test]
    fn c_references_come_from_octos_patterns() {
        let t = tags(Lang::C, "struct point p;\nint main(void) { return area(2, 3); }\n").unwrap();
        assert!(t.refs.contains_key("area"), "{:?}", t.refs);
    }

    #[test]
    fn bad_files_are_skipped_with_a_reason() {
        assert_eq!(tags(Lang::Rust, "fn a() {}\0\0"), Err(Skip::Binary));
        assert_eq!(
            extract(Lang::Rust, b"fn \xff() {}", &mut Parser::new(), Instant::now() + Duration::from_secs(1)),
            Err(Skip::NotUtf8)
        );
        let garbage = ")))) ]]]] }}}} ;;;; @@@@ #### )))) ]]]] }}}} ;;;;\n".repeat(20);
        assert_eq!(tags(Lang::Rust, &garbage), Err(Skip::Unparsable));
        let big = "fn a() {}\n".repeat(120_000);
        assert_eq!(tags(Lang::Rust, &big), Err(Skip::TooLarge));
        let past =
            extract(Lang::Rust, "fn a() {}\n".repeat(50_000).as_bytes(), &mut Parser::new(), Instant::now());
        assert_eq!(past, Err(Skip::OutOfTime));
    }

    #[test]
    fn a_small_error_keeps_the_rest_of_the_file() {
        let good: String = (0..10).map(|i| format!("fn good_{i}(x: u32) -> u32 {{ x + {i} }}\n")).collect();
        let t = tags(Lang::Rust, &format!("{good}fn broken( {{\n")).unwrap();
        assert!(def_names(&t).contains(&"good_3"), "{:?}", t.defs);
    }

    #[test]
    fn modules_and_trait_restatements_are_not_landmarks() {
        let src = "mod format;\nstruct Id(u32);\nimpl std::fmt::Display for Id {\n    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { Ok(()) }\n}\nimpl Iterator for Id {\n    type Item = u32;\n    fn next(&mut self) -> Option<u32> { None }\n}\nimpl Id {\n    fn value(&self) -> u32 { self.0 }\n}\n";
        let t = tags(Lang::Rust, src).unwrap();
        assert_eq!(def_names(&t), ["Id", "value"]);
    }

    #[test]
    fn long_lines_are_shortened() {
        let long = format!("fn f() {{ let x = \"{}\"; }}", "y".repeat(300));
        let t = tags(Lang::Rust, &long).unwrap();
        assert!(t.defs[0].text.chars().count() <= MAX_LINE_CHARS + 1);
        assert!(t.defs[0].text.ends_with('…'));
    }
}
