//! The skills section of the system prompt: each model-invocable skill's name and description,
//! sorted, within a size budget. Only this goes into every request; bodies load on demand.

use crate::discover::Catalog;

/// The default size of the listing, in bytes.
pub const LISTING_BUDGET: usize = 4 * 1024;
/// The longest description listed, in characters.
const MAX_DESCRIPTION: usize = 250;

/// The listing of `catalog` within `budget` bytes (`None` without model-invocable skills), and a
/// notice naming the skills listed by name only because the budget ran out.
pub fn listing(catalog: &Catalog, tool_name: &str, budget: usize) -> (Option<String>, Option<String>) {
    let skills: Vec<_> = catalog.iter().filter(|s| s.model_invocable).collect();
    if skills.is_empty() {
        return (None, None);
    }
    let mut out = format!(
        "When a task matches a skill, first call `{tool_name}` with its name, then follow what it returns.\n"
    );
    // Names alone are always listed, so reserve room for them before any description.
    let names_only: usize = skills.iter().map(|s| s.name.len() + 3).sum();
    let mut room = budget.saturating_sub(out.len() + names_only);
    let mut short = Vec::new();
    for s in skills {
        let description: String = clean(&s.description).chars().take(MAX_DESCRIPTION).collect();
        let extra = description.len() + 2;
        if extra <= room {
            room -= extra;
            out.push_str(&format!("- {}: {description}\n", s.name));
        } else {
            short.push(s.name.as_str());
            out.push_str(&format!("- {}\n", s.name));
        }
    }
    let notice = (!short.is_empty()).then(|| {
        format!(
            "the skills listing is over its budget of {budget} bytes, so these are listed by name only: {} (shorten descriptions, or disable-model-invocation on skills you run yourself)",
            short.join(", ")
        )
    });
    (Some(out), notice)
}

/// One line of plain text: control characters gone, whitespace collapsed.
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
