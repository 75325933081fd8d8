//! The system prompt: its parts, the rules files and their includes and imports.

use super::*;

fn env(cwd: &Path) -> Environment {
    Environment {
        os: "linux (x86_64)".into(),
        shell: "sh".into(),
        cwd: cwd.to_path_buf(),
        git: Some("branch main".into()),
        date: "2026-11-30".into(),
        model: "anthropic:claude-sonnet-4-5".into(),
        user_home: None,
    }
}

#[test]
fn order_includes_and_bad_includes() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    std::fs::write(home.join("octorules.md"), "Always answer in English.").unwrap();
    std::fs::write(
        ws.join(".octorules"),
        "Use tabs.\n@include docs/style.md\n@include missing.md\n@include .octorules",
    )
    .unwrap();
    std::fs::write(ws.join("docs/style.md"), "Max line 100.\n@include ../.octorules").unwrap();
    std::fs::write(ws.join("AGENTS.md"), "Run make test.").unwrap();
    let parts =
        PromptParts { memory: Some("The user prefers short answers.".into()), ..PromptParts::default() };
    let p = assemble(&crate::home::Home::new(&home), &env(&ws), &parts)
        .replace(&tmp.path().display().to_string(), "<tmp>");
    insta::assert_snapshot!(p);
    let a = assemble(&crate::home::Home::new(&home), &env(&ws), &parts);
    assert_eq!(a, assemble(&crate::home::Home::new(&home), &env(&ws), &parts), "stable across calls");
}

#[test]
fn claude_codes_other_rules_files_are_read_in_its_order() {
    let tmp = tempfile::tempdir().unwrap();
    let (home, ws) = (tmp.path().join("home"), tmp.path().join("ws"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(ws.join(".claude/rules/frontend")).unwrap();
    std::fs::write(ws.join("CLAUDE.md"), "Shared rule.").unwrap();
    std::fs::write(ws.join(".claude/CLAUDE.md"), "Rule in .claude.").unwrap();
    std::fs::write(ws.join("CLAUDE.local.md"), "My sandbox URL.").unwrap();
    std::fs::write(ws.join(".claude/rules/style.md"), "---\ndescription: style\n---\nTabs.").unwrap();
    std::fs::write(ws.join(".claude/rules/frontend/react.md"), "Hooks only.").unwrap();
    std::fs::write(ws.join(".claude/rules/api.md"), "---\npaths:\n  - src/api/**\n---\nValidate input.")
        .unwrap();
    let p = assemble(&crate::home::Home::new(&home), &env(&ws), &PromptParts::default());
    let at = |t: &str| p.find(t).unwrap_or_else(|| panic!("{t} missing: {p}"));
    assert!(at("Shared rule.") < at("Rule in .claude.") && at("Rule in .claude.") < at("Hooks only."));
    assert!(at("Hooks only.") < at("Tabs.") && at("Tabs.") < at("My sandbox URL."));
    assert!(p.contains("# Project rules (.claude/rules/style.md)\nTabs.\n"), "frontmatter dropped: {p}");
    assert!(!p.contains("Validate input."), "a rule for some paths is not read at start: {p}");
}

#[test]
fn includes_stay_inside_the_project() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(tmp.path().join("secret.txt"), "TOKEN=abc").unwrap();
    std::fs::write(ws.join("AGENTS.md"), "@include ../secret.txt\n@include /dev/zero").unwrap();
    let r = load_rules(&ws.join("AGENTS.md")).unwrap();
    assert!(!r.contains("TOKEN"), "{r}");
    assert!(r.contains("skipped: it is outside"), "{r}");
}

#[test]
fn claude_md_imports_follow_claude_codes_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    let user = tmp.path().join("user");
    std::fs::create_dir_all(user.join(".ssh")).unwrap();
    std::fs::create_dir_all(user.join(".claude")).unwrap();
    std::fs::write(user.join(".claude/mine.md"), "My own rule.").unwrap();
    std::fs::write(ws.join("README.md"), "The project builds with make.").unwrap();
    std::fs::write(ws.join("docs/git.md"), "Rebase, never merge. See @../CLAUDE.md and @deeper.md").unwrap();
    std::fs::write(ws.join("docs/deeper.md"), "Deep rule.").unwrap();
    std::fs::write(user.join(".ssh/id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----").unwrap();
    std::fs::write(tmp.path().join("outside.md"), "OUTSIDE").unwrap();
    std::fs::write(
        ws.join("CLAUDE.md"),
        "See @README.md for the overview and @docs/git.md.\nKeys: @~/.ssh/id_rsa, @../outside.md, `@README.md`, @nobody, @~/.claude/mine.md\n",
    )
    .unwrap();
    let guard = Guard { secrets: octo_tools::secrets::Secrets::new(user.clone(), Vec::new()), inside: None };
    let r = load_rules_in(&ws.join("CLAUDE.md"), &mut Vec::new(), Some(user.clone()), &guard).unwrap();
    assert!(r.starts_with("See @README.md"), "the text stays: {r}");
    assert_eq!(r.matches("The project builds with make.").count(), 1, "{r}");
    assert!(r.contains("Rebase, never merge.") && r.contains("Deep rule."), "nested imports: {r}");
    assert!(r.contains("[@../CLAUDE.md skipped: it includes itself]"), "a loop ends: {r}");
    assert!(!r.contains("PRIVATE KEY") && r.contains("[@~/.ssh/id_rsa skipped: it holds secrets]"), "{r}");
    assert!(r.contains("My own rule."), "the user's home may be imported from: {r}");
    assert!(!r.contains("OUTSIDE") && r.contains("[@../outside.md skipped: it is outside"), "{r}");
    std::fs::write(ws.join("AGENTS.md"), "See @README.md").unwrap();
    assert_eq!(load_rules(&ws.join("AGENTS.md")).unwrap(), "See @README.md", "only CLAUDE.md imports");
    // The user's own ~/.claude/CLAUDE.md is read in every project, with its imports.
    std::fs::write(user.join(".claude/CLAUDE.md"), "Personal: @mine.md").unwrap();
    let e = Environment { user_home: Some(user), ..env(&ws) };
    let p = assemble(&crate::home::Home::new(tmp.path().join("octo")), &e, &PromptParts::default());
    assert!(p.contains("# User rules (~/.claude/CLAUDE.md)\nPersonal: @mine.md"), "{p}");
    assert!(p.contains("My own rule."), "{p}");
}

#[test]
fn big_rules_are_capped() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("CLAUDE.md"), "é".repeat(40_000)).unwrap();
    let r = load_rules(&tmp.path().join("CLAUDE.md")).unwrap();
    assert!(r.len() < MAX_RULES_BYTES + 100 && r.ends_with("[... rules cut at 32 KB]"));
    assert_eq!(load_rules(&tmp.path().join("nope.md")), None);
}

