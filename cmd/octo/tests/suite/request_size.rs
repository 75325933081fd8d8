//! What the first request to the model costs, in bytes on the wire: with every built-in tool it
//! fits 16 KiB on every protocol, and with three MCP servers (30 tools the size of the reference
//! git server's), ten skills and a memory index listed it fits 20 KiB. The figures are printed, so a change that
//! grows them shows in the test's output.

use super::common::{assert_async, octo};
use octo_testkit::{anthropic, openai, responses, MockLlm, Scripted, TempHome};

/// Every built-in tool, octo's prompt and the environment.
const BUILT_IN: usize = 16 * 1024;
/// The same with three MCP servers, ten skills and a memory index.
const LOADED: usize = 20 * 1024;

#[derive(Clone, Copy, Debug)]
enum Wire {
    Anthropic,
    OpenAi,
    Responses,
}

async fn mock(wire: Wire) -> MockLlm {
    let llm = MockLlm::start().await;
    match wire {
        Wire::Anthropic => {
            llm.script_anthropic([Scripted::sse(anthropic::Reply::new().text("hi").sse())]).await;
        }
        Wire::OpenAi => llm.script_openai([Scripted::sse(openai::Reply::new().text("hi").sse())]).await,
        Wire::Responses => {
            llm.script_responses([Scripted::sse(responses::Reply::new().text("hi").sse())]).await;
        }
    }
    llm
}

fn home(llm: &MockLlm, wire: Wire, loaded: bool) -> TempHome {
    let home = TempHome::new().unwrap();
    let endpoint = match wire {
        Wire::Anthropic => format!("protocol = \"anthropic\"\nbase_url = \"{}\"", llm.uri()),
        Wire::OpenAi => format!("protocol = \"openai\"\nbase_url = \"{}/v1\"", llm.uri()),
        Wire::Responses => format!("protocol = \"responses\"\nbase_url = \"{}/v1\"", llm.uri()),
    };
    let mut config = format!(
        "default = \"mock:claude-sonnet-4-5\"\n[endpoints.mock]\n{endpoint}\napi_key_env = \"MOCK_KEY\"\n"
    );
    if loaded {
        for name in ["tracker", "issues", "work"] {
            config.push_str(&format!(
                "[mcp_servers.{name}]\ncommand = \"{}\"\nargs = [\"--catalog\"]\nstartup_timeout = 20\n",
                octo_testkit::mcp::server_bin().display()
            ));
        }
        skills(&home);
        memory(&home);
    }
    std::fs::write(home.home().join("config.toml"), config).unwrap();
    home
}

/// Ten skills with descriptions of the length Claude Code's own skills have.
fn skills(home: &TempHome) {
    let topics = [
        "release notes",
        "database migrations",
        "the changelog",
        "API docs",
        "flaky tests",
        "dependency updates",
        "the CI pipeline",
        "error messages",
        "benchmarks",
        "code review",
    ];
    for (i, topic) in topics.iter().enumerate() {
        let dir = home.home().join("skills").join(format!("skill-{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: skill-{i}\ndescription: \"How this team handles {topic}: the steps, the checks and where the results go. Use when the user asks about {topic}.\"\n---\n{}",
                "A step.\n".repeat(50)
            ),
        )
        .unwrap();
    }
}

/// A user memory index of ten entries.
fn memory(home: &TempHome) {
    let dir = home.home().join("memory");
    std::fs::create_dir_all(&dir).unwrap();
    let mut index = String::from("# User\n");
    for i in 0..10 {
        index.push_str(&format!("- [note-{i}](note-{i}.md): the user prefers small commits with messages in the imperative ({i})\n"));
        std::fs::write(dir.join(format!("note-{i}.md")), "---\nname: note\n---\nBody.\n").unwrap();
    }
    std::fs::write(dir.join("MEMORY.md"), index).unwrap();
}

/// Every tool a session offers without MCP servers or skills.
const BUILT_IN_TOOLS: [&str; 19] = [
    "terminal",
    "terminal_output",
    "kill_shell",
    "read_file",
    "write_file",
    "edit_file",
    "glob",
    "grep",
    "list_dir",
    "web_fetch",
    "web_search",
    "todo_write",
    "ask_user",
    "compact_conversation",
    "memory_delete",
    "memory_save",
    "memory_search",
    "task",
    "task_output",
];

/// The first request's body, and how many tools it offered.
async fn first_request(wire: Wire, loaded: bool) -> (usize, usize) {
    let llm = mock(wire).await;
    let home = home(&llm, wire, loaded);
    let mut c = octo(&home);
    c.args(["--no-save", "say hi"]);
    assert_async(c).await.success();
    let requests = llm.requests().await;
    let body = &requests[0].body;
    let json: serde_json::Value = serde_json::from_slice(body).unwrap();
    let names: Vec<&str> = json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().or_else(|| t["function"]["name"].as_str()))
        .collect();
    for tool in BUILT_IN_TOOLS {
        assert!(names.contains(&tool), "{wire:?}: every built-in tool is offered; {tool} is not: {names:?}");
    }
    let tools = names.len();
    if loaded {
        let text = String::from_utf8_lossy(body);
        assert!(text.contains("mcp__work__create_branch"), "the MCP tools are offered");
        assert!(text.contains("skill-9"), "the skills are listed");
        assert!(text.contains("note-9"), "the memory index is listed");
    }
    (body.len(), tools)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_request_fits_its_budget_on_every_wire() {
    for wire in [Wire::Anthropic, Wire::OpenAi, Wire::Responses] {
        let (bytes, tools) = first_request(wire, false).await;
        println!("first request, {wire:?}, built-in tools: {bytes} bytes, {tools} tools (budget {BUILT_IN})");
        assert!(bytes <= BUILT_IN, "{wire:?}: {bytes} bytes with {tools} built-in tools, over {BUILT_IN}");
    }
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn with_mcp_servers_skills_and_memory_it_fits_its_budget() {
    for wire in [Wire::Anthropic, Wire::OpenAi, Wire::Responses] {
        let (bytes, tools) = first_request(wire, true).await;
        println!(
            "first request, {wire:?}, 3 MCP servers + 10 skills + memory: {bytes} bytes, {tools} tools (budget {LOADED})"
        );
        assert_eq!(
            tools,
            BUILT_IN_TOOLS.len() + 30 + 1,
            "the servers' 30 tools and `skill` beside the built-in ones"
        );
        assert!(bytes <= LOADED, "{wire:?}: {bytes} bytes with {tools} tools, over {LOADED}");
    }
}
