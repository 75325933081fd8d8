//! The `skill` tool, and a skill laid out exactly as Claude Code documents it.

use octo_agent::{ToolContext, ToolSource};
use octo_skills::{Activation, Catalog, Root, RootKind, SharedCatalog, Skill, SkillSource};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// A skill folder as Claude Code's documentation shows one: frontmatter with the fields it uses,
/// a reference file and a script beside SKILL.md.
fn claude_layout(root: &std::path::Path) {
    let dir = root.join("pdf-processing");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: pdf-processing\ndescription: Extract text and tables from PDF files, fill forms, merge documents. Use when working with PDF files.\nallowed-tools: Read, Grep, Glob, Bash(python:*)\nargument-hint: [file]\n---\n\n# PDF Processing\n\n## Quick start\n\nRun the extractor on $ARGUMENTS:\n\n```bash\npython ${CLAUDE_SKILL_DIR}/scripts/extract.py $ARGUMENTS\n```\n\nFor forms, see [FORMS.md](FORMS.md).\n",
    )
    .unwrap();
    std::fs::write(dir.join("FORMS.md"), "# Forms\n").unwrap();
    std::fs::write(dir.join("scripts/extract.py"), "print('text')\n").unwrap();
}

#[derive(Default)]
struct Record(Mutex<Vec<(String, Vec<String>)>>);

impl Activation for Record {
    fn activate(&self, skill: &Skill) -> Option<String> {
        self.0.lock().unwrap().push((skill.name.clone(), skill.allowed_tools.clone()));
        Some("Only the skill's tools may run until this turn ends.".into())
    }
}

#[tokio::test]
async fn the_tool_loads_a_claude_code_skill_unchanged() {
    let t = tempfile::tempdir().unwrap();
    claude_layout(t.path());
    let (c, notices) = Catalog::discover(&[Root::new(t.path(), "~/.claude/skills", RootKind::Skills)]);
    assert!(notices.is_empty(), "{notices:?}");
    let skill = c.get("pdf-processing").unwrap();
    assert_eq!(skill.allowed_tools, ["Read", "Grep", "Glob", "Bash(python:*)"]);
    assert_eq!(skill.argument_hint.as_deref(), Some("[file]"));
    let shared = Arc::new(SharedCatalog::new(c));
    let record = Arc::new(Record::default());
    let source = SkillSource::new(Arc::clone(&shared), Some(record.clone() as Arc<dyn Activation>));
    let tools = source.tools();
    assert_eq!(tools.len(), 1);
    let tool = &tools[0];
    assert_eq!(tool.definition().name, "skill");
    let ctx = ToolContext::detached(t.path());
    let out = tool.execute(json!({"name": "pdf-processing", "arguments": "report.pdf"}), &ctx).await;
    assert!(!out.is_error, "{}", out.text_content());
    let text = out.text_content();
    let dir = t.path().join("pdf-processing");
    assert!(text.contains(&format!("python {}/scripts/extract.py report.pdf", dir.display())), "{text}");
    assert!(text.contains("FORMS.md, scripts/extract.py"), "bundled files listed: {text}");
    assert!(text.contains("Only the skill's tools may run"), "{text}");
    assert_eq!(record.0.lock().unwrap()[0].0, "pdf-processing");

    let out = tool.execute(json!({"name": "nope"}), &ctx).await;
    assert!(out.is_error && out.text_content().contains("pdf-processing"), "{}", out.text_content());
    let out = tool.execute(json!({"skill": "x"}), &ctx).await;
    assert!(out.is_error);

    // A reload that leaves no model-invocable skill takes the tool away (between turns).
    let before = source.generation();
    shared.replace(Catalog::default());
    assert_ne!(source.generation(), before);
    assert!(source.tools().is_empty());
}
