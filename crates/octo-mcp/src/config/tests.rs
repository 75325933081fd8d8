//! Server definitions read, checked and fingerprinted.

#![allow(clippy::unwrap_used)]
use super::*;

fn env(k: &str) -> Option<String> {
    match k {
        "TOKEN" => Some("t0k".into()),
        "HOME" => Some("/home/u".into()),
        _ => None,
    }
}

#[test]
fn unknown_keys_are_a_notice_and_disabled_is_honoured() {
    let text = r#"{"mcpServers": {
        "a": {"command": "srv", "autoApprove": ["x"], "alwaysLoad": true},
        "r": {"type": "sse", "url": "https://x.example/sse", "oauth": {"clientId": "c", "callbackPort": 8080}},
        "b": {"command": "srv", "disabled": true}
    }}"#;
    let parsed = parse_mcp_json(Path::new(".mcp.json"), text);
    assert_eq!(parsed.servers.len(), 3, "{:?}", parsed.errors);
    assert_eq!(parsed.errors.len(), 1, "{:?}", parsed.errors);
    assert!(
        parsed.errors[0].contains("`autoApprove`") && parsed.errors[0].contains("`alwaysLoad`"),
        "{:?}",
        parsed.errors
    );
    // `oauth` is read (a pre-registered client, its port) and `sse` is the older transport.
    let r = &parsed.servers.iter().find(|(n, _)| n == "r").unwrap().1;
    match r.transport(&|_| None).unwrap() {
        Transport::Http { oauth, legacy_sse, .. } => {
            assert!(legacy_sse);
            assert_eq!((oauth.client_id.as_deref(), oauth.callback_port), (Some("c"), Some(8080)));
        }
        other => panic!("{other:?}"),
    }
    let b = &parsed.servers.iter().find(|(n, _)| n == "b").unwrap().1;
    assert_eq!(b.enabled, Some(false));
}

#[test]
fn claude_codes_mcp_json_is_read_and_bad_entries_named() {
    let text = r#"{"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server-fs", "${HOME}/code"], "env": {"T": "${TOKEN}"}},
        "remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"X-Team": "${TEAM:-core}"}},
        "broken": {"command": 5},
        "neither": {}
    }}"#;
    let j = parse_mcp_json(Path::new(".mcp.json"), text);
    assert_eq!(j.servers.len(), 3, "{:?}", j.errors);
    assert_eq!(j.errors.len(), 1);
    assert!(j.errors[0].contains("mcpServers.broken"), "{}", j.errors[0]);
    let files = j.servers.iter().find(|(n, _)| n == "files").unwrap().1.transport(&env).unwrap();
    assert_eq!(files.describe(), "npx -y server-fs /home/u/code");
    let Transport::Stdio { env: e, .. } = &files else { panic!() };
    assert_eq!(e["T"], "t0k");
    let remote = j.servers.iter().find(|(n, _)| n == "remote").unwrap().1.transport(&env).unwrap();
    assert!(matches!(&remote, Transport::Http { headers, .. } if headers["X-Team"] == "core"));
    let neither = j.servers.iter().find(|(n, _)| n == "neither").unwrap().1.transport(&env).unwrap_err();
    assert!(neither.to_string().contains("needs `command`"), "{neither}");
    let bad = parse_mcp_json(Path::new("p/.mcp.json"), "{\n \"mcpServers\": {,}\n}");
    assert!(bad.errors[0].contains("line 2"), "{:?}", bad.errors);
}

#[test]
fn variables_tools_and_fingerprints() {
    assert_eq!(expand("a ${TOKEN} b ${NOPE:-x}", &env).unwrap(), "a t0k b x");
    assert!(expand("${NOPE}", &env).unwrap_err().to_string().contains("${NOPE}"));
    let spec = ServerSpec {
        command: Some("srv".into()),
        tools: Some(vec!["a".into()]),
        disabled_tools: vec!["b".into()],
        ..ServerSpec::default()
    };
    assert!(spec.offers("a") && !spec.offers("b") && !spec.offers("c"));
    let other = ServerSpec { args: vec!["--evil".into()], ..spec.clone() };
    assert_ne!(spec.fingerprint(), other.fingerprint(), "a changed command is a new server");
    assert_eq!(spec.fingerprint(), spec.fingerprint());
    // Words moved between fields are another definition.
    let in_args =
        ServerSpec { args: vec!["s.sh".into(), "BASH_ENV".into(), "x".into()], ..ServerSpec::default() };
    let mut in_env = ServerSpec { args: vec!["s.sh".into()], ..ServerSpec::default() };
    in_env.env.insert("BASH_ENV".into(), "x".into());
    assert_ne!(in_args.fingerprint(), in_env.fingerprint());
    assert_eq!(spec.fingerprint().len(), 64, "SHA-256");
    let mut headers = ServerSpec { url: Some("https://x".into()), ..ServerSpec::default() };
    headers.headers.insert("Authorization".into(), "Bearer ${GITHUB_TOKEN}".into());
    headers.headers.insert("X-Key".into(), "sk-literal".into());
    let shown = headers.definition();
    assert!(
        shown.contains("Authorization: Bearer ${GITHUB_TOKEN}") && !shown.contains("sk-literal"),
        "{shown}"
    );
}
