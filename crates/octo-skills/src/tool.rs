//! The `skill` tool the model loads a skill with, and the tool source that offers it (only when
//! some skill may be loaded by the model).

use crate::discover::Catalog;
use crate::error::SkillFileError;
use crate::skill::Skill;
use crate::template::Part;
use async_trait::async_trait;
use octo_agent::{parse_input, ToolContext, ToolDefinition, ToolExecutor, ToolMeta, ToolOutput, ToolSource};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// The tool's name.
pub const SKILL_TOOL: &str = "skill";
/// At most this many bundled files are listed.
const MAX_LISTED_FILES: usize = 60;

/// What the application does when a skill becomes active: narrow the tools to its
/// `allowed-tools` until the turn ends. Returns a sentence for the model about what now holds,
/// or why the skill cannot run.
pub trait Activation: Send + Sync {
    /// Called before the skill's instructions are returned.
    fn activate(&self, skill: &Skill) -> Option<String>;
}

/// The session's skills, shared by the tool and the application (which replaces them on
/// `/skills reload`).
#[derive(Debug, Default)]
pub struct SharedCatalog {
    catalog: RwLock<Arc<Catalog>>,
    generation: AtomicU64,
}

impl SharedCatalog {
    /// Shares `catalog`.
    pub fn new(catalog: Catalog) -> Self {
        Self { catalog: RwLock::new(Arc::new(catalog)), generation: AtomicU64::new(0) }
    }

    /// The catalog as it is now.
    pub fn get(&self) -> Arc<Catalog> {
        Arc::clone(&self.catalog.read().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// Replaces the catalog.
    pub fn replace(&self, catalog: Catalog) {
        *self.catalog.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(catalog);
        self.generation.fetch_add(1, Ordering::Relaxed);
    }
}

/// Loads a skill's instructions for the model.
pub struct SkillTool {
    skills: Arc<SharedCatalog>,
    activation: Option<Arc<dyn Activation>>,
}

impl SkillTool {
    /// The tool over `skills`; `activation` narrows permissions while a skill is active.
    pub fn new(skills: Arc<SharedCatalog>, activation: Option<Arc<dyn Activation>>) -> Self {
        Self { skills, activation }
    }
}

#[derive(serde::Deserialize)]
struct Input {
    name: String,
    #[serde(default)]
    arguments: String,
}

#[async_trait]
impl ToolExecutor for SkillTool {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            SKILL_TOOL,
            "Load a listed skill: returns its instructions (follow them) and where its bundled files are.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "As listed."},
                    "arguments": {"type": "string", "description": "Optional."}
                },
                "required": ["name"]
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        // It only reads the skill's file; activation order matters, so calls run one at a time.
        ToolMeta::reads().concurrency_safe(false)
    }

    fn summary(&self, input: &Value) -> Option<String> {
        input.get("name").and_then(Value::as_str).map(str::to_owned)
    }

    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        let input: Input = match parse_input(SKILL_TOOL, input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let catalog = self.skills.get();
        let Some(skill) =
            catalog.get(input.name.trim().trim_start_matches('/')).filter(|s| s.model_invocable)
        else {
            let names: Vec<&str> =
                catalog.iter().filter(|s| s.model_invocable).map(|s| s.name.as_str()).collect();
            return ToolOutput::error(format!(
                "there is no skill `{}`; the skills are: {}",
                input.name,
                if names.is_empty() { "none".to_owned() } else { names.join(", ") }
            ));
        };
        match load(skill, &input.arguments) {
            Ok(text) => {
                let scope = match &self.activation {
                    Some(a) => a.activate(skill),
                    None => None,
                };
                ToolOutput::text(match scope {
                    Some(s) => format!("{text}\n\n{s}"),
                    None => text,
                })
            }
            Err(e) => ToolOutput::error(format!("the skill `{}` could not be loaded: {e}", skill.name)),
        }
    }
}

/// A skill's instructions for the model: the body with arguments filled in (commands in it are
/// left for the model to run with its own tools), and its bundled files.
pub fn load(skill: &Skill, arguments: &str) -> Result<String, SkillFileError> {
    let template = skill.template()?;
    let dir = skill.dir.as_deref().map(|d| d.display().to_string());
    let plugin = skill.plugin_root.as_deref().map(|d| d.display().to_string());
    let body: String = template
        .expand(arguments, crate::Dirs { skill: dir.as_deref(), plugin: plugin.as_deref() }, None)
        .into_iter()
        .map(|p| match p {
            Part::Text(t) => t,
            Part::Run(c) => format!("!`{c}`"),
            Part::Include(f) => format!("@{f}"),
        })
        .collect();
    let mut out = format!("<skill name=\"{}\">\n{}\n</skill>", skill.name, body.trim_end());
    if template.runs_commands() {
        out.push_str("\nLines with !`command` are commands whose output the skill expects: run them with your command tool.");
    }
    if let Some(dir) = &skill.dir {
        let files = bundled_files(dir, &skill.file);
        if !files.is_empty() {
            out.push_str(&format!(
                "\nThis skill's folder is {}; its files (paths relative to it): {}",
                dir.display(),
                files.join(", ")
            ));
        }
    }
    Ok(out)
}

/// The files beside a skill (not following symlinked folders, a few levels deep, capped).
fn bundled_files(dir: &Path, skill_file: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((d, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        let mut entries: Vec<_> = rd.flatten().collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for e in entries {
            let path = e.path();
            if path == skill_file || e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && depth < 3 {
                stack.push((path, depth + 1));
            } else if !is_dir {
                if out.len() == MAX_LISTED_FILES {
                    out.push("…".to_owned());
                    return out;
                }
                out.push(path.strip_prefix(dir).unwrap_or(&path).display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// The `skill` tool as a source: offered while some skill may be loaded by the model.
pub struct SkillSource {
    skills: Arc<SharedCatalog>,
    tool: Arc<dyn ToolExecutor>,
}

impl SkillSource {
    /// The source over `skills`.
    pub fn new(skills: Arc<SharedCatalog>, activation: Option<Arc<dyn Activation>>) -> Self {
        let tool = Arc::new(SkillTool::new(Arc::clone(&skills), activation));
        Self { skills, tool }
    }
}

impl ToolSource for SkillSource {
    fn id(&self) -> &str {
        "skills"
    }

    fn tools(&self) -> Vec<Arc<dyn ToolExecutor>> {
        if self.skills.get().any_model_invocable() {
            vec![Arc::clone(&self.tool)]
        } else {
            Vec::new()
        }
    }

    fn generation(&self) -> u64 {
        self.skills.generation.load(Ordering::Relaxed)
    }
}
