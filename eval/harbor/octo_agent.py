"""octo as an installed agent of Harbor, Terminal-Bench's harness.

Harbor builds each task's container, installs octo in it with ``install-octo.sh.j2`` and runs
``octo -p`` there headlessly; Harbor's verifier scores the result. Run Terminal-Bench with::

    harbor run -d terminal-bench@2.0 --agent-import-path octo_agent:OctoAgent \
        -m anthropic/claude-sonnet-4-5

from this folder (or with it on PYTHONPATH). ``-m provider/model`` becomes octo's
``--endpoint provider --model model``; the provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY,
DEEPSEEK_API_KEY, ...) is passed through from the host. ``--agent-kwarg binary=PATH`` uploads a
Linux octo binary built on the host instead of building one in the container.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from harbor.agents.installed.base import BaseInstalledAgent, ExecInput
from harbor.models.agent.context import AgentContext

# Keys octo reads for its built-in endpoints; only those set on the host are passed on.
PROVIDER_KEYS = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "MOONSHOT_API_KEY",
    "DASHSCOPE_API_KEY",
    "ZHIPU_API_KEY",
    "XAI_API_KEY",
    "GROQ_API_KEY",
)

# Where octo's stream of events goes inside the container (Harbor collects /logs/agent).
LOG = "/logs/agent/octo.jsonl"
UPLOADED = "/installed-agent/octo"


def octo_command(instruction: str, model_name: str | None, max_turns: int = 100) -> str:
    """The shell command that runs octo on ``instruction`` in the task's container."""
    args = ["octo", "--permission-mode", "auto", "--sandbox", "off", "--no-save"]
    args += ["--max-turns", str(max_turns), "--output-format", "stream-json"]
    if model_name:
        provider, _, model = model_name.partition("/")
        if model:
            args += ["--endpoint", provider, "--model", model]
        else:
            args += ["--model", provider]
    args += ["-p", instruction]
    # The container is the isolation; octo's own sandbox stays off so installs work as asked.
    return f"mkdir -p /logs/agent && {shlex.join(args)} > {LOG} 2> /logs/agent/octo.stderr"


def read_result(log: Path) -> dict:
    """The final ``result`` object of octo's stream-json output (empty when there is none)."""
    result: dict = {}
    if not log.is_file():
        return result
    for line in log.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and event.get("type") == "result":
            result = event
    return result


class OctoAgent(BaseInstalledAgent):
    """octo, installed in the task's container and run headlessly in auto mode."""

    SUPPORTS_ATIF = False

    def __init__(self, logs_dir: Path, *args, binary: str | None = None, max_turns: int = 100, **kwargs):
        self._binary = binary or os.environ.get("OCTO_BINARY")
        self._max_turns = int(max_turns)
        super().__init__(logs_dir, *args, **kwargs)

    @staticmethod
    def name() -> str:
        return "octo"

    @property
    def _install_agent_template_path(self) -> Path:
        return Path(__file__).parent / "install-octo.sh.j2"

    async def setup(self, environment) -> None:
        if self._binary:
            await environment.upload_file(source_path=Path(self._binary), target_path=UPLOADED)
        await super().setup(environment)

    def create_run_agent_commands(self, instruction: str) -> list[ExecInput]:
        env = {k: os.environ[k] for k in PROVIDER_KEYS if os.environ.get(k)}
        command = octo_command(instruction, self.model_name, self._max_turns)
        return [ExecInput(command=command, env=env)]

    def populate_context_post_run(self, context: AgentContext) -> None:
        result = read_result(self.logs_dir / "octo.jsonl")
        usage = result.get("usage") or {}
        figures = {
            "n_input_tokens": usage.get("input_tokens"),
            "n_output_tokens": usage.get("output_tokens"),
            "n_cache_tokens": usage.get("cache_read_input_tokens"),
            "cost_usd": result.get("total_cost_usd"),
        }
        for field, value in figures.items():
            if value is not None and hasattr(context, field):
                setattr(context, field, value)
