"""The Dockerfile, docker-compose.yml and their example files hold the deployment's rules.

No Docker engine runs here, so the image is never built in CI: CI runs the image's one
install step (deploy/install.sh) instead, and these tests check that the Dockerfile runs
exactly that script and keeps the rest of the contract (non-root, health check, command),
and that compose wires the bot to its database with secrets only from .env. The health
check's command is run for real against a local server.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import dockerfile
import pytest
import yaml
from aiohttp import web

from jobs.config import load_sources

REPO = Path(__file__).resolve().parents[2]
SECRETS = ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "ANTHROPIC_API_KEY")
FROM_ENV_FILE = re.compile(r"^\$\{(?P<name>[A-Z_]+)(:-|:\?[^}]*)?\}$")


def instructions() -> list[dockerfile.Command]:
    """The Dockerfile as BuildKit's own parser reads it."""
    return list(dockerfile.parse_file(str(REPO / "Dockerfile")))


def arguments(keyword: str) -> list[tuple[str, ...]]:
    return [c.value for c in instructions() if c.cmd.upper() == keyword]


def run_lines() -> list[str]:
    return [" ".join((*c.flags, *c.value)) for c in instructions() if c.cmd.upper() == "RUN"]


def compose() -> dict[str, Any]:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())


def test_the_image_starts_from_slim_python_311() -> None:
    assert arguments("FROM") == [("python:3.11-slim-bookworm",)]


def test_the_only_install_step_is_the_script_ci_runs_with_the_cpu_torch_index() -> None:
    runs = run_lines()
    installs = [r for r in runs if "install.sh" in r]
    assert len(installs) == 1
    words = shlex.split(installs[0])
    script = words.index("/src/deploy/install.sh")
    assert words[script - 1 :] == ["bash", "/src/deploy/install.sh", "/opt/slack-kb", "/src"]
    assert 'TORCH_INDEX_URL="$TORCH_INDEX_URL"' in installs[0]
    assert "--mount=type=bind,source=.,target=/src" in words
    assert ("TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu",) in arguments("ARG")
    assert (REPO / "deploy" / "install.sh").is_file()
    # Nothing else installs Python packages behind the script's back.
    assert not [r for r in runs if r is not installs[0] and re.search(r"\bpip\b|\bapt", r)]


def test_the_server_runs_as_a_numeric_non_root_user_after_every_install_step() -> None:
    keywords = [c.cmd.upper() for c in instructions()]
    ((user,),) = arguments("USER")
    uid, _, gid = user.partition(":")
    # Numeric, so Kubernetes' runAsNonRoot can check it; the user the image creates.
    assert uid.isdigit() and int(uid) != 0 and gid.isdigit() and int(gid) != 0
    assert keywords.index("USER") > max(i for i, kw in enumerate(keywords) if kw == "RUN")
    assert any(f"groupadd --system --gid {gid} kb " in r for r in run_lines())
    assert any(f"useradd --system --uid {uid} --gid kb " in r for r in run_lines())


def test_the_command_is_kb_serve_listening_on_all_interfaces_with_kb_home_on_a_volume() -> None:
    (cmd,) = [c for c in instructions() if c.cmd.upper() == "CMD"]
    assert cmd.json and cmd.value == ("kb", "serve")  # exec form: kb gets SIGTERM itself
    (env,) = arguments("ENV")
    pairs = dict(zip(env[::2], env[1::2], strict=True))
    assert pairs["KB_HOST"] == "0.0.0.0" and pairs["KB_HOME"] == "/data"
    assert pairs["PATH"] == "/opt/slack-kb/bin:$PATH"
    assert arguments("VOLUME") == [("/data",)]


def test_the_question_graph_is_read_from_where_the_install_step_exported_it() -> None:
    # deploy/install.sh exports the ONNX question graph into PREFIX/query-graphs (and .ci/run
    # checks the demo keeps it); without this, every fresh /data volume exports it again.
    (env,) = arguments("ENV")
    pairs = dict(zip(env[::2], env[1::2], strict=True))
    assert pairs["KB_QUERY_GRAPH_DIR"] == "/opt/slack-kb/query-graphs"
    assert 'Path(sys.prefix) / "query-graphs"' in (REPO / "deploy" / "install.sh").read_text()


def test_no_secret_is_set_in_the_image() -> None:
    for kw in ("ENV", "ARG", "LABEL"):
        for value in arguments(kw):
            assert not re.search(r"TOKEN|SECRET|PASSWORD|API_KEY", " ".join(value)), value