#[test]
fn rules_never_import_octos_own_secrets_or_read_out_of_their_root() {
    let tmp = tempfile::tempdir().unwrap();
    let (ws, user) = (tmp.path().join("ws"), tmp.path().join("user"));
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(user.join(".octo")).unwrap();
    let keys = user.join(".octo/keys.json");
    std::fs::write(&keys, "{\"anthropic\": \"sk-ant-SECRET\"}").unwrap();
    std::fs::write(user.join(".claude.json"), "{\"primaryApiKey\": \"sk-CLAUDE\"}").unwrap();
    std::fs::write(ws.join("sub/CLAUDE.md"), "Sub.\n@~/.octo/keys.json\n@~/.claude.json\n").unwrap();
    let guard =
        Guard { secrets: octo_tools::secrets::Secrets::new(user.clone(), vec![keys.clone()]), inside: None };
    let text = load_rules_in(&ws.join("sub/CLAUDE.md"), &mut Vec::new(), Some(user.clone()), &guard).unwrap();
    assert!(!text.contains("SECRET") && !text.contains("sk-CLAUDE"), "{text}");
    // A rules file that is itself a link to a secret is not read at all.
    std::os::unix::fs::symlink(&keys, ws.join("CLAUDE.md")).unwrap();
    assert_eq!(load_rules_in(&ws.join("CLAUDE.md"), &mut Vec::new(), Some(user), &guard), None);
    // Inside a root: a link out of it is not read.
    std::os::unix::fs::symlink(tmp.path().join("user/.octo"), ws.join("out")).unwrap();
    assert_eq!(load_rules_inside(&ws.join("out/keys.json"), &ws), None);
}
