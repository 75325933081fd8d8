//! The session's MCP servers: their state, approving a project's server, their prompts.

use super::handles::Servers;
use crate::home::Home;
use crate::mcp::McpError;

impl Servers<'_> {
    /// The session's MCP servers, as they are now.
    pub fn mcp(self) -> Vec<octo_mcp::ServerStatus> {
        self.session.setup.tools.mcp.as_ref().map(|h| h.status()).unwrap_or_default()
    }

    /// The session's language servers, as they are now (none when no server serves the
    /// workspace's languages).
    pub(crate) fn lsp(self) -> Vec<octo_lsp::ServerStatus> {
        self.session.setup.tools.lsp.as_ref().map(|l| l.status()).unwrap_or_default()
    }

    /// Approves a project's MCP server (remembered by its fingerprint, so later runs start it
    /// too) and starts it; its tools join between turns.
    pub fn approve_mcp(self, name: &str) -> Result<(), McpError> {
        let (Some(hub), Some(config)) =
            (self.session.setup.tools.mcp.as_ref(), self.session.setup.config.as_ref())
        else {
            return Err(McpError::NoServers);
        };
        let server = config
            .mcp_servers
            .iter()
            .rev()
            .find(|s| s.name == name)
            .ok_or_else(|| McpError::Unknown(name.to_owned()))?;
        crate::mcp::remember_approval(&Home::new(&config.home), server, &self.session.setup.workspace)
            .map_err(|source| McpError::Remember { name: name.to_owned(), source })?;
        if hub.approve(name) {
            Ok(())
        } else {
            Err(McpError::NotWaiting(name.to_owned()))
        }
    }

    /// The prompts the running MCP servers offer (slash commands `/mcp__<server>__<prompt>`).
    pub async fn prompts(self) -> Vec<octo_mcp::prompts::PromptInfo> {
        match &self.session.setup.tools.mcp {
            Some(h) => h.prompts().await,
            None => Vec::new(),
        }
    }

    /// The text an MCP prompt renders to, with `args` in the order of its arguments.
    pub async fn prompt_text(
        self,
        prompt: &octo_mcp::prompts::PromptInfo,
        args: &[String],
    ) -> Result<String, McpError> {
        match &self.session.setup.tools.mcp {
            Some(h) => Ok(h.render_prompt(prompt, args).await?),
            None => Err(McpError::NoServers),
        }
    }
}
