use super::*;
use crate::theme_css;

#[test]
fn tables_emphasis_headings_and_task_lists_render() {
    let html = to_html(
        "## Title\n\n*it* **bold** ~~old~~\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo\n",
    );
    assert!(html.contains("<h2>Title</h2>"), "{html}");
    assert!(
        html.contains("<em>it</em>")
            && html.contains("<strong>bold</strong>")
            && html.contains("<del>old</del>")
    );
    assert!(html.contains("<table>") && html.contains("<th>a</th>") && html.contains("<td>2</td>"), "{html}");
    assert!(html.contains("☑ done") && html.contains("☐ todo") && !html.contains("<input"), "{html}");
}

#[test]
fn links_are_safe_and_open_apart() {
    let html = to_html("[docs](https://example.com/x) and [bad](javascript:alert(1)) and [rel](/api/x)");
    assert!(html.contains("href=\"https://example.com/x\""), "{html}");
    assert!(html.contains("target=\"_blank\"") && html.contains("noopener"), "{html}");
    assert!(!html.contains("javascript:"), "{html}");
    assert!(!html.contains("href=\"/api/x\""), "a relative link could reach the API: {html}");
}

#[test]
fn raw_html_and_scripts_stay_text() {
    let html = to_html("hi <script>alert(1)</script> <b onclick=\"x()\">b</b>\n\n<div style=\"position:fixed\">cover</div>\n");
    assert!(!html.contains("<script") && !html.contains("<div") && !html.contains("<b "), "{html}");
    assert!(html.contains("&lt;script&gt;"), "shown as text: {html}");
}

#[test]
fn images_become_links_that_are_not_fetched() {
    let html = to_html("![secret](https://evil.example/p.png?d=abc)");
    assert!(!html.contains("<img"), "{html}");
    assert!(html.contains("<a href=\"https://evil.example/p.png?d=abc\""), "{html}");
}

#[test]
fn code_is_highlighted_with_its_language() {
    let html = to_html("```rust\nlet x = \"<y>\";\n```\n");
    assert!(html.contains("<code class=\"language-rust\">"), "{html}");
    assert!(html.contains("class=\"hl-"), "{html}");
    assert!(html.contains("&lt;y&gt;") && !html.contains("<y>"), "{html}");
    let plain = to_html("```\n<b>x</b>\n```\n");
    assert!(plain.contains("&lt;b&gt;x&lt;/b&gt;"), "{plain}");
}

#[test]
fn a_huge_code_block_is_capped_and_plain() {
    let src = format!("```js\n{}\n```\n", "x = 1; // <script>\n".repeat(600_000));
    assert!(src.len() > 10 << 20);
    let html = to_html(&src);
    assert!(html.len() < 3 * MAX_SOURCE, "{}", html.len());
    assert!(html.contains("more not shown"), "the cut is said");
    assert!(!html.contains("<script"));
}

#[test]
fn theme_css_has_both_themes() {
    assert!(theme_css(true).contains(".hl-"));
    assert!(theme_css(false).contains(".hl-"));
}
