//! Discovery: order, override, and every kind of bad file skipped with a notice.

use octo_skills::{listing, Catalog, Kind, Root, RootKind};
use std::path::Path;

fn skill(root: &Path, dir: &str, front: &str, body: &str) {
    std::fs::create_dir_all(root.join(dir)).unwrap();
    std::fs::write(root.join(dir).join("SKILL.md"), format!("---\n{front}---\n{body}")).unwrap();
}

fn ok(root: &Path, name: &str, description: &str) {
    skill(root, name, &format!("name: {name}\ndescription: {description}\n"), "Do it.\n");
}

#[test]
fn later_folders_win_and_say_so() {
    let t = tempfile::tempdir().unwrap();
    let (claude, octo, project) = (t.path().join("claude"), t.path().join("octo"), t.path().join("proj"));
    ok(&claude, "review", "from claude");
    ok(&claude, "only-claude", "kept");
    ok(&octo, "review", "from octo");
    ok(&project, "review", "from project");
    std::fs::create_dir_all(t.path().join("SKILLS")).unwrap();
    std::fs::write(
        t.path().join("SKILLS/deploy.md"),
        "---\nname: deploy\ndescription: Ship it\n---\nShip.\n",
    )
    .unwrap();
    let roots = [
        Root::new(&claude, "~/.claude/skills", RootKind::Skills),
        Root::new(&octo, "~/.octo/skills", RootKind::Skills),
        Root::new(t.path().join("missing"), "nowhere", RootKind::Skills),
        Root::new(&project, ".octo/skills", RootKind::Skills),
        Root::new(t.path().join("SKILLS"), "SKILLS", RootKind::SkillFiles),
    ];
    let (c, notices) = Catalog::discover(&roots);
    let names: Vec<&str> = c.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["deploy", "only-claude", "review"]);
    let review = c.get("review").unwrap();
    assert_eq!(review.description, "from project");
    assert_eq!(review.source, ".octo/skills");
    assert_eq!(notices.len(), 2, "{notices:?}");
    assert!(
        notices[1].contains("proj/review/SKILL.md replaces the one in") && notices[1].contains("octo/review")
    );
    assert_eq!(c.get("deploy").unwrap().kind, Kind::Skill);
}

#[test]
fn bad_skills_are_skipped_with_the_file_and_the_reason() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    ok(r, "good", "fine");
    skill(r, "notyaml", "name: notyaml\n[oops\n", "x");
    skill(r, "spaced", "name: Writing Hookify Rules\ndescription: Use when: writing rules\n", "x");
    skill(r, "noname", "description: no name\n", "x");
    skill(r, "nodesc", "name: nodesc\n", "x");
    skill(r, "blank", "name: blank\n", "\n\n");
    skill(r, "other-dir", "name: something-else\ndescription: d\n", "x");
    std::fs::create_dir_all(r.join("nofront")).unwrap();
    std::fs::write(r.join("nofront/SKILL.md"), "just text\n").unwrap();
    std::fs::create_dir_all(r.join("huge")).unwrap();
    let mut big = b"---\nname: huge\ndescription: big\n---\n".to_vec();
    big.resize(10 * 1024 * 1024, b'x');
    std::fs::write(r.join("huge/SKILL.md"), big).unwrap();
    std::fs::create_dir_all(r.join("empty-folder")).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(r.join("loop-a"), r.join("loop-b")).unwrap();
        std::os::unix::fs::symlink(r.join("loop-b"), r.join("loop-a")).unwrap();
        // A folder linking to its parent: discovery looks one level down, so it cannot loop.
        std::os::unix::fs::symlink(r, r.join("good").join("parent")).unwrap();
    }
    let (c, notices) = Catalog::discover(&[Root::new(r, "skills", RootKind::Skills)]);
    // As in Claude Code: no `name` is the folder's name, a different `name` is kept with a
    // notice, no frontmatter at all takes the body's first paragraph as the description.
    assert_eq!(
        c.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ["good", "nodesc", "nofront", "noname", "something-else", "spaced"]
    );
    // A display name with spaces is called by its folder's name, as Claude Code does.
    assert_eq!(c.get("spaced").unwrap().description, "Use when: writing rules");
    assert_eq!(c.get("nodesc").unwrap().description, "x");
    assert_eq!(c.get("nofront").unwrap().description, "just text");
    let find = |dir: &str| {
        notices
            .iter()
            .find(|n| n.contains(&format!("/{dir}")))
            .unwrap_or_else(|| panic!("no notice for {dir}: {notices:#?}"))
            .clone()
    };
    assert!(find("notyaml/SKILL.md").contains("not valid YAML"));
    assert!(!notices.iter().any(|n| n.contains("/noname/")), "{notices:#?}");
    assert!(find("blank/SKILL.md").contains("no `description`"));
    assert!(find("other-dir/SKILL.md")
        .contains("`something-else` is not its folder's name `other-dir`; it is listed as `something-else`"));
    assert!(!notices.iter().any(|n| n.contains("/nofront/")), "{notices:#?}");
    assert!(find("huge/SKILL.md").contains("10.5 MB"));
    #[cfg(unix)]
    assert!(find("loop-a").contains("symlink loop"), "{notices:#?}");
    assert!(!notices.iter().any(|n| n.contains("empty-folder")), "a folder without SKILL.md is not a skill");
    // The good one is still usable, bundled link and all.
    let text = octo_skills::load(c.get("good").unwrap(), "").unwrap();
    assert!(text.contains("Do it."), "{text}");
}

