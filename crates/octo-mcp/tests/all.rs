//! octo-mcp against a real MCP server (`octo-testkit`'s, on stdio and streamable HTTP).
mod suite;
