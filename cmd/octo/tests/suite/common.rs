//! Helpers shared by the binary's tests.

#![allow(dead_code)]

use octo_testkit::{MockLlm, TempHome};

/// A home whose config points the default endpoint `mock` at `llm` (Anthropic protocol, key in
/// `MOCK_KEY`).
pub fn home_for(llm: &MockLlm) -> TempHome {
    let home = TempHome::new().unwrap_or_else(|e| panic!("temp home: {e}"));
    std::fs::write(
        home.home().join("config.toml"),
        format!(
            "default = \"mock:claude-sonnet-4-5\"\n[endpoints.mock]\nprotocol = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"MOCK_KEY\"\n",
            llm.uri()
        ),
    )
    .unwrap_or_else(|e| panic!("config: {e}"));
    home
}
