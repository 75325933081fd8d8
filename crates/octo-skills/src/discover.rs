//! Finding skills and commands in their folders, in order (a later folder's entry replaces an
//! earlier one of the same name), skipping bad files with a notice that names the file and why.

use crate::frontmatter;
use crate::skill::{io_reason, read_limited, valid_name, Kind, Skill};
use crate::template::Template;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How deep command folders are searched (`commands/a/b/c.md` is `a:b:c`).
const MAX_COMMAND_DEPTH: usize = 4;

/// What a folder holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootKind {
    /// `<name>/SKILL.md` folders.
    Skills,
    /// `<name>.md` files, each a skill (a project's `SKILLS/`).
    SkillFiles,
    /// `*.md` commands, in subfolders too.
    Commands,
}

/// A folder to search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// The folder (a missing one is skipped silently).
    pub dir: PathBuf,
    /// How notices and `/skills` name it (`~/.claude/skills`).
    pub label: String,
    /// What it holds.
    pub kind: RootKind,
    /// The plugin it belongs to: its name (entries are called `plugin:name`) and its folder
    /// (`${CLAUDE_PLUGIN_ROOT}`).
    pub plugin: Option<(String, PathBuf)>,
}

impl Root {
    /// A root.
    pub fn new(dir: impl Into<PathBuf>, label: impl Into<String>, kind: RootKind) -> Self {
        Self { dir: dir.into(), label: label.into(), kind, plugin: None }
    }

    /// A root of the plugin `name` in `root`: `dir` is a folder, or (for commands) one file.
    pub fn of_plugin(self, name: &str, root: &Path) -> Self {
        Self { plugin: Some((name.to_owned(), root.to_path_buf())), ..self }
    }

    /// `name` as this root calls it (`plugin:name` in a plugin).
    fn full_name(&self, name: &str) -> String {
        match &self.plugin {
            Some((ns, _)) => format!("{ns}:{name}"),
            None => name.to_owned(),
        }
    }
}

/// Every skill and command found, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    entries: BTreeMap<String, Skill>,
    /// A plugin's entry by its own name (`commit` for `commit-commands:commit`), where only one
    /// plugin has it and nothing else is called so.
    aliases: BTreeMap<String, String>,
}

impl Catalog {
    /// Searches `roots` in order. Returns the catalog and notices: files skipped (with the
    /// reason) and names a later folder took over.
    pub fn discover(roots: &[Root]) -> (Self, Vec<String>) {
        let mut notices = Vec::new();
        let mut skills: BTreeMap<String, Skill> = BTreeMap::new();
        let mut commands: BTreeMap<String, Skill> = BTreeMap::new();
        for root in roots {
            let found = match root.kind {
                RootKind::Skills => skill_folders(root, &mut notices),
                RootKind::SkillFiles => skill_files(root, &mut notices),
                RootKind::Commands => command_files(root, &mut notices),
            };
            let map = if root.kind == RootKind::Commands { &mut commands } else { &mut skills };
            for s in found {
                if let Some(old) = map.get(&s.name) {
                    notices.push(format!(
                        "{} `{}` in {} replaces the one in {}",
                        kind_word(s.kind),
                        s.name,
                        s.file.display(),
                        old.file.display()
                    ));
                }
                map.insert(s.name.clone(), s);
            }
        }
        for (name, c) in commands {
            match skills.get(&name) {
                Some(s) => notices.push(format!(
                    "the command /{name} ({}) is hidden by the skill of the same name ({})",
                    c.file.display(),
                    s.file.display()
                )),
                None => {
                    skills.insert(name, c);
                }
            }
        }
        let aliases = plugin_aliases(&skills);
        (Self { entries: skills, aliases }, notices)
    }

    /// The entry called `name` (a plugin's also by its own name, where that is unambiguous).
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.entries.get(name).or_else(|| self.entries.get(self.aliases.get(name)?))
    }

    /// Every entry, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = &Skill> {
        self.entries.values()
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether any entry may be loaded by the model.
    pub fn any_model_invocable(&self) -> bool {
        self.entries.values().any(|s| s.model_invocable)
    }
}

/// Plugins' entries by their own names: `plugin:name` is also `name` when no other entry has
/// that name and no other plugin an entry of it.
fn plugin_aliases(entries: &BTreeMap<String, Skill>) -> BTreeMap<String, String> {
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (full, s) in entries {
        if let (true, Some((_, own))) = (s.plugin_root.is_some(), full.split_once(':')) {
            seen.entry(own.to_owned()).or_default().push(full.clone());
        }
    }
    seen.into_iter()
        .filter(|(own, fulls)| fulls.len() == 1 && !entries.contains_key(own))
        .filter_map(|(own, mut fulls)| Some((own, fulls.pop()?)))
        .collect()
}

