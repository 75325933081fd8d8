//! The Harbor adapter (eval/harbor/octo_agent.py) against a stand-in of Harbor's agent classes:
//! the command it runs in a task's container, and the figures it reads back from octo's result.

use std::path::Path;
use std::process::Command;

const STUB_BASE: &str = r#"
class ExecInput:
    def __init__(self, command, cwd=None, env=None, timeout_sec=None):
        self.command, self.cwd, self.env, self.timeout_sec = command, cwd, env, timeout_sec

class BaseInstalledAgent:
    def __init__(self, logs_dir, model_name=None, *args, **kwargs):
        self.logs_dir, self.model_name = logs_dir, model_name
"#;

const STUB_CONTEXT: &str = r#"
class AgentContext:
    def __init__(self):
        self.n_input_tokens = None
        self.n_output_tokens = None
        self.n_cache_tokens = None
        self.cost_usd = None
"#;

const CHECK: &str = r#"
import json, os, shlex, sys
from pathlib import Path
from octo_agent import OctoAgent
from harbor.models.agent.context import AgentContext

logs = Path(sys.argv[1])
os.environ["ANTHROPIC_API_KEY"] = "sk-test"
agent = OctoAgent(logs, model_name="anthropic/claude-sonnet-4-5", max_turns=7)
assert agent.name() == "octo"
assert agent._install_agent_template_path.is_file()
[run] = agent.create_run_agent_commands("fix it; rm -rf / 'now' $(x)")
assert run.env == {"ANTHROPIC_API_KEY": "sk-test"}, run.env
words = shlex.split(run.command)
start = words.index("octo")
argv = words[start:words.index(">", start)]
assert argv[argv.index("-p") + 1] == "fix it; rm -rf / 'now' $(x)", argv
for pair in (["--endpoint", "anthropic"], ["--model", "claude-sonnet-4-5"], ["--permission-mode", "auto"],
             ["--max-turns", "7"], ["--output-format", "stream-json"]):
    i = argv.index(pair[0])
    assert argv[i:i + 2] == pair, argv
(logs / "octo.jsonl").write_text("not json\n" + json.dumps({"type": "result", "subtype": "success",
    "total_cost_usd": 0.25, "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 3}}) + "\n")
ctx = AgentContext()
agent.populate_context_post_run(ctx)
assert (ctx.n_input_tokens, ctx.n_output_tokens, ctx.n_cache_tokens, ctx.cost_usd) == (10, 5, 3, 0.25), vars(ctx)
print("ok")
"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn the_harbor_adapter_runs_octo_headless_in_auto_mode_and_reads_its_result() {
    let tmp = tempfile::tempdir().unwrap();
    let stubs = tmp.path().join("stubs");
    for p in ["harbor", "harbor/agents", "harbor/agents/installed", "harbor/models", "harbor/models/agent"] {
        write(&stubs.join(p).join("__init__.py"), "");
    }
    write(&stubs.join("harbor/agents/installed/base.py"), STUB_BASE);
    write(&stubs.join("harbor/models/agent/context.py"), STUB_CONTEXT);
    let adapter = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../eval/harbor");
    let logs = tmp.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let out = Command::new("python3")
        .arg("-c")
        .arg(CHECK)
        .arg(&logs)
        .env("PYTHONPATH", format!("{}:{}", adapter.display(), stubs.display()))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "ok",
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
