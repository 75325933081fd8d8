//! # octo-skills
//!
//! Skills and custom slash commands for the octo coding agent, read from the Markdown files
//! Claude Code users already have, unchanged:
//!
//! - **skills**: `<dir>/<name>/SKILL.md` with YAML frontmatter (`name`, `description`, and where
//!   present `allowed-tools`, `argument-hint`, `model`, `disable-model-invocation`,
//!   `user-invocable`) and any bundled files beside it; also a project's `SKILLS/<name>.md`;
//! - **commands**: `commands/*.md` (`commands/<folder>/<name>.md` is `/folder:name`), frontmatter
//!   optional, the body a template with `$ARGUMENTS`, `$0`…, `@file` and `` !`command` ``.
//!
//! - **agent definitions** for sub-agents: `agents/<name>.md` ([`Agents::discover`]).
//!
//! [`Catalog::discover`] searches folders in order (a later one's entry replaces an earlier one of
//! the same name) and skips bad files with a notice naming the file and the reason. The system
//! prompt lists model-invocable skills within a budget ([`listing`]); the model loads one with the
//! `skill` tool ([`SkillTool`]), which asks the application to narrow the tools to the skill's
//! `allowed-tools` ([`Activation`]). The user runs one as `/name args`; the application expands it
//! ([`Template::expand`]) and runs its commands through its permission engine.
//!
//! **Layer:** adapter. Depends on `octo-agent` only (plus a YAML parser).
//!
//! ```
//! use octo_skills::{Catalog, Root, RootKind};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! std::fs::create_dir_all(dir.path().join("review"))?;
//! std::fs::write(
//!     dir.path().join("review/SKILL.md"),
//!     "---\nname: review\ndescription: Reviews a diff\n---\nReview $ARGUMENTS hunk by hunk.\n",
//! )?;
//! let (catalog, notices) = Catalog::discover(&[Root::new(dir.path(), "skills", RootKind::Skills)]);
//! assert!(notices.is_empty());
//! let review = catalog.get("review").ok_or("not found")?;
//! let text = octo_skills::load(review, "src/lib.rs")?;
//! assert!(text.contains("Review src/lib.rs hunk by hunk."));
//! # Ok(())
//! # }
//! ```

mod agents;
mod discover;
mod error;
pub mod frontmatter;
mod listing;
mod skill;
pub mod template;
mod tool;

pub use agents::{AgentDef, Agents};
pub use discover::{near_matches, Catalog, Root, RootKind};
pub use error::{FileErrorKind, SkillFileError};
pub use listing::{listing, LISTING_BUDGET};
pub use skill::{Kind, Skill, MAX_FILE_BYTES};
pub use template::{Dirs, Part, Template};
pub use tool::{load, Activation, SharedCatalog, SkillSource, SkillTool, SKILL_TOOL};
