"""The deployment files agree with the real server: compose, Dockerfile, README and CI.

Docker does not run on these machines, so the compose file is parsed and its command run here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.ports import free_port
from tests.support.redis_server import RedisServer

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


@pytest.fixture(scope="module")
def server_help() -> str:
    result = subprocess.run(
        [sys.executable, "-m", "server", "--help"], capture_output=True, text=True, check=True
    )
    return result.stdout


def option_value(command: list[str], option: str) -> str:
    return command[command.index(option) + 1]


def test_redis_service_is_durable_redis_7(compose: dict[str, Any]) -> None:
    redis = compose["services"]["redis"]
    assert redis["image"].split(":")[1].startswith("7")
    command = redis["command"]
    assert option_value(command, "--appendonly") == "yes"
    assert option_value(command, "--appendfsync") == "everysec"
    volume_name, mount = redis["volumes"][0].split(":")
    assert mount == "/data"
    assert volume_name in compose["volumes"]
    assert "healthcheck" in redis


def test_server_command_uses_only_real_options(compose: dict[str, Any], server_help: str) -> None:
    command = compose["services"]["server"]["command"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert command[0] in scripts
    for option in (arg for arg in command[1:] if arg.startswith("--")):
        assert re.search(rf"(?m)^\s+{re.escape(option)}\b", server_help), option
    assert option_value(command, "--host") == "0.0.0.0"


def test_server_port_matches_published_port_and_healthcheck(compose: dict[str, Any]) -> None:
    server = compose["services"]["server"]
    port = option_value(server["command"], "--port")
    published = [mapping.split(":") for mapping in server["ports"]]
    assert [port, port] in published
    probe = " ".join(server["healthcheck"]["test"])
    assert f"127.0.0.1:{port}/healthz" in probe


def test_server_reaches_redis_through_redis_url(compose: dict[str, Any], server_help: str) -> None:
    server = compose["services"]["server"]
    url = server["environment"]["REDIS_URL"]
    assert url.startswith("redis://redis:")
    assert "REDIS_URL" in server_help
    assert server["depends_on"]["redis"]["condition"] == "service_healthy"


def test_the_data_directory_is_a_volume(compose: dict[str, Any], server_help: str) -> None:
    """Without REDIS_URL the image keeps its SQLite store in ARENA_DATA_DIR: a volume in the
    image and in compose, so the data outlives the container."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    data_dir = re.search(r"(?m)^ENV ARENA_DATA_DIR=(\S+)$", dockerfile)
    assert data_dir is not None
    assert "ARENA_DATA_DIR" in server_help
    assert re.search(rf"(?m)^VOLUME {re.escape(data_dir.group(1))}$", dockerfile)
    volume_name, mount = compose["services"]["server"]["volumes"][0].split(":")
    assert mount == data_dir.group(1)
    assert volume_name in compose["volumes"]


def test_finished_races_go_to_a_durable_postgres(compose: dict[str, Any], server_help: str) -> None:
    """The server's archive is the compose file's PostgreSQL: a volume, a health check, and the
    server waits for it."""
    postgres = compose["services"]["postgres"]
    assert postgres["image"].startswith("postgres:")
    volume_name, _, path = postgres["volumes"][0].partition(":")
    assert path == "/var/lib/postgresql/data"
    assert volume_name in compose["volumes"]
    assert "pg_isready" in postgres["healthcheck"]["test"]
    server = compose["services"]["server"]
    url = server["environment"]["ARENA_ARCHIVE_URL"]
    env = postgres["environment"]
    assert url == (
        f"postgresql://{env['POSTGRES_USER']}:{env['POSTGRES_PASSWORD']}@postgres:5432/"
        f"{env['POSTGRES_DB']}"
    )
    assert "--archive-url" in server_help
    assert "ARENA_ARCHIVE_URL" in server_help
    assert server["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_dockerfile_runs_the_compose_command(compose: dict[str, Any]) -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    cmd = re.search(r"(?m)^CMD (\[.*\])$", dockerfile)
    assert cmd is not None
    assert json.loads(cmd.group(1)) == compose["services"]["server"]["command"]
    assert compose["services"]["server"]["build"] == "."


@pytest.mark.e2e
def test_compose_command_starts_a_server_on_redis_url(
    compose: dict[str, Any], tmp_path: Path
) -> None:
    """The compose command, with REDIS_URL in the environment, serves /healthz with Redis up."""
    redis = RedisServer(tmp_path / "redis")
    redis.start()
    command = list(compose["services"]["server"]["command"])
    port = free_port()
    command[command.index("--host") + 1] = "127.0.0.1"
    command[command.index("--port") + 1] = str(port)
    command[0:1] = [sys.executable, "-m", "server"]
    env = {**os.environ, "REDIS_URL": redis.url, "ARENA_DATA_DIR": str(tmp_path / "data")}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        body = wait_for_health(port, process)
        assert body["store"] is True
        redis.kill()
        assert health_status(port) == 503
    finally:
        process.terminate()
        process.wait(timeout=10)
        redis.kill()


def wait_for_health(port: int, process: subprocess.Popen[bytes]) -> dict[str, Any]:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as answer:
                return dict(json.loads(answer.read()))
        except OSError:
            time.sleep(0.05)
    raise AssertionError("server did not become healthy")


def health_status(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "bash scripts/test" in readme
    assert "bash scripts/serve" in readme
    assert "exec bash scripts/test" in ci