def test_the_build_context_and_git_leave_out_env_files_and_local_state() -> None:
    ignored = (REPO / ".dockerignore").read_text().split()
    assert {".env", ".env.*", ".git", ".venv", "sources.toml"} <= set(ignored)
    assert {".env", "/sources.toml"} <= set((REPO / ".gitignore").read_text().split())


def healthcheck_command() -> list[str]:
    (check,) = [c for c in instructions() if c.cmd.upper() == "HEALTHCHECK"]
    assert any(flag.startswith("--start-period=") for flag in check.flags)
    kind, *command = check.value
    assert kind == "CMD" and command[0] == "python"  # exec form: no shell needed
    assert "urllib.request" in command[-1] and "/healthz" in command[-1]
    return command


@pytest.mark.parametrize(("status", "healthy"), [(200, True), (503, False)])
async def test_the_health_check_passes_only_on_a_200_from_healthz(
    aiohttp_server: Any, status: int, healthy: bool
) -> None:
    paths: list[str] = []

    async def health(request: web.Request) -> web.Response:
        paths.append(request.path)
        return web.json_response({"status": "x"}, status=status)

    app = web.Application()
    app.router.add_get("/healthz", health)
    server = await aiohttp_server(app)
    assert await run_healthcheck(port=server.port) == (0 if healthy else 1)
    assert paths == ["/healthz"]


async def test_the_health_check_fails_when_nothing_listens(unused_tcp_port: int) -> None:
    assert await run_healthcheck(port=unused_tcp_port) != 0


async def run_healthcheck(*, port: int) -> int:
    """Run the HEALTHCHECK command as Docker does, with KB_PORT set."""
    env = {
        **os.environ,
        "KB_PORT": str(port),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    program, *args = healthcheck_command()
    process = await asyncio.create_subprocess_exec(
        shutil.which(program, path=env["PATH"]) or program,
        *args,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    return await asyncio.wait_for(process.wait(), timeout=30)


def test_compose_runs_postgres_with_pgvector_a_health_check_and_a_volume() -> None:
    db = compose()["services"]["db"]
    assert db["image"].startswith("pgvector/pgvector:pg")
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    volume = next(v for v in db["volumes"] if v.endswith(":/var/lib/postgresql/data"))
    assert volume.split(":")[0] in compose()["volumes"]


def test_compose_starts_the_bot_once_the_database_is_healthy() -> None:
    bot = compose()["services"]["bot"]
    assert bot["build"] == "."
    assert bot["depends_on"] == {"db": {"condition": "service_healthy"}}
    assert any(v.endswith(":/data") for v in bot["volumes"])  # KB_HOME in the image


def test_compose_takes_every_secret_from_the_env_file_never_from_itself() -> None:
    env = compose()["services"]["bot"]["environment"]
    sources = {name: name for name in SECRETS} | {"PGPASSWORD": "POSTGRES_PASSWORD"}
    for name, source in sources.items():
        match = FROM_ENV_FILE.match(env[name])
        assert match and match["name"] == source, f"{name}: {env[name]!r}"
    # The URL names the server and the role, never a password.
    assert re.fullmatch(r"postgresql://kb@db:5432/kb", env["DATABASE_URL"])
    db_env = compose()["services"]["db"]["environment"]
    assert FROM_ENV_FILE.match(db_env["POSTGRES_PASSWORD"])


def test_every_variable_compose_reads_from_env_is_in_the_example_env_file() -> None:
    wanted = set(re.findall(r"\$\{([A-Z_]+)", (REPO / "docker-compose.yml").read_text()))
    assert set(SECRETS) <= wanted
    example = (REPO / "deploy" / "env.example").read_text()
    listed = set(re.findall(r"^([A-Z_]+)=", example, re.MULTILINE))
    assert wanted <= listed
    # The example holds names only, no values.
    assert all(line.endswith("=") for line in example.splitlines() if re.match(r"^[A-Z_]+=", line))


def test_compose_mounts_the_sources_file_where_kb_sources_points() -> None:
    spec = compose()
    bot = spec["services"]["bot"]
    (mounted,) = bot["configs"]
    assert mounted["target"] == bot["environment"]["KB_SOURCES"]
    assert spec["configs"][mounted["source"]] == {"file": "./sources.toml"}


def test_the_example_sources_file_is_a_valid_sources_file() -> None:
    configs = load_sources(REPO / "deploy" / "sources.example.toml")
    assert configs and all(c.schedule.every or c.schedule.cron for c in configs)