fn kind_word(k: Kind) -> &'static str {
    match k {
        Kind::Skill => "the skill",
        Kind::Command => "the command",
    }
}

/// An entry of a folder: its path and whether it is a folder (symlinks followed; a broken one
/// or a loop is the error).
type Found = (PathBuf, Result<bool, std::io::Error>);

/// The entries of `dir`, sorted, each with whether it is a folder — from the directory listing
/// itself where it says, so only symlinks cost a `stat`. An unreadable folder is a notice (a
/// missing one is not).
fn sorted_entries(dir: &Path, label: &str, notices: &mut Vec<String>) -> Vec<Found> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound || e.kind() == std::io::ErrorKind::NotADirectory =>
        {
            return Vec::new()
        }
        Err(e) => {
            notices.push(format!("skipped {label} ({}): {}", dir.display(), io_reason(&e)));
            return Vec::new();
        }
    };
    let mut out: Vec<Found> = rd
        .flatten()
        .map(|e| {
            let path = e.path();
            let is_dir = match e.file_type() {
                Ok(t) if !t.is_symlink() => Ok(t.is_dir()),
                _ => std::fs::metadata(&path).map(|m| m.is_dir()),
            };
            (path, is_dir)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn skill_folders(root: &Root, notices: &mut Vec<String>) -> Vec<Skill> {
    let mut out = Vec::new();
    for (path, is_dir) in sorted_entries(&root.dir, &root.label, notices) {
        let dir_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if dir_name.starts_with('.') {
            continue;
        }
        // Follows symlinks (users link ~/.claude/skills entries); a loop is reported.
        match is_dir {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => {
                notices.push(format!("skipped the skill {}: {}", path.display(), io_reason(&e)));
                continue;
            }
        }
        let file = path.join("SKILL.md");
        let text = match read_limited(&file) {
            Ok(t) => t,
            // A folder without SKILL.md is not a skill.
            Err(_) if !file.exists() && std::fs::symlink_metadata(&file).is_err() => continue,
            Err(why) => {
                notices.push(format!("skipped the skill {}: {why}", file.display()));
                continue;
            }
        };
        match load_skill(&text, &file, &dir_name, Some(path.clone()), root) {
            Ok((s, note)) => {
                notices.extend(note);
                out.push(s);
            }
            Err(why) => notices.push(format!("skipped the skill {}: {why}", file.display())),
        }
    }
    out
}

fn skill_files(root: &Root, notices: &mut Vec<String>) -> Vec<Skill> {
    let mut out = Vec::new();
    for (path, _) in sorted_entries(&root.dir, &root.label, notices) {
        if path.extension().and_then(|e| e.to_str()) != Some("md") {
            continue;
        }
        let stem = path.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        match read_limited(&path).and_then(|text| load_skill(&text, &path, &stem, None, root)) {
            Ok((s, note)) => {
                notices.extend(note);
                out.push(s);
            }
            Err(why) => notices.push(format!("skipped the skill {}: {why}", path.display())),
        }
    }
    out
}

/// A skill from its file, and a note for the user when its `name` differs from its folder's.
/// As in Claude Code, `name` is optional (the folder's name), and so is `description` (the
/// body's first paragraph).
fn load_skill(
    text: &str,
    file: &Path,
    expected: &str,
    dir: Option<PathBuf>,
    root: &Root,
) -> Result<(Skill, Option<String>), String> {
    let split = frontmatter::split(text)?;
    let front = match split.yaml {
        Some(yaml) => frontmatter::parse(yaml)?,
        None => frontmatter::Front::default(),
    };
    let description = front
        .description
        .clone()
        .filter(|d| !d.is_empty())
        .or_else(|| first_paragraph(split.body))
        .ok_or("it has no `description` in its frontmatter and no text to take one from")?;
    let mut note = None;
    let name = match front.name.clone() {
        None => expected.to_owned(),
        Some(n) if n == expected => n,
        // A display name such as `Writing Hookify Rules`, which Claude Code shows while the skill
        // is called by its folder's name.
        Some(n) if !valid_name(&n) && valid_name(expected) => expected.to_owned(),
        Some(n) => {
            let what = if dir.is_some() { "folder" } else { "file" };
            note = Some(format!(
                "the skill {}: its name `{n}` is not its {what}'s name `{expected}`; it is listed as `{n}`",
                file.display()
            ));
            n
        }
    };
    if !valid_name(&name) {
        return Err(format!(
            "its name `{name}` cannot be a command: use letters, digits, `-` and `_` (at most 64)"
        ));
    }
    let skill = Skill {
        name: root.full_name(&name),
        description,
        kind: Kind::Skill,
        allowed_tools: front.allowed_tools,
        argument_hint: front.argument_hint,
        model: front.model,
        model_invocable: !front.disable_model_invocation,
        user_invocable: front.user_invocable,
        file: file.to_path_buf(),
        dir: Some(dir.unwrap_or_else(|| file.parent().map(Path::to_path_buf).unwrap_or_default())),
        source: root.label.clone(),
        plugin_root: root.plugin.as_ref().map(|(_, r)| r.clone()),
    };
    Ok((skill, note))
}

/// The body's first paragraph as a one-line description (headings' `#` dropped), if any.
fn first_paragraph(body: &str) -> Option<String> {
    let para: Vec<&str> = body
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .map(|l| l.trim_start_matches('#').trim())
        .collect();
    let text = para.join(" ");
    (!text.is_empty()).then(|| text.chars().take(300).collect())
}

fn command_files(root: &Root, notices: &mut Vec<String>) -> Vec<Skill> {
    let mut out = Vec::new();
    // A plugin's manifest may name one command file instead of a folder.
    if root.dir.extension().is_some_and(|e| e == "md") && root.dir.is_file() {
        let stem = root.dir.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        match load_command(&root.dir, &stem, root) {
            Ok(c) => out.push(c),
            Err(why) => notices.push(format!("skipped the command {}: {why}", root.dir.display())),
        }
        return out;
    }
    let mut stack = vec![(root.dir.clone(), Vec::<String>::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for (path, is_dir) in sorted_entries(&dir, &root.label, notices) {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if name.starts_with('.') {
                continue;
            }
            let is_dir = match is_dir {
                Ok(d) => d,
                Err(e) => {
                    notices.push(format!("skipped the command {}: {}", path.display(), io_reason(&e)));
                    continue;
                }
            };
            // Folders are followed only to a fixed depth, so a symlink loop ends.
            if is_dir {
                if prefix.len() + 1 < MAX_COMMAND_DEPTH {
                    let mut p = prefix.clone();
                    p.push(name);
                    stack.push((path, p));
                }
                continue;
            }
            let Some(stem) = name.strip_suffix(".md") else { continue };
            let full = prefix.iter().map(String::as_str).chain([stem]).collect::<Vec<_>>().join(":");
            match load_command(&path, &full, root) {
                Ok(c) => out.push(c),
                Err(why) => notices.push(format!("skipped the command {}: {why}", path.display())),
            }
        }
    }
    out
}

fn load_command(file: &Path, name: &str, root: &Root) -> Result<Skill, String> {
    if !valid_name(name) {
        return Err(format!("`/{name}` cannot be a command: use letters, digits, `-` and `_` in file names"));
    }
    let text = read_limited(file)?;
    let split = frontmatter::split(&text)?;
    let front = match split.yaml {
        Some(y) => frontmatter::parse(y)?,
        None => frontmatter::Front { user_invocable: true, ..frontmatter::Front::default() },
    };
    // Checked now so a broken command is reported at start, not when it is run.
    Template::parse(split.body, split.body_line)?;
    let description = front.description.filter(|d| !d.is_empty()).unwrap_or_else(|| {
        let first = split.body.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
        let first = first.trim_start_matches('#').trim();
        first.chars().take(100).collect()
    });
    Ok(Skill {
        name: root.full_name(name),
        description,
        kind: Kind::Command,
        allowed_tools: front.allowed_tools,
        argument_hint: front.argument_hint,
        model: front.model,
        model_invocable: false,
        user_invocable: true,
        file: file.to_path_buf(),
        dir: None,
        source: root.label.clone(),
        plugin_root: root.plugin.as_ref().map(|(_, r)| r.clone()),
    })
}

/// The candidates close to `word` (a typo, a prefix, or a word inside), best first, at most 3.
pub fn near_matches<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let w = word.trim_start_matches('/').to_ascii_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|c| {
            let n = c.trim_start_matches('/').to_ascii_lowercase();
            let d = distance(&w, &n);
            let close = d <= 2.max(w.len() / 4) || (w.len() >= 3 && (n.starts_with(&w) || n.contains(&w)));
            close.then_some((d, c))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

/// Levenshtein distance (small words only).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push((prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_matches_find_typos_and_prefixes() {
        let c = ["/help", "/model", "/review", "/mcp", "/frontend:component"];
        assert_eq!(near_matches("/reviw", c), ["/review"]);
        assert_eq!(near_matches("/modle", c)[0], "/model");
        assert!(near_matches("/component", c).contains(&"/frontend:component"));
        assert!(near_matches("/zzzzzzzz", c).is_empty());
    }
}
