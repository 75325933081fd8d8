//! The languages the map reads: a file's language by its extension, and for each the grammar
//! and the tag query — the grammar's own `tags.scm` plus a few reference patterns of octo's
//! where the shipped query names definitions only (C, C++) or misses imports and types.

use std::path::Path;
use std::sync::OnceLock;
use tree_sitter::{Language, Query};

/// A language the map has a grammar for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    /// Rust.
    Rust,
    /// Python.
    Python,
    /// JavaScript (and JSX).
    JavaScript,
    /// TypeScript.
    TypeScript,
    /// TypeScript with JSX.
    Tsx,
    /// Go.
    Go,
    /// C.
    C,
    /// C++.
    Cpp,
    /// Java.
    Java,
}

/// Every language, in a fixed order (the index of a language's compiled query).
const ALL: [Lang; 9] = [
    Lang::Rust,
    Lang::Python,
    Lang::JavaScript,
    Lang::TypeScript,
    Lang::Tsx,
    Lang::Go,
    Lang::C,
    Lang::Cpp,
    Lang::Java,
];

const RUST_EXTRA: &str = r#"
(type_identifier) @name @reference.type
(use_declaration argument: (scoped_identifier name: (identifier) @name)) @reference.import
(use_list (identifier) @name) @reference.import
(use_list (scoped_identifier name: (identifier) @name)) @reference.import
(call_expression function: (scoped_identifier path: (identifier) @name)) @reference.type
(call_expression function: (scoped_identifier name: (identifier) @name)) @reference.call
"#;

const PYTHON_EXTRA: &str = r#"
(import_from_statement name: (dotted_name (identifier) @name)) @reference.import
(type (identifier) @name) @reference.type
(argument_list (identifier) @name) @reference.argument
"#;

const JS_EXTRA: &str = r#"
(import_specifier name: (identifier) @name) @reference.import
(new_expression constructor: (identifier) @name) @reference.class
(call_expression function: (member_expression property: (property_identifier) @name)) @reference.call
"#;

const TS_EXTRA: &str = r#"
(type_identifier) @name @reference.type
"#;

const C_EXTRA: &str = r#"
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
(type_identifier) @name @reference.type
"#;

const CPP_EXTRA: &str = r#"
(call_expression function: (qualified_identifier name: (identifier) @name)) @reference.call
"#;

const JAVA_EXTRA: &str = r#"
(type_identifier) @name @reference.type
"#;

impl Lang {
    /// The language of `path` by its extension, if the map reads it.
    pub fn of(path: &Path) -> Option<Lang> {
        let ext = path.extension()?.to_str()?;
        Some(match ext {
            "rs" => Lang::Rust,
            "py" | "pyi" => Lang::Python,
            "js" | "jsx" | "mjs" | "cjs" => Lang::JavaScript,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "go" => Lang::Go,
            "c" | "h" => Lang::C,
            "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" => Lang::Cpp,
            "java" => Lang::Java,
            _ => return None,
        })
    }

    /// The grammar.
    pub fn grammar(self) -> Language {
        match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::C => tree_sitter_c::LANGUAGE.into(),
            Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
        }
    }

    /// The tag query's source: the grammar's `tags.scm` and octo's extra references.
    fn query_source(self) -> String {
        let parts: &[&str] = match self {
            Lang::Rust => &[tree_sitter_rust::TAGS_QUERY, RUST_EXTRA],
            Lang::Python => &[tree_sitter_python::TAGS_QUERY, PYTHON_EXTRA],
            Lang::JavaScript => &[tree_sitter_javascript::TAGS_QUERY, JS_EXTRA],
            Lang::TypeScript | Lang::Tsx => {
                &[tree_sitter_javascript::TAGS_QUERY, JS_EXTRA, tree_sitter_typescript::TAGS_QUERY, TS_EXTRA]
            }
            Lang::Go => &[tree_sitter_go::TAGS_QUERY],
            Lang::C => &[tree_sitter_c::TAGS_QUERY, C_EXTRA],
            Lang::Cpp => &[tree_sitter_cpp::TAGS_QUERY, C_EXTRA, CPP_EXTRA],
            Lang::Java => &[tree_sitter_java::TAGS_QUERY, JAVA_EXTRA],
        };
        parts.join("\n")
    }

    /// The compiled tag query, built once per process; `None` if it does not compile for this
    /// grammar (then the language's files are skipped, and a test says so first).
    pub fn query(self) -> Option<&'static Query> {
        static QUERIES: [OnceLock<Option<Query>>; ALL.len()] = [const { OnceLock::new() }; ALL.len()];
        let index = ALL.iter().position(|l| *l == self)?;
        QUERIES[index].get_or_init(|| Query::new(&self.grammar(), &self.query_source()).ok()).as_ref()
    }

    /// Every language the map reads.
    pub fn all() -> &'static [Lang] {
        &ALL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_compiles_for_its_grammar() {
        for lang in Lang::all() {
            let source = lang.query_source();
            if let Err(e) = Query::new(&lang.grammar(), &source) {
                panic!("{lang:?}: {e}");
            }
        }
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(Lang::of(Path::new("a/b.rs")), Some(Lang::Rust));
        assert_eq!(Lang::of(Path::new("x.tsx")), Some(Lang::Tsx));
        assert_eq!(Lang::of(Path::new("x.hpp")), Some(Lang::Cpp));
        assert_eq!(Lang::of(Path::new("Makefile")), None);
        assert_eq!(Lang::of(Path::new("notes.md")), None);
    }
}
