//! The named exceptions to the house's size limits (`house.rs`): files and functions that were
//! over the limits when they were lowered (500 lines a file, 80 a function). Each may shrink but
//! never grow; once one is back under the limit it is struck off. Nothing is ever added here.

/// Files over 500 lines, with the most lines each may have.
pub const FILES: &[(&str, usize)] = &[
    ("crates/octo-agent/src/agent/turn.rs", 515),
    ("crates/octo-agent/src/tool.rs", 508),
    ("crates/octo-app/src/commands/reply.rs", 544),
    ("crates/octo-app/src/config/apply.rs", 540),
    ("crates/octo-app/src/factory.rs", 562),
    ("crates/octo-app/src/session/actor.rs", 519),
    ("crates/octo-mcp/src/hub.rs", 505),
    ("crates/octo-provider-local/src/worker.rs", 565),
    ("crates/octo-provider/src/classify.rs", 541),
    ("crates/octo-provider/src/transport.rs", 595),
    ("crates/octo-tools/src/shell/syntax.rs", 590),
];

/// Functions over 80 lines (`file::name`), with the most lines each may span.
pub const FUNCTIONS: &[(&str, usize)] = &[
    ("cmd/octo/src/commands.rs::doctor", 83),
    ("cmd/octo/src/commands.rs::sessions", 93),
    ("cmd/octo/src/oneshot.rs::run", 100),
    ("cmd/octo/src/review.rs::review", 81),
    ("cmd/octo/src/stream_input.rs::run", 84),
    ("crates/octo-app/src/config/apply.rs::apply_file", 98),
    ("crates/octo-app/src/session/start.rs::start", 92),
    ("crates/octo-app/src/skills.rs::invoke", 95),
    ("crates/octo-app/src/subagents/child.rs::run", 86),
    ("crates/octo-channels/src/feishu.rs::poll", 99),
    ("crates/octo-eval/src/runner.rs::run_task", 84),
    ("crates/octo-exec/src/sandbox/promise.rs::list", 94),
    ("crates/octo-lsp/src/server.rs::start", 95),
    ("crates/octo-testkit/src/responses.rs::sse", 85),
    ("crates/octo-tools/src/search/grep.rs::search_skipping", 81),
    ("crates/octo-tools/src/shell/mod.rs::execute", 95),
];
