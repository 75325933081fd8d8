//! `octo mcp serve`'s server side, driven by an rmcp client.
