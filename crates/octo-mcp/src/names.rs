//! What a server's tools are called and described as to the model: `mcp__<server>__<tool>`, made
//! of the characters every provider accepts and at most 64 of them, never two alike; input
//! schemas passed on as given, mended only where a provider would reject them.

use serde_json::{json, Map, Value};
use std::collections::HashSet;

/// Longest tool name every provider accepts.
const MAX_NAME: usize = 64;

fn clean(part: &str) -> String {
    part.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

fn short_hash(text: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

/// The name of `tool` of `server` as the model sees it, unique among `taken` (which it joins).
/// A name that had to be changed (characters replaced, shortened, or already taken) ends in a
/// hash of the original, so the same tool keeps the same name from run to run.
pub fn tool_name(server: &str, tool: &str, taken: &mut HashSet<String>) -> String {
    let plain = format!("mcp__{}__{}", clean(server), clean(tool));
    let exact = plain == format!("mcp__{server}__{tool}") && plain.len() <= MAX_NAME;
    let mut name = if exact {
        plain
    } else {
        let keep = MAX_NAME - 9;
        let head: String = plain.chars().take(keep).collect();
        format!("{head}_{}", short_hash(&format!("{server}\0{tool}")))
    };
    let mut n = 2;
    while taken.contains(&name) {
        let suffix = format!("_{n}");
        let head: String = name.chars().take(MAX_NAME - suffix.len()).collect();
        name = format!("{head}{suffix}");
        n += 1;
    }
    taken.insert(name.clone());
    name
}

/// The input schema to send: an object schema. Returns it, and a note when it had to be mended
/// (not an object, `type` missing or not `object`, `properties` or `required` of the wrong kind).
pub fn input_schema(schema: &Map<String, Value>) -> (Value, Option<String>) {
    let mut s = schema.clone();
    compact(&mut s);
    let mut fixed = Vec::new();
    match s.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        None => {
            s.insert("type".into(), json!("object"));
        }
        Some(other) => {
            fixed.push(format!("its input schema had type {other}, not object"));
            s = Map::new();
            s.insert("type".into(), json!("object"));
        }
    }
    if s.get("properties").is_some_and(|p| !p.is_object()) {
        s.remove("properties");
        fixed.push("its `properties` was not an object".into());
    }
    if s.get("required").is_some_and(|r| !r.as_array().is_some_and(|a| a.iter().all(Value::is_string))) {
        s.remove("required");
        fixed.push("its `required` was not a list of names".into());
    }
    let note = (!fixed.is_empty()).then(|| fixed.join("; "));
    (Value::Object(s), note)
}

/// Drops what tells the model nothing but costs bytes in every request: the dialect (`$schema`),
/// titles (generators repeat the property's name as its title), an empty `required` and
/// `additionalProperties: false`
/// (providers do not enforce it; llama.cpp's grammar allows no extra property without it). A
/// property that happens to be called `title` is kept: only schema keywords go.
fn compact(schema: &mut Map<String, Value>) {
    schema.remove("$schema");
    if schema.get("title").is_some_and(Value::is_string) {
        schema.remove("title");
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        schema.remove("additionalProperties");
    }
    if schema.get("required").and_then(Value::as_array).is_some_and(Vec::is_empty) {
        schema.remove("required");
    }
    let mut nested = |v: &mut Value| {
        if let Value::Object(m) = v {
            compact(m);
        }
    };
    for key in ["properties", "$defs", "definitions", "patternProperties"] {
        if let Some(Value::Object(map)) = schema.get_mut(key) {
            map.values_mut().for_each(&mut nested);
        }
    }
    for key in ["items", "additionalProperties", "not", "if", "then", "else", "contains"] {
        if let Some(v) = schema.get_mut(key) {
            nested(v);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(list)) = schema.get_mut(key) {
            list.iter_mut().for_each(&mut nested);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn schemas_lose_only_what_tells_the_model_nothing() {
        let raw = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "title": "create_issueArguments",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "title": {"title": "Title", "type": "string", "description": "The issue's title."},
                "labels": {"type": "array", "items": {"title": "Label", "type": "string"}},
                "meta": {"type": "object", "additionalProperties": {"type": "string", "title": "V"}},
                "open": {"anyOf": [{"type": "boolean", "title": "B"}, {"type": "null"}]}
            },
            "required": ["title"]
        });
        let (schema, note) = input_schema(raw.as_object().unwrap());
        assert_eq!(note, None);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string", "description": "The issue's title."},
                    "labels": {"type": "array", "items": {"type": "string"}},
                    "meta": {"type": "object", "additionalProperties": {"type": "string"}},
                    "open": {"anyOf": [{"type": "boolean"}, {"type": "null"}]}
                },
                "required": ["title"]
            }),
            "a property named `title` stays; keywords that say nothing go"
        );
    }

    #[test]
    fn names_are_valid_stable_and_unique() {
        let mut taken = HashSet::new();
        assert_eq!(tool_name("github", "create_issue", &mut taken), "mcp__github__create_issue");
        let dotted = tool_name("my.server", "files/read", &mut taken);
        assert!(dotted.starts_with("mcp__my_server__files_read_") && dotted.len() <= 64, "{dotted}");
        let again = tool_name("my_server", "files_read", &mut taken);
        assert_ne!(again, dotted, "collision-safe");
        let long = tool_name("s", &"x".repeat(200), &mut taken);
        assert_eq!(long.len(), 64);
        assert!(octo_agent::valid_tool_name(&long) && octo_agent::valid_tool_name(&dotted));
        let mut fresh = HashSet::new();
        assert_eq!(tool_name("my.server", "files/read", &mut fresh), dotted, "stable from run to run");
        let dup1 = tool_name("s", "t", &mut fresh);
        let dup2 = tool_name("s", "t", &mut fresh);
        assert_ne!(dup1, dup2);
    }

    #[test]
    fn schemas_are_mended_only_where_needed() {
        let ok: Map<String, Value> = serde_json::from_value(
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
        )
        .unwrap();
        assert_eq!(input_schema(&ok), (Value::Object(ok.clone()), None));
        let untyped: Map<String, Value> = serde_json::from_value(json!({"properties": {}})).unwrap();
        assert_eq!(input_schema(&untyped).0["type"], "object");
        let bad: Map<String, Value> =
            serde_json::from_value(json!({"type": "string", "required": "a"})).unwrap();
        let (fixed, note) = input_schema(&bad);
        assert_eq!(fixed, json!({"type": "object"}));
        assert!(note.unwrap().contains("type"));
    }
}
