use super::*;

fn lines(md: &str) -> Vec<String> {
    render(md).lines.into_iter().map(|l| l.text).collect()
}

fn plain(md: &str) -> String {
    lines(md).iter().map(|l| format!("{}\n", strip_ansi(l))).collect()
}

#[test]
fn inline_styles_open_and_close_within_their_line() {
    let got = lines("Use **bold**, *it*, ~~old~~ and `cargo test`.");
    assert_eq!(
        got,
        ["Use \x1b[1mbold\x1b[0m, \x1b[3mit\x1b[0m, \x1b[9mold\x1b[0m and \x1b[36mcargo test\x1b[0m."]
    );
    // Bold across a soft break is closed at the end of the first line and opened again.
    let got = lines("a **b\nc** d");
    assert_eq!(got, ["a \x1b[1mb\x1b[0m", "\x1b[1mc\x1b[0m d"]);
    // Not emphasis: a lone star, `2 ** 10`.
    assert_eq!(plain("2 * 3 = 6 and 2 ** 10"), "2 * 3 = 6 and 2 ** 10\n");
}

#[test]
fn headings_lists_quotes_and_rules() {
    let md = "# Title\n\nText\n\n- first\n  * nested **b**\n- [x] done\n\n3. three\n4. four\n\n> quoted\n> more\n\n---\n";
    assert_eq!(
        plain(md),
        "Title\n\nText\n\n• first\n  • nested b\n• [x] done\n\n3. three\n4. four\n\n│ quoted\n│ more\n\n────────────────────────\n"
    );
    let got = lines(md);
    assert_eq!(got[0], "\x1b[1;4mTitle\x1b[0m");
    assert!(got[4].starts_with("\x1b[36m•\x1b[39m first"), "{got:?}");
    let r = render(md);
    let kinds: Vec<BlockKind> = r.blocks.iter().map(|b| b.kind).collect();
    use BlockKind::*;
    assert_eq!(kinds, [Heading, Paragraph, List, List, Quote, Rule]);
    let text = &r.blocks[1];
    assert_eq!((text.first_line, text.source_start), (2, md.find("Text").unwrap_or(usize::MAX)));
}

#[test]
fn links_show_their_address_unless_it_is_their_text() {
    let got = lines("See [the docs](https://x.y/a_(b)) and <https://x.y> and [https://x.y](https://x.y).");
    assert_eq!(strip_ansi(&got[0]), "See the docs (https://x.y/a_(b)) and https://x.y and https://x.y.");
    assert!(got[0].contains(" (\x1b[2;4mhttps://x.y/a_(b)\x1b[0m)"), "{got:?}");
    let got = lines("- **see [a](u) now** x");
    assert_eq!(strip_ansi(&got[0]), "• see a (u) now x");
    assert!(got[0].contains("\x1b[0m\x1b[1m) now"), "bold goes on after the address: {got:?}");
    assert_eq!(plain("![img](p.png) and [a [b] c] x[]"), "img (p.png) and [a [b] c] x[]\n");
    assert_eq!(plain("`[c](d)`"), "[c](d)\n");
}

#[test]
fn table_is_aligned_with_a_bold_header() {
    let md = "| Name | Size | Note |\n|:-----|-----:|:---:|\n| a.rs | 1 | ok |\n| héllo wörld 日本 | 12345 | **big** |\n";
    let expected = "Name             │  Size │ Note\n\
                    ─────────────────┼───────┼─────\n\
                    a.rs             │     1 │  ok\n\
                    héllo wörld 日本 │ 12345 │ big\n";
    assert_eq!(plain(md), expected);
    let r = render(md);
    assert!(r.lines[0].text.starts_with("\x1b[1mName"), "header bold: {:?}", r.lines[0]);
    assert!(r.lines.iter().all(|l| l.kind == LineKind::Fixed && l.text.ends_with("\x1b[0m")));
    // As GitHub shows it: a missing cell is blank, cells past the header's are left out.
    assert_eq!(plain("| a | b |\n|---|---|\n| 1 |\n| 2 | 3 | 4 |\n"), "a │ b\n──┼──\n1 │ \n2 │ 3\n");
    // Not a table without its separator row, nor inside code.
    assert_eq!(plain("| not | a table\n| x |\n"), "| not | a table\n| x |\n");
}

#[test]
fn fenced_code_is_highlighted_by_its_grammar() {
    let code = "fn main() {\n    let x = \"s\"; // c\n}\n";
    let r = render(&format!("```rust\n{code}```\n"));
    let got: Vec<&str> = r.lines.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(strip_ansi(&got.join("\n")), format!("```rust\n{code}```"));
    assert!(got[1].starts_with("\x1b[38;") && got[1].contains("mfn\x1b["), "`fn` coloured: {got:?}");
    assert!(got[2].matches("\x1b[38;").count() >= 3, "{got:?}");
    assert!(got[1..4].iter().all(|l| l.ends_with("\x1b[0m")));
    assert!(r.lines.iter().all(|l| l.kind == LineKind::Fixed));
    for fence in ["```nosuchlang", "```", "~~~é"] {
        let close = &fence[..3];
        let got = plain(&format!("{fence}\nhello <world> \"x\" é日本\n{close}\n"));
        assert!(got.contains("\nhello <world> \"x\" é日本\n"), "{fence}: {got:?}");
    }
}

#[test]
fn common_languages_get_colour() {
    for (lang, line) in [
        ("rs", "pub fn f() {}"),
        ("python title=\"a.py\"", "import os"),
        ("ts", "const f = async (a, b) => a + b;"),
        ("sh", "echo \"$HOME\" | grep -v x"),
        ("console", "$ cargo test"),
        ("go", "func main() { fmt.Println(\"x\") }"),
        ("json", "{\"a\": [1, true]}"),
        ("yaml", "key: 'value'"),
        ("cpp", "std::vector<int> v{1};"),
        ("diff", "+added"),
        ("{.rust}", "fn f() {}"),
        ("RUST,ignore", "fn f() {}"),
    ] {
        let got = lines(&format!("```{lang}\n{line}\n```\n"));
        assert!(got[1].contains("\x1b[38;"), "{lang}: {got:?}");
        assert_eq!(strip_ansi(&got[1]), line, "{lang}");
    }
}

#[test]
fn raw_html_is_text() {
    assert_eq!(plain("a <b>x</b>\n\n<div>\nblock\n</div>\n"), "a <b>x</b>\n\n<div>\nblock\n</div>\n");
}

#[test]
fn odd_input_never_panics() {
    let long = "x".repeat(20_000);
    for md in [
        String::new(),
        "\n\n".into(),
        "```".into(),
        "# ".into(),
        "[a](".into(),
        "**[a](b)".into(),
        "| a |\n|:|\n".into(),
        "| a |\n|---|\n| b | c | d | e |\n| \\| |\n".into(),
        "> - > 1. ```\n".into(),
        "[^1]\n\n[^1]: note\n".into(),
        format!("```rust\nlet s = \"{long}\";\n"),
        format!("| {long} | é |\n|---|---|\n| 日本 |\n"),
        format!("[{long}]({long})\n"),
    ] {
        let r = render(&md);
        assert!(r.lines.iter().all(|l| !l.text.contains('\n')), "{md:?}");
    }
}
