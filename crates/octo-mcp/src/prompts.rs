//! A server's prompts, which front ends offer as slash commands `/mcp__<server>__<prompt>`:
//! listed from the running servers, and rendered into the text of a user message.

use crate::error::PromptError;
use crate::hub::{McpHub, State};
use rmcp::model::{ContentBlock, GetPromptRequestParams, ResourceContents};

/// One prompt a server offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptInfo {
    /// The server.
    pub server: String,
    /// The prompt's name on the server.
    pub name: String,
    /// The slash command that runs it (`/mcp__github__review`).
    pub command: String,
    /// What it does.
    pub description: String,
    /// Its arguments, in order, and whether each is required.
    pub arguments: Vec<(String, bool)>,
}

impl McpHub {
    /// The prompts of every running server that offers prompts.
    pub async fn prompts(&self) -> Vec<PromptInfo> {
        let mut out = Vec::new();
        for s in &self.servers {
            let State::Ready(conn) = s.state() else { continue };
            if !conn.prompts {
                continue;
            }
            let Ok(Ok(list)) =
                tokio::time::timeout(s.config.spec.startup_timeout(), conn.service.list_all_prompts()).await
            else {
                continue;
            };
            for p in list {
                let mut taken = std::collections::HashSet::new();
                let command = format!("/{}", crate::names::tool_name(&s.config.name, &p.name, &mut taken));
                out.push(PromptInfo {
                    server: s.config.name.clone(),
                    command,
                    description: p.description.clone().unwrap_or_default(),
                    arguments: p
                        .arguments
                        .unwrap_or_default()
                        .into_iter()
                        .map(|a| (a.name, a.required.unwrap_or(false)))
                        .collect(),
                    name: p.name,
                });
            }
        }
        out
    }

    /// Renders `prompt` with `args` (given in the order of its arguments) into the text of a
    /// user message; the error says what is missing or what the server said.
    pub async fn render_prompt(&self, prompt: &PromptInfo, args: &[String]) -> Result<String, PromptError> {
        let missing: Vec<&str> = prompt
            .arguments
            .iter()
            .enumerate()
            .filter(|(i, (_, required))| *required && args.get(*i).is_none())
            .map(|(_, (n, _))| n.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(PromptError::MissingArguments {
                command: prompt.command.clone(),
                missing: missing.join(", "),
            });
        }
        let Some(server) = self.servers.iter().find(|s| s.config.name == prompt.server) else {
            return Err(PromptError::UnknownServer(prompt.server.clone()));
        };
        let conn = self.connection(server).await.map_err(PromptError::Unavailable)?;
        let mut map = serde_json::Map::new();
        for ((name, _), value) in prompt.arguments.iter().zip(args) {
            map.insert(name.clone(), serde_json::Value::String(value.clone()));
        }
        let params = GetPromptRequestParams::new(prompt.name.clone()).with_arguments(map);
        let result =
            conn.service.get_prompt(params).await.map_err(|e| PromptError::Refused(e.to_string()))?;
        let mut text = String::new();
        for m in result.messages {
            let part = match m.content {
                ContentBlock::Text(t) => t.text,
                ContentBlock::Resource(r) => match r.resource {
                    ResourceContents::TextResourceContents { uri, text, .. } => {
                        format!("<resource uri=\"{uri}\">\n{text}\n</resource>")
                    }
                    _ => String::new(),
                },
                _ => String::new(),
            };
            if !part.is_empty() {
                if !text.is_empty() {
                    text.push_str("\n\n");
                }
                text.push_str(&part);
            }
        }
        Ok(text)
    }
}
