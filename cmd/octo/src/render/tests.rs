use super::*;

/// What was printed, as text.
fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

fn render(chunks: &[&str], color: bool) -> String {
    let mut r = Renderer::new(color);
    let mut out = Vec::new();
    for c in chunks {
        r.text(c, &mut out);
    }
    r.finish(&mut out);
    text(&out)
}

/// Renders `text` one character at a time: the hardest chunking.
fn render_chars(text: &str, color: bool) -> String {
    let pieces: Vec<String> = text.chars().map(String::from).collect();
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    render(&refs, color)
}

/// What a renderer has printed after `chunks`, before it finishes.
fn shown(chunks: &[&str]) -> String {
    let mut r = Renderer::new(true);
    let mut out = Vec::new();
    for c in chunks {
        r.text(c, &mut out);
    }
    strip_ansi(&text(&out))
}

#[test]
fn without_color_the_markdown_passes_through_byte_for_byte() {
    let text = "Intro with [a link](https://e.x) and **bold**.\n# Title\n\
                | Name | Size |\n|---|--:|\n| é日本 | 1 |\n\
                ```rust\nfn main() { let s = \"[x](y)\"; }\n```\n\
                - item [t](u)\n| cut | off |\n|---|---|\n| 1";
    assert_eq!(render(&[text], false), format!("{text}\n"));
    assert_eq!(render_chars(text, false), format!("{text}\n"));
}

#[test]
fn the_same_output_whatever_the_chunking() {
    let text = "# Notes\n\nUse **bold**, *it* and `cargo test` now.\nA second line of the paragraph.\n\n\
                - first item with words\n  * nested **b**\n- [x] done\n\n1. one\n2. two\n\n> quoted words\n\n\
                See [the docs](https://x.y) here.\n\n| a | b |\n|---|--:|\n| 1 | 22 |\n\nafter the table\n\
                ```rust\nfn main() {}\n```\nand on.\n";
    let whole = render(&[text], true);
    assert_eq!(render_chars(text, true), whole);
    let words: Vec<String> = text.split_inclusive(' ').map(String::from).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    assert_eq!(render(&refs, true), whole);
    assert_eq!(
        strip_ansi(&whole),
        "Notes\n\nUse bold, it and cargo test now.\nA second line of the paragraph.\n\n\
         • first item with words\n  • nested b\n• [x] done\n\n1. one\n2. two\n\n│ quoted words\n\n\
         See the docs (https://x.y) here.\n\na │  b\n──┼───\n1 │ 22\n\nafter the table\n\n\
         ```rust\nfn main() {}\n```\n\nand on.\n"
    );
}

#[test]
fn a_line_streams_word_by_word_while_its_words_cannot_change() {
    assert_eq!(shown(&["Hello wor"]), "Hello");
    assert_eq!(shown(&["Hello wor", "ld and mo"]), "Hello world and");
    assert_eq!(shown(&["- an item being wri"]), "• an item being");
    // A style not yet closed waits for its line to end.
    assert_eq!(shown(&["Use **bold and mo"]), "");
    assert_eq!(shown(&["Use **bold** and mo"]), "Use bold and");
    // A new paragraph streams too, after its blank line.
    assert_eq!(shown(&["First.\n\nSecond par"]), "First.\n\nSecond");
    // A table row, a fence, a heading's hashes alone: held.
    assert_eq!(shown(&["| a | b"]), "");
    assert_eq!(shown(&["```rust\nfn ma"]), "```rust\n");
    assert_eq!(shown(&["## "]), "");
}

#[test]
fn tables_wait_for_their_last_row() {
    assert_eq!(shown(&["Sizes:\n| a | b |\n|---|---|\n| 1 | 2 |\n"]), "Sizes:\n\n");
    let out = render(&["| a | b |\n|---|---|\n| 1 | 22"], true);
    assert_eq!(strip_ansi(&out), "a │ b\n──┼───\n1 │ 22\n", "cut off by the end: still printed");
    let mut r = Renderer::new(true);
    let mut out = Vec::new();
    r.text("| a | b |\n|---|---|\n", &mut out);
    assert!(out.is_empty(), "held until the table ends");
    assert!(!r.at_line_start(), "so the caller finishes the table before printing elsewhere");
    r.finish(&mut out);
    assert_eq!(strip_ansi(&text(&out)), "a │ b\n──┼──\n");
    assert!(r.at_line_start());
}

#[test]
fn code_blocks_stream_line_by_line_highlighted() {
    let code = "fn main() {\n    let x = \"s\"; // c\n}\n";
    let mut r = Renderer::new(true);
    let mut out = Vec::new();
    r.text("Look:\n```rust\nfn main() {\n", &mut out);
    let so_far = text(&out);
    assert_eq!(strip_ansi(&so_far), "Look:\n\n```rust\nfn main() {\n");
    assert!(so_far.contains("mfn\x1b["), "`fn` coloured: {so_far:?}");
    r.text(&code["fn main() {\n".len()..], &mut out);
    r.text("```\n", &mut out);
    r.finish(&mut out);
    let out = text(&out);
    assert_eq!(strip_ansi(&out), format!("Look:\n\n```rust\n{code}```\n"));
    for line in out.lines().skip(3).take(3) {
        assert!(line.ends_with("\x1b[0m"), "a line ends reset: {line:?}");
    }
    // The highlighter's state is per block: a string left open does not colour the next.
    let out = render(&["```py\nx = \"\"\"open\n```\n```py\nplain\n```\n"], true);
    let plain = out.lines().nth(5).unwrap_or_default();
    assert_eq!(plain, "plain\x1b[0m", "{out:?}");
    // A block the answer never closes is printed by the end.
    assert_eq!(strip_ansi(&render(&["```\nopen"], true)), "```\nopen\n");
}

#[test]
fn wrapped_to_the_width_except_code_and_tables() {
    let mut r = Renderer::with_width(true, Some(20));
    let mut out = Vec::new();
    let long = "A hash map stores values under keys and finds them again.\n```\nlet a_very_long_line_of_code = 1;\n```\n";
    for c in long.split_inclusive(' ') {
        r.text(c, &mut out);
    }
    r.finish(&mut out);
    let out = strip_ansi(&text(&out));
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[..3].iter().all(|l| l.chars().count() <= 20), "{out}");
    assert!(out.contains("\nlet a_very_long_line_of_code = 1;\n"), "{out}");
}

#[test]
fn odd_input_never_panics() {
    let long = "x".repeat(20_000);
    let long_code = format!("```rust\nlet s = \"{long}\";\nfn f() {{}}\n");
    let long_row = format!("| {long} | é |\n|---|---|\n| 日本 |\n");
    let long_para = format!("{}\n", "word ".repeat(30_000));
    let cases = [
        "",
        "\n\n",
        "```",
        "# ",
        "\"unterminated",
        "é'ü\\",
        "#\n```\n#",
        "```rust\nfn main() {\n    let s = \"open",
        "|",
        "|\n|",
        "|\n|-\n|",
        "| a |\n|:|\n",
        "  | indented |\n  |---|\n  | row |\n",
        "[a](",
        "**[a](b)",
        "é[日本](ü)",
        "Title\n===\nText\n---\n",
        "> - > 1. ```\n",
        long_code.as_str(),
        long_row.as_str(),
        long_para.as_str(),
    ];
    for s in cases {
        for color in [true, false] {
            let out = render(&[s], color);
            if !color {
                assert!(!out.contains('\x1b'), "{s:?}");
            }
            if s.len() < 1000 {
                let _ = render_chars(s, color);
            }
        }
    }
}
