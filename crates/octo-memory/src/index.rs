//! `MEMORY.md`, a scope's index: the sections User, Project, Constraints, Consolidated Facts and
//! Scratch Notes, each line pointing at its entry where there is one. octo edits an index only
//! while it still has that shape; one edited by hand into any other shape is read as text and
//! left alone until a dream rewrites it.

/// The sections, in order.
pub const SECTIONS: [&str; 5] = ["User", "Project", "Constraints", "Consolidated Facts", "Scratch Notes"];

/// A new, empty index.
pub fn empty() -> String {
    let mut s = String::from("# Memory\n");
    for name in SECTIONS {
        s.push_str(&format!("\n## {name}\n"));
    }
    s
}

/// Whether `text` has each section heading exactly once (octo may then edit it line by line).
pub fn structured(text: &str) -> bool {
    SECTIONS.iter().all(|name| text.lines().filter(|l| heading(l) == Some(name)).count() == 1)
}

fn heading(line: &str) -> Option<&str> {
    line.strip_prefix("## ").map(str::trim)
}

/// The lines of Scratch Notes (notes not yet sorted into an entry or a section); for an index
/// not in octo's shape, none.
pub fn scratch_notes(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines.iter().position(|l| heading(l) == Some("Scratch Notes")) else {
        return Vec::new();
    };
    lines[start + 1..]
        .iter()
        .take_while(|l| !l.starts_with("## ") && !l.starts_with("# "))
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("<!--"))
        .copied()
        .collect()
}

/// The index line of an entry.
pub fn entry_line(name: &str, description: &str) -> String {
    format!("- [{name}]({name}.md): {}", crate::entry::one_line(description))
}

fn points_at(line: &str, name: &str) -> bool {
    line.contains(&format!("]({name}.md)"))
}

/// `text` with the entry `name`'s line replaced or added at the end of `section`; `None` when the
/// index is not in octo's shape.
pub fn upsert(text: &str, section: &str, name: &str, line: &str) -> Option<String> {
    if !structured(text) {
        return None;
    }
    let kept: Vec<&str> = text.lines().filter(|l| !points_at(l, name)).collect();
    Some(insert_in_section(&kept, section, line))
}

/// `text` without the entry `name`'s line; `None` when the index is not in octo's shape.
pub fn remove(text: &str, name: &str) -> Option<String> {
    if !structured(text) {
        return None;
    }
    let mut out: String = text.lines().filter(|l| !points_at(l, name)).collect::<Vec<_>>().join("\n");
    out.push('\n');
    Some(out)
}

/// `text` with a note added to Scratch Notes (at the end of a file not in octo's shape: adding a
/// line rewrites nothing).
pub fn append_scratch(text: &str, note: &str) -> String {
    if structured(text) {
        return insert_in_section(&text.lines().collect::<Vec<_>>(), "Scratch Notes", note);
    }
    let mut out = text.trim_end().to_owned();
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(note);
    out.push('\n');
    out
}

fn insert_in_section(lines: &[&str], section: &str, line: &str) -> String {
    let start = lines.iter().position(|l| heading(l) == Some(section)).unwrap_or(lines.len());
    let next = lines[start.saturating_add(1).min(lines.len())..]
        .iter()
        .position(|l| l.starts_with("## ") || l.starts_with("# "))
        .map_or(lines.len(), |i| start + 1 + i);
    // After the section's last non-blank line.
    let mut at = next;
    while at > start + 1 && lines[at - 1].trim().is_empty() {
        at -= 1;
    }
    let mut out: Vec<&str> = lines[..at].to_vec();
    out.push(line);
    out.extend_from_slice(&lines[at..]);
    if start == lines.len() {
        // No such section (cannot happen when structured): add it.
        out.insert(out.len() - 1, "");
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}

/// At most `budget` bytes of `text` for the prompt: headings stay, and when lines must go the
/// newest win — a line's age is `age(line)` (an entry's `updated`, a note's date; empty for
/// hand-written lines, which count as oldest), then its position (later is newer). Returns the
/// text and how many lines were left out.
pub fn fit(text: &str, budget: usize, age: &dyn Fn(&str) -> String) -> (String, usize) {
    if text.len() <= budget {
        return (text.to_owned(), 0);
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut used: usize = lines.iter().filter(|l| l.starts_with('#')).map(|l| l.len() + 1).sum();
    let mut order: Vec<(String, usize)> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .map(|(i, l)| (age(l), i))
        .collect();
    order.sort_by(|a, b| b.cmp(a));
    let mut keep = vec![false; lines.len()];
    let mut dropped = 0;
    for (_, i) in order {
        if used + lines[i].len() < budget {
            used += lines[i].len() + 1;
            keep[i] = true;
        } else {
            dropped += 1;
        }
    }
    let out: Vec<&str> =
        lines.iter().enumerate().filter(|(i, l)| l.starts_with('#') || keep[*i]).map(|(_, l)| *l).collect();
    (out.join("\n") + "\n", dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_notes_are_the_lines_of_their_section() {
        let text = append_scratch(
            &append_scratch(&empty(), "- 2026-12-01: tabs, not spaces"),
            "- 2026-12-01: run make test",
        );
        assert_eq!(scratch_notes(&text), ["- 2026-12-01: tabs, not spaces", "- 2026-12-01: run make test"]);
        assert!(scratch_notes(&empty()).is_empty());
        assert!(scratch_notes("free text\n").is_empty());
    }

    #[test]
    fn entries_go_in_their_section_and_replace_their_old_line() {
        let t = empty();
        assert!(structured(&t));
        let t = upsert(&t, "User", "tabs", &entry_line("tabs", "prefers tabs")).unwrap();
        let t = upsert(&t, "Project", "db", &entry_line("db", "postgres 16")).unwrap();
        let t = upsert(&t, "User", "tabs", &entry_line("tabs", "prefers tabs, width 4")).unwrap();
        assert_eq!(t.matches("tabs.md").count(), 1);
        let user = t.find("## User").unwrap();
        let project = t.find("## Project").unwrap();
        let line = t.find("- [tabs](tabs.md): prefers tabs, width 4").unwrap();
        assert!(user < line && line < project, "{t}");
        let t = append_scratch(&t, "- 2026-11-30: ci is flaky on mondays");
        assert!(t.trim_end().ends_with("ci is flaky on mondays"), "{t}");
        let t = remove(&t, "db").unwrap();
        assert!(!t.contains("db.md") && structured(&t));
    }

    #[test]
    fn a_hand_shaped_index_is_left_alone() {
        let hand = "My notes\n- always run make test\n";
        assert!(!structured(hand));
        assert_eq!(upsert(hand, "User", "x", "- [x](x.md): y"), None);
        assert_eq!(remove(hand, "x"), None);
        assert_eq!(append_scratch(hand, "- new"), "My notes\n- always run make test\n- new\n");
    }

    #[test]
    fn fitting_keeps_headings_and_the_newest_lines() {
        let mut t = empty();
        for i in 0..50 {
            t = append_scratch(&t, &format!("- 2026-11-{:02}: note {i} {}", 1 + i % 28, "x".repeat(40)));
        }
        let age = |l: &str| l.get(2..12).filter(|d| d.starts_with("20")).unwrap_or("").to_owned();
        let (fitted, dropped) = fit(&t, 600, &age);
        assert!(fitted.len() <= 600 && dropped > 0, "{} {dropped}", fitted.len());
        assert!(SECTIONS.iter().all(|s| fitted.contains(&format!("## {s}"))));
        assert!(fitted.contains("2026-11-28") && !fitted.contains("2026-11-01:"), "{fitted}");
    }
}