#[test]
fn commands_with_folders_optional_frontmatter_and_broken_templates() {
    let t = tempfile::tempdir().unwrap();
    let (user, project) = (t.path().join("user"), t.path().join("project"));
    std::fs::create_dir_all(user.join("frontend")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(user.join("fix-issue.md"), "# Fix an issue\nFix issue #$ARGUMENTS.\n").unwrap();
    std::fs::write(
        user.join("frontend/component.md"),
        "---\ndescription: Make a component\nargument-hint: NAME\nallowed-tools: Write, Edit\n---\nMake $1.\n",
    )
    .unwrap();
    std::fs::write(project.join("broken.md"), "---\ndescription: oops\n---\nStatus: !`git status\n").unwrap();
    std::fs::write(project.join("review.md"), "Review the project way.\n").unwrap();
    std::fs::write(user.join("review.md"), "Review the user way.\n").unwrap();
    // A skill of the same name hides a command.
    ok(&t.path().join("skills"), "fix-issue", "the skill wins");
    let roots = [
        Root::new(&user, "~/.claude/commands", RootKind::Commands),
        Root::new(&project, ".claude/commands", RootKind::Commands),
        Root::new(t.path().join("skills"), "skills", RootKind::Skills),
    ];
    let (c, notices) = Catalog::discover(&roots);
    let names: Vec<&str> = c.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["fix-issue", "frontend:component", "review"]);
    let comp = c.get("frontend:component").unwrap();
    assert_eq!((comp.kind, comp.description.as_str()), (Kind::Command, "Make a component"));
    assert_eq!(comp.allowed_tools, ["Write", "Edit"]);
    assert_eq!(comp.argument_hint.as_deref(), Some("NAME"));
    assert!(!comp.model_invocable);
    assert_eq!(c.get("fix-issue").unwrap().kind, Kind::Skill);
    assert!(c.get("review").unwrap().file.starts_with(&project));
    assert!(
        notices.iter().any(|n| n.contains("broken.md") && n.contains("line 4") && n.contains("never closed")),
        "{notices:#?}"
    );
    assert!(
        notices.iter().any(|n| n.contains("/fix-issue") && n.contains("hidden by the skill")),
        "{notices:#?}"
    );
}

#[test]
fn the_listing_fits_its_budget_and_names_what_did_not() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..30 {
        ok(t.path(), &format!("skill-{i:02}"), &"word ".repeat(40));
    }
    skill(
        t.path(),
        "hidden",
        "name: hidden\ndescription: only for users\ndisable-model-invocation: true\n",
        "x",
    );
    let (c, _) = Catalog::discover(&[Root::new(t.path(), "s", RootKind::Skills)]);
    let (text, notice) = listing(&c, "skill", 2000);
    let text = text.unwrap();
    assert!(text.len() <= 2000, "{}", text.len());
    assert!(text.contains("- skill-00: word word"));
    assert!(text.contains("\n- skill-29\n"), "every skill is listed, some by name only:\n{text}");
    assert!(!text.contains("hidden"));
    let notice = notice.unwrap();
    assert!(notice.contains("skill-29") && !notice.contains("skill-00,"), "{notice}");
    let (text, notice) = listing(&c, "skill", 64 * 1024);
    assert!(notice.is_none() && text.unwrap().lines().count() == 31);
    // Sorted and byte-stable from run to run.
    let (again, _) = Catalog::discover(&[Root::new(t.path(), "s", RootKind::Skills)]);
    assert_eq!(listing(&again, "skill", 2000).0, listing(&c, "skill", 2000).0);
}
