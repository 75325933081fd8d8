//! `octo config show`: the effective settings with where each came from; secrets never shown.

use super::load::Config;
use super::types::Source;

impl Config {
    /// The effective settings with their sources, for `octo config show`. Secrets never appear:
    /// keys are named by where they come from, and header values are masked.
    pub fn show(&self) -> String {
        let mut out = String::new();
        self.show_turn(&mut out);
        for (id, ep) in &self.endpoints {
            show_endpoint(&mut out, id, &ep.value, &ep.source);
        }
        self.show_shell_env(&mut out);
        self.show_mcp(&mut out);
        let rules = self.rules.describe();
        if !rules.is_empty() {
            out.push_str("\n[permissions]\n");
            out.push_str(&rules);
        }
        out
    }

    /// The top-level keys.
    fn show_turn(&self, out: &mut String) {
        let line =
            |out: &mut String, k: &str, v: &str, s: &Source| out.push_str(&format!("{k} = {v}    # {s}\n"));
        match &self.default {
            Some(d) => line(out, "default", &format!("\"{}\"", d.value), &d.source),
            None => out.push_str(
                "default = (none: set one with --endpoint, OCTO_MODEL or `default` in config.toml)\n",
            ),
        }
        line(
            out,
            "permission_mode",
            &format!("\"{}\"", self.permission_mode.value),
            &self.permission_mode.source,
        );
        line(out, "max_turns", &self.max_turns.value.to_string(), &self.max_turns.source);
        line(
            out,
            "reasoning_effort",
            &format!("\"{}\"", self.reasoning_effort.value),
            &self.reasoning_effort.source,
        );
        if let Some(t) = &self.max_tokens {
            line(out, "max_tokens", &t.value.to_string(), &t.source);
        }
        if let Some(c) = &self.max_cost {
            line(out, "max_cost", &format!("${:.2}", c.value), &c.source);
        }
        line(
            out,
            "compact_threshold",
            &self.compact_threshold.value.to_string(),
            &self.compact_threshold.source,
        );
        if let Some(m) = &self.lite_model {
            line(out, "lite_model", &format!("\"{}\"", m.value), &m.source);
        }
    }

    /// `[shell_env]`, when it differs from the default.
    fn show_shell_env(&self, out: &mut String) {
        let env = &self.shell_env;
        if env != &octo_tools::shell::env::ShellEnv::default() {
            out.push_str("\n[shell_env]\n");
            out.push_str(&format!("inherit = \"{}\"\n", env.inherit));
            for (k, v) in [("exclude", &env.exclude), ("include", &env.include)] {
                if !v.is_empty() {
                    out.push_str(&format!("{k} = {v:?}\n"));
                }
            }
            // Values may be secrets: only the names are shown.
            for k in env.set.keys() {
                out.push_str(&format!("set.{k} = \"****\"\n"));
            }
        }
    }

    /// `[mcp_servers]`.
    fn show_mcp(&self, out: &mut String) {
        for m in &self.mcp_servers {
            let from = match m.origin {
                octo_mcp::Origin::User => "user config",
                octo_mcp::Origin::ProjectJson => "project .mcp.json",
                octo_mcp::Origin::ProjectConfig => "project config",
            };
            out.push_str(&format!("\n[mcp_servers.{}]    # {from}\n", m.name));
            let spec = &m.spec;
            if let Some(c) = &spec.command {
                out.push_str(&format!("command = {c:?}\n"));
            }
            if !spec.args.is_empty() {
                out.push_str(&format!("args = {:?}\n", spec.args));
            }
            if let Some(u) = &spec.url {
                out.push_str(&format!("url = {u:?}\n"));
            }
            // Values may be secrets: only the names are shown.
            for k in spec.env.keys() {
                out.push_str(&format!("env.{k} = \"****\"\n"));
            }
            for k in spec.headers.keys() {
                out.push_str(&format!("headers.{k} = \"****\"\n"));
            }
            if !spec.enabled() {
                out.push_str("enabled = false\n");
            }
        }
    }
}

/// One `[endpoints.<id>]` table; header values are masked.
fn show_endpoint(out: &mut String, id: &str, e: &super::endpoints::EndpointConfig, source: &Source) {
    out.push_str(&format!("\n[endpoints.{id}]    # {source}\n"));
    if let Some(p) = e.protocol {
        out.push_str(&format!("protocol = \"{}\"\n", p.as_str()));
    }
    if let Some(p) = &e.preset {
        out.push_str(&format!("preset = \"{p}\"\n"));
    }
    if let Some(u) = &e.base_url {
        out.push_str(&format!("base_url = \"{u}\"\n"));
    }
    if let Some(k) = &e.api_key_env {
        out.push_str(&format!("api_key_env = \"{k}\"\n"));
    }
    for k in e.headers.keys() {
        out.push_str(&format!("headers.{k} = \"****\"\n"));
    }
    if !e.models.is_empty() {
        out.push_str(&format!("models = {:?}\n", e.models));
    }
    let d = octo_provider::HttpConfig::default();
    let t = e.timeouts(id).unwrap_or_default();
    for (key, set, default) in [
        ("connect_timeout", t.connect, d.connect_timeout),
        ("stall_timeout", t.stall, d.stall_timeout),
        ("first_byte_timeout", t.first_byte, d.first_byte_timeout),
        ("request_timeout", t.request, d.request_timeout),
    ] {
        let (value, note) = match set {
            Some(v) => (v, ""),
            None => (default, "    # default"),
        };
        out.push_str(&format!("{key} = {}{note}\n", octo_provider::secs(value)));
    }
}
