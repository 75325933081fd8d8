//! Fenced code highlighted by syntect's bundled grammars, as spans with `hl-` classes; the
//! grammars load the first time a block needs them.

use std::sync::OnceLock;
use syntect::highlighting::ThemeSet;
use syntect::html::{css_for_theme_with_class_style, ClassStyle, ClassedHTMLGenerator};
use syntect::parsing::{SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

/// The class prefix of highlighted spans (so they cannot collide with the page's own classes).
const STYLE: ClassStyle = ClassStyle::SpacedPrefixed { prefix: "hl-" };

/// A block larger than this is shown plain: highlighting it costs more than it helps.
const MAX_BLOCK: usize = 256 * 1024;

/// A line longer than this (minified code, base64) turns the block plain.
pub(crate) const MAX_LINE: usize = 4_000;

/// The bundled grammars, loaded on first use (shared by the HTML and terminal renderers).
pub(crate) fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// The language token of a fence's info string: ```` ```rust ````, ```` ```py title="a.py" ````,
/// ```` ```{.sh} ````, ```` ```rust,ignore ````, lowercased.
pub(crate) fn language(info: &str) -> String {
    info.trim()
        .trim_start_matches(['{', '.'])
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '{' | '}'))
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// The grammar for a fence's language, by name or file extension, with the common aliases that
/// the bundled grammars do not know (TypeScript is shown with the JavaScript grammar).
pub(crate) fn syntax<'a>(set: &'a SyntaxSet, lang: &str) -> Option<&'a SyntaxReference> {
    let token = match lang {
        "ts" | "typescript" | "tsx" | "jsx" | "mjs" | "cjs" | "javascript" | "node" => "js",
        "shell" | "zsh" | "console" | "shellsession" | "sh" => "bash",
        "golang" => "go",
        "c++" => "cpp",
        "python3" | "py3" => "py",
        "yml" => "yaml",
        other => other,
    };
    set.find_syntax_by_token(token)
}

/// The CSS for highlighted code in the dark (`dark`) or light theme; empty if the bundled theme
/// is missing.
pub fn theme_css(dark: bool) -> String {
    let name = if dark { "base16-ocean.dark" } else { "InspiredGitHub" };
    let themes = ThemeSet::load_defaults();
    themes.themes.get(name).and_then(|t| css_for_theme_with_class_style(t, STYLE).ok()).unwrap_or_default()
}

/// The inner HTML of a code block whose fence's info string is `info` (escaped, highlighted when
/// the language is known and the block is small enough).
pub(crate) fn highlight(code: &str, info: &str) -> String {
    let plain = code.len() > MAX_BLOCK || code.lines().any(|l| l.len() > MAX_LINE);
    let set = syntaxes();
    let lang = language(info);
    let syntax = (!plain && !lang.is_empty()).then(|| syntax(set, &lang)).flatten();
    let Some(syntax) = syntax else {
        return escape(code);
    };
    let mut gen = ClassedHTMLGenerator::new_with_class_style(syntax, set, STYLE);
    for line in LinesWithEndings::from(code) {
        if gen.parse_html_for_line_which_includes_newline(line).is_err() {
            return escape(code);
        }
    }
    gen.finalize()
}

/// `text` with `&`, `<`, `>` and quotes escaped.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
