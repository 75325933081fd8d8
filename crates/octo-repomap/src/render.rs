//! The map as text: files with their key definitions (line number and the line itself), the
//! most important first, as many as fit in the token budget, then a line on what was left out
//! and whether the map is partial. Tokens are estimated as four characters each.

use crate::rank::Ranked;
use crate::scan::Progress;
use std::collections::HashMap;
use std::fmt::Write as _;

/// Tokens kept for the heading and the closing notes (about 75 at their longest).
const RESERVED: usize = 100;

/// Estimated tokens of `s`.
pub fn tokens(s: &str) -> usize {
    s.chars().count().div_ceil(4)
}

/// The map of `ranked` within `budget` tokens.
pub fn render(ranked: &[Ranked<'_>], budget: usize, progress: &Progress, files_read: usize) -> String {
    let room = budget.saturating_sub(RESERVED);
    let mut used = 0;
    let mut order: Vec<&str> = Vec::new();
    let mut chosen: HashMap<&str, Vec<&Ranked<'_>>> = HashMap::new();
    for r in ranked {
        let line_cost = tokens(&def_line(r)) + 1;
        let header_cost = if chosen.contains_key(r.file) { 0 } else { tokens(r.file) + 1 };
        if used + line_cost + header_cost > room {
            break;
        }
        used += line_cost + header_cost;
        chosen.entry(r.file).or_insert_with(|| {
            order.push(r.file);
            Vec::new()
        });
        if let Some(list) = chosen.get_mut(r.file) {
            list.push(r);
        }
    }
    let shown: usize = chosen.values().map(Vec::len).sum();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Repository map: {files_read} files, {} definitions; the most referenced first, {shown} shown.",
        ranked.len()
    );
    for file in &order {
        let _ = writeln!(out, "{file}");
        let mut defs = chosen.get(file).cloned().unwrap_or_default();
        defs.sort_by_key(|r| r.def.line);
        for r in defs {
            let _ = writeln!(out, "{}", def_line(r));
        }
    }
    if shown < ranked.len() {
        let left = ranked.len() - shown;
        let _ = writeln!(
            out,
            "({left} more definitions not shown: raise `budget`, or give `focus` paths or symbols.)"
        );
    }
    if progress.is_partial() {
        let seen = progress.found - progress.pending;
        let more = if progress.walk_cut { "+" } else { "" };
        let _ = writeln!(
            out,
            "Partial map: {seen} of {}{more} source files read within the time budget; call repo_map again to read more.",
            progress.found
        );
    }
    out
}

/// A definition's line in the map.
fn def_line(r: &Ranked<'_>) -> String {
    format!("  {:>5}: {}", r.def.line, r.def.text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::Def;

    fn defs(n: usize) -> Vec<Def> {
        (0..n)
            .map(|i| Def {
                name: format!("f{i}"),
                kind: "function".into(),
                line: i as u32 + 1,
                text: format!("pub fn function_number_{i}(x: u32) -> u32 {{"),
            })
            .collect()
    }

    #[test]
    fn the_budget_holds() {
        let all = defs(500);
        let ranked: Vec<Ranked<'_>> = all
            .iter()
            .enumerate()
            .map(|(i, d)| Ranked {
                file: if i % 2 == 0 { "src/even.rs" } else { "src/odd.rs" },
                def: d,
                score: 1.0,
            })
            .collect();
        for budget in [100, 300, 1_000, 4_000] {
            let text = render(&ranked, budget, &Progress::default(), 2);
            assert!(tokens(&text) <= budget, "{budget}: {}", tokens(&text));
            assert!(text.contains("more definitions not shown"), "{text}");
        }
        let text = render(&ranked, 1_000, &Progress::default(), 2);
        assert!(text.contains("src/even.rs\n"), "{text}");
        assert!(text.contains("      1: pub fn function_number_0"), "{text}");
    }

    #[test]
    fn a_partial_map_with_hidden_definitions_keeps_the_budget() {
        let all = defs(300);
        let ranked: Vec<Ranked<'_>> = all
            .iter()
            .map(|d| Ranked { file: "src/a_rather_long/path/to_a/module_file.rs", def: d, score: 1.0 })
            .collect();
        let p = Progress { found: 123_456, parsed: 800, pending: 100_000, walk_cut: true };
        for budget in [100, 150, 500] {
            let text = render(&ranked, budget, &p, 123_456);
            assert!(tokens(&text) <= budget, "{budget}: {} in {text}", tokens(&text));
            assert!(text.contains("Partial map") && text.contains("not shown"), "{text}");
        }
    }

    #[test]
    fn a_partial_map_says_so() {
        let all = defs(1);
        let ranked = [Ranked { file: "a.rs", def: &all[0], score: 1.0 }];
        let p = Progress { found: 50_000, parsed: 800, pending: 49_000, walk_cut: false };
        let text = render(&ranked, 1_000, &p, 1_000);
        assert!(text.contains("Partial map: 1000 of 50000 source files"), "{text}");
        assert!(!text.contains("not shown"), "{text}");
    }
}
