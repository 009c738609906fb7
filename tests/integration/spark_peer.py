"""A real Spark Connect server for the tests, from the PyPI pyspark package.

The pip wheel has no sbin/start-connect-server.sh, so the server is started
the way that script does it: spark-submit with the SparkConnectServer
class, in the foreground, on a free loopback port, with a pre-shared
token (given in the environment, so it is not in `ps`). One server per
test session (per xdist worker), shared by the tests; the driver gets
1 GiB. The Spark UI listens on a second free port: its REST API shows the
jobs an interrupted query left (test_spark_client.py).

Reattachable streams are cut by the server after
spark.connect.execute.reattachable.senderMaxStreamSize bytes; this server
cuts them after 4 MiB, so a large result crosses several
ReattachExecute calls (the client must continue where it stopped).
"""
from __future__ import annotations

import json
import os
import secrets
import socket
import sys
import urllib.request
from pathlib import Path

import pytest

from peers import Peer, PeerError

VENV_BIN = Path(sys.executable).parent
SPARK_SUBMIT = VENV_BIN / "spark-submit"
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


def spark_available() -> str | None:
    """Why a Spark Connect server cannot start here, or None."""
    if not SPARK_SUBMIT.exists():
        return "pyspark is not installed in the venv (scripts/setup.sh --test)"
    java = os.environ.get("JAVA_HOME")
    if not (java and Path(java, "bin/java").exists()) and not any(
            Path(p, "java").exists() for p in os.environ.get("PATH", "").split(":")):
        return "no java on PATH (openjdk-17-jre-headless)"
    return None


class SparkConnect(Peer):
    name = "spark_connect"
    start_timeout = 180.0
    stop_timeout = 30.0
    extra_ports = 1  # the Spark UI
    stream_cut_bytes = 4 << 20
    driver_memory = "1g"

    def __init__(self, workdir: Path):
        super().__init__(workdir)
        self.token = secrets.token_hex(16)

    spark_submit = SPARK_SUBMIT

    def command(self):
        confs = {
            "spark.connect.grpc.binding.address": self.host,
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.driver.host": self.host,
            "spark.driver.bindAddress": self.host,
            "spark.ui.port": str(self.ports[1]),
            "spark.ui.host": self.host,
            "spark.port.maxRetries": "0",
            "spark.sql.shuffle.partitions": "4",
            "spark.local.dir": str(self.workdir / "tmp"),
            "spark.sql.warehouse.dir": str(self.workdir / "warehouse"),
        }
        if self.stream_cut_bytes:  # None: the server's default (1 GiB)
            confs["spark.connect.execute.reattachable.senderMaxStreamSize"] = \
                str(self.stream_cut_bytes)
        confs.update(self.more_confs())
        cmd = [str(self.spark_submit), "--master", "local[2]", "--driver-memory",
               self.driver_memory, *self.more_args(), "--class", SERVER_CLASS,
               "--name", "knut-test-connect"]
        for k, v in confs.items():
            cmd += ["--conf", f"{k}={v}"]
        return cmd + ["spark-internal"]

    def more_confs(self) -> dict:
        return {}

    def more_args(self) -> list[str]:
        return []

    def env(self):
        return {"SPARK_CONNECT_AUTHENTICATE_TOKEN": self.token,
                "SPARK_NO_DAEMONIZE": "1", "SPARK_LOCAL_IP": self.host,
                "PYSPARK_PYTHON": sys.executable}

    def is_ready(self):
        with socket.create_connection((self.host, self.port), timeout=0.5):
            return True

    @property
    def url(self) -> str:
        """The sc:// URL without the token (give it with the token file)."""
        return f"sc://{self.host}:{self.port}/"

    @property
    def ui(self) -> str:
        return f"http://{self.host}:{self.ports[1]}"

    def jobs(self) -> list[dict]:
        """The application's jobs, from the Spark UI's REST API."""
        with urllib.request.urlopen(f"{self.ui}/api/v1/applications", timeout=60) as r:
            app = json.load(r)[0]["id"]
        with urllib.request.urlopen(f"{self.ui}/api/v1/applications/{app}/jobs",
                                    timeout=60) as r:
            return json.load(r)


REPO = Path(__file__).resolve().parents[2]
SPARK41 = REPO / ".venv-spark41"
ICEBERG_JAR = REPO / "third_party" / "iceberg" / "iceberg-spark-runtime-4.1_2.13-1.12.0.jar"


class SparkIceberg(SparkConnect):
    """A Spark 4.1 Connect server with Apache Iceberg's Spark runtime and a
    Hadoop catalog `ice` over <workdir>/iceberg: Spark writes the Iceberg
    fixtures (.venv-spark41: the newest Iceberg runtime does not load into
    the 4.3 server of .venv)."""
    name = "spark_iceberg"
    spark_submit = SPARK41 / "bin" / "spark-submit"
    stream_cut_bytes = None

    @property
    def warehouse(self) -> Path:
        return self.workdir / "iceberg"

    def more_confs(self):
        return {"spark.sql.extensions":
                "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
                "spark.sql.catalog.ice": "org.apache.iceberg.spark.SparkCatalog",
                "spark.sql.catalog.ice.type": "hadoop",
                "spark.sql.catalog.ice.warehouse": str(self.warehouse),
                # knut commits too: every read loads the table's current metadata
                "spark.sql.catalog.ice.cache-enabled": "false"}

    def more_args(self):
        return ["--jars", str(ICEBERG_JAR)]

    def env(self):
        site = next(SPARK41.glob("lib/python3*/site-packages/pyspark"))
        return {**super().env(), "SPARK_HOME": str(site),
                "PYSPARK_PYTHON": str(SPARK41 / "bin" / "python")}


def start_peer(cls, tmp_path_factory):
    why = spark_available()
    if not why and cls is SparkIceberg and not (SparkIceberg.spark_submit.exists()
                                                 and ICEBERG_JAR.exists()):
        why = "Spark 4.1 or the Iceberg runtime is not installed (scripts/setup.sh --test)"
    if why:
        pytest.fail(f"Spark Connect peer: {why}", pytrace=False)
    peer = cls(tmp_path_factory.mktemp(cls.name))
    try:
        peer.start()
    except PeerError as e:
        pytest.fail(str(e), pytrace=False)
    token_file = peer.workdir / "token"
    token_file.write_text(peer.token + "\n")
    token_file.chmod(0o600)
    peer.token_file = token_file
    return peer


@pytest.fixture(scope="session")
def spark_iceberg(tmp_path_factory):
    """One Spark 4.1 + Iceberg server for the session (or xdist worker)."""
    peer = start_peer(SparkIceberg, tmp_path_factory)
    yield peer
    peer.stop()


@pytest.fixture(scope="session")
def spark_connect(tmp_path_factory):
    """One Spark Connect server for the session (or xdist worker)."""
    peer = start_peer(SparkConnect, tmp_path_factory)
    yield peer
    peer.stop()
