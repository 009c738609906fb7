"""Fixtures for the integration tests: real peers and the knut binary.

Peers (see peers.py) are started per test on 127.0.0.1 with free ports and a
temporary directory each, and are always stopped afterwards; teardown also
checks that the process is really gone. When a test fails, the tail of every
peer's log is attached to the report. ``KNUT_BIN`` overrides the path of the
binary under test (default: <repo>/build/knut).
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from peers import (REPO, Airflow, Airflow2, FalkorDB, Peer, PeerError, Prometheus, Valkey,
                   pid_alive, valkey_binary)

# Every peer started in this session, so none outlives pytest even if it is
# interrupted before the fixtures' teardown runs.
_started: list[Peer] = []


def _stop_all() -> None:
    for peer in _started:
        peer.stop()


atexit.register(_stop_all)


def pytest_sessionfinish(session, exitstatus):
    _stop_all()


def _start(peer: Peer) -> Peer:
    _started.append(peer)
    try:
        return peer.start()
    except PeerError as e:
        pytest.fail(str(e), pytrace=False)


def _stop(peer: Peer) -> None:
    pid = peer.pid
    peer.stop()
    if pid is not None and pid_alive(pid):
        pytest.fail(f"{peer.name} (pid {pid}) is still running after teardown", pytrace=False)


def peer_fixture(cls: type[Peer], scope: str = "function"):
    """A fixture named after the peer class: starts it, yields it, stops it."""

    @pytest.fixture(scope=scope, name=cls.name)
    def _fixture(tmp_path_factory):
        peer = _start(cls(tmp_path_factory.mktemp(cls.name)))
        yield peer
        _stop(peer)

    return _fixture


valkey = peer_fixture(Valkey)
falkordb = peer_fixture(FalkorDB)
# Airflow 3 takes a while to start: one per session (tests tell their
# events apart by id / extra.round).
airflow = peer_fixture(Airflow, scope="session")
# Airflow 2.x (webserver + scheduler), likewise once per session.
airflow2 = peer_fixture(Airflow2, scope="session")
prometheus = peer_fixture(Prometheus)


class PeerFactory:
    """Starts extra peers inside a test (several of one kind, custom classes)."""

    def __init__(self, tmp_path_factory):
        self._tmp = tmp_path_factory
        self.peers: list[Peer] = []

    def __call__(self, cls: type[Peer]) -> Peer:
        peer = cls(self._tmp.mktemp(cls.name))
        self.peers.append(peer)
        return _start(peer)

    def stop_all(self) -> None:
        for peer in self.peers:
            _stop(peer)


@pytest.fixture
def start_peer(tmp_path_factory):
    factory = PeerFactory(tmp_path_factory)
    yield factory
    factory.stop_all()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    peers: list[Peer] = []
    for value in getattr(item, "funcargs", {}).values():
        if isinstance(value, Peer):
            peers.append(value)
        elif isinstance(value, PeerFactory):
            peers.extend(value.peers)
    for peer in peers:
        report.sections.append((f"{peer.name} log ({peer.log_path})", peer.log_tail()))


def pytest_report_header(config):
    knut = os.environ.get("KNUT_BIN") or str(REPO / "build" / "knut")
    try:
        server = valkey_binary()
    except PeerError as e:
        server = str(e)
    return [f"knut binary: {knut}", f"valkey/redis server: {server}"]


# ---- the binary under test ----------------------------------------------------


@pytest.fixture(scope="session")
def knut() -> Path:
    """Path of the knut binary: $KNUT_BIN, else <repo>/build/knut."""
    path = Path(os.environ.get("KNUT_BIN") or REPO / "build" / "knut")
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(
            f"knut binary not found at {path}: build it "
            "(cmake -S . -B build -G Ninja && ninja -C build) or set KNUT_BIN",
            pytrace=False,
        )
    return path


@pytest.fixture
def run_knut(knut):
    """run_knut(*args, input=None, env=None, timeout=120, cwd=None) runs the
    binary and returns the CompletedProcess (stdout/stderr as text unless
    input is bytes). It never raises on a non-zero exit: tests check it."""

    def run(*args, input=None, env=None, timeout=120, cwd=None):
        full_env = dict(os.environ)
        full_env.update(env or {})
        return subprocess.run(
            [str(knut), *(str(a) for a in args)],
            input=input,
            capture_output=True,
            text=not isinstance(input, bytes),
            env=full_env,
            timeout=timeout,
            cwd=cwd,
            check=False,
        )

    return run


def pytest_collection_finish(session):
    """Refuses an in-process import of the graphar reference package.

    It bundles its own Arrow C++ library, which breaks pyarrow in the same
    process (and some of its calls crash the interpreter): call it through
    garref.run() in a subprocess instead.
    """
    import sys

    if "graphar" in sys.modules:
        raise pytest.UsageError(
            "a test module imported the graphar reference package in-process; "
            "use tests/integration/garref.py (subprocess) instead")


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> dict[str, Path]:
    """A CA, a server certificate for 127.0.0.1/localhost and a client one
    (TLS and mutual TLS tests: net's gRPC transport, knut serve)."""
    if not shutil.which("openssl"):
        pytest.fail("openssl not found", pytrace=False)
    d = tmp_path_factory.mktemp("certs")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
             "ca.pem", "-days", "2", "-subj", "/CN=knut test CA", cwd=d)
    (d / "server.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    (d / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    for name in ("server", "client"):
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
                 f"{name}.csr", "-subj", f"/CN=knut test {name}", cwd=d)
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                 "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile",
                 f"{name}.ext", cwd=d)
    return {n: d / n for n in ("ca.pem", "server.pem", "server.key", "client.pem",
                               "client.key")}


def pytest_collection_modifyitems(config, items):
    """Puts every test that uses the Spark Connect server in one xdist group.

    The server is a session fixture, so each xdist worker that runs such a
    test starts its own JVM (about a minute and a GiB); with `--dist
    loadgroup` (scripts/test.sh) they all go to one worker and share one.
    """
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "spark_connect" in names or "spark_iceberg" in names:
            item.add_marker(pytest.mark.xdist_group("spark"))
