"""A private Redis Cluster for tests: real redis-server nodes on free loopback ports, never 6379.

Three primaries (and, when asked, replicas for each) in a temporary directory, joined with
``redis-cli --cluster create``; ready once every node says ``cluster_state:ok`` with all 16384
slots covered (and every replica's link to its primary is up). Stopped by pid.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import redis
from redis.crc import key_slot

from tests.support.ports import free_port
from tests.support.redis_server import PortTaken, RedisServer

SLOTS = 16384


@dataclass(frozen=True)
class NodeInfo:
    """One line of CLUSTER NODES, as far as tests need it."""

    node_id: str
    port: int
    primary: bool
    primary_id: str | None  # a replica's primary
    failed: bool
    slots: tuple[tuple[int, int], ...]

    def holds(self, slot: int) -> bool:
        return any(low <= slot <= high for low, high in self.slots)


class LocalRedisCluster:
    """Starts ``primaries`` x (1 + ``replicas``) redis-server nodes and joins them."""

    def __init__(
        self,
        data_dir: Path,
        *,
        primaries: int = 3,
        replicas: int = 0,
        node_timeout_ms: int = 1000,
    ) -> None:
        cli = shutil.which("redis-cli")
        if cli is None:
            raise RuntimeError("redis-cli is not installed (apt-get install redis-tools)")
        if primaries < 3:
            raise ValueError("redis-cli --cluster create needs at least three primaries")
        self.cli = cli
        self.data_dir = data_dir
        self.primaries = primaries
        self.replicas = replicas
        self.node_timeout_ms = node_timeout_ms
        self.nodes = [self._node(index) for index in range(primaries * (1 + replicas))]

    def _node(self, index: int) -> RedisServer:
        port, bus = free_port(), free_port()
        while bus == port:
            bus = free_port()
        args = [
            "--cluster-enabled", "yes",
            "--cluster-config-file", f"nodes-{port}.conf",
            "--cluster-node-timeout", str(self.node_timeout_ms),
            "--cluster-port", str(bus),  # not port+10000, which may be taken or > 65535
            # A replica may always take over: the tests kill primaries on purpose.
            "--cluster-replica-validity-factor", "0",
            "--appendfsync", "everysec",
            # A replica's first sync starts at once, not after Redis's 5 s wait for others.
            "--repl-diskless-sync-delay", "0",
        ]  # fmt: skip
        return RedisServer(self.data_dir / f"node{index}", port=port, extra_args=args)

    def _start_node(self, index: int) -> None:
        """Start a node; one whose port or bus port was taken meanwhile gets new ones."""
        for _ in range(5):
            try:
                self.nodes[index].start()
                return
            except PortTaken:
                self.nodes[index] = self._node(index)
        self.nodes[index].start()

    @property
    def url(self) -> str:
        """A URL of one node: the cluster client discovers the others from it."""
        return self.nodes[0].url

    @property
    def all_url(self) -> str:
        """A URL of every node, for a client that must start while one of them is down."""
        return "redis://" + ",".join(f"127.0.0.1:{port}" for port in self.ports) + "/0"

    @property
    def ports(self) -> list[int]:
        return [node.port for node in self.nodes]

    def start(self, timeout: float = 30.0) -> None:
        try:
            for index in range(len(self.nodes)):
                self._start_node(index)
            create = [self.cli, "--cluster", "create"]
            create += [f"127.0.0.1:{port}" for port in self.ports]
            create += ["--cluster-replicas", str(self.replicas), "--cluster-yes"]
            done = subprocess.run(create, capture_output=True, timeout=timeout, check=False)
            if done.returncode != 0:
                raise RuntimeError(
                    f"redis-cli --cluster create failed:\n{done.stdout.decode()[-2000:]}"
                    f"{done.stderr.decode()[-2000:]}"
                )
            self.wait_ok(timeout)
        except BaseException:
            self.kill()
            raise

    def client(self, port: int) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=port, socket_timeout=2, protocol=2)

    def live(self) -> list[RedisServer]:
        return [node for node in self.nodes if node.running()]

    def wait_ok(self, timeout: float = 30.0) -> None:
        """Until every live node sees the cluster ok, every slot served by a live primary, and
        every live replica in sync with its primary."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            last = self._not_ok()
            if not last:
                return
            time.sleep(0.1)
        raise RuntimeError(f"the Redis Cluster is not ok within {timeout}s: {last}")

    def _not_ok(self) -> str:
        live_ports = {node.port for node in self.live()}
        for port in live_ports:
            try:
                with self.client(port) as client:
                    info = client.execute_command("CLUSTER INFO")
                    if info.get("cluster_state") != "ok" or info.get("cluster_slots_ok") != str(
                        SLOTS
                    ):
                        return f"node {port}: {info.get('cluster_state')}"
                    role = client.info("replication")
            except redis.RedisError as exc:
                return f"node {port}: {exc}"
            if role.get("role") == "slave" and role.get("master_link_status") != "up":
                return f"replica {port}: link {role.get('master_link_status')}"
        nodes = self.cluster_nodes()
        covered = sum(
            high - low + 1
            for node in nodes
            if node.primary and not node.failed and node.port in live_ports
            for low, high in node.slots
        )
        if covered != SLOTS:
            return f"{covered} of {SLOTS} slots on live primaries"
        return ""

    def cluster_nodes(self) -> list[NodeInfo]:
        """CLUSTER NODES as one live node sees it."""
        for node in self.live():
            try:
                with self.client(node.port) as client:
                    table = client.execute_command("CLUSTER NODES")
            except redis.RedisError:
                continue
            return [_node_info(address, row, node.port) for address, row in table.items()]
        raise RuntimeError("no node of the cluster answers")

    def primary_for(self, key: str, timeout: float = 15.0) -> RedisServer:
        """The live node that serves ``key``'s slot (waiting while a failover is under way and
        the news of a promotion reaches the node asked)."""
        slot = key_slot(key.encode())
        deadline = time.monotonic() + timeout
        while True:
            live = {node.port for node in self.live()}
            for info in self.cluster_nodes():
                if info.primary and not info.failed and info.holds(slot) and info.port in live:
                    return next(node for node in self.nodes if node.port == info.port)
            if time.monotonic() > deadline:
                raise RuntimeError(f"no live primary serves slot {slot}")
            time.sleep(0.1)

    def replicas_of(self, primary: RedisServer) -> list[RedisServer]:
        """The live nodes replicating ``primary``."""
        nodes = self.cluster_nodes()
        ids = {info.node_id for info in nodes if info.port == primary.port}
        ports = {info.port for info in nodes if info.primary_id in ids}
        return [node for node in self.live() if node.port in ports]

    def kill_node(self, node: RedisServer) -> None:
        """SIGKILL one node: a crashed machine."""
        node.kill()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def kill(self) -> None:
        for node in self.nodes:
            node.kill()


def _node_info(address: str, row: dict[str, object], asked: int) -> NodeInfo:
    """A row of redis-py's parsed CLUSTER NODES (the asking node's own address may be ':port')."""
    flags = set(str(row["flags"]).split(","))
    port = asked if "myself" in flags else int(address.split("@")[0].rsplit(":", 1)[1])
    slots = tuple(
        (int(pair[0]), int(pair[-1]))
        for pair in row.get("slots") or ()  # type: ignore[attr-defined]
    )
    return NodeInfo(
        node_id=str(row["node_id"]),
        port=port,
        primary="master" in flags,
        primary_id=None if str(row.get("master_id", "-")) == "-" else str(row["master_id"]),
        failed="fail" in flags or "fail?" in flags,
        slots=slots,
    )
