"""Real peer processes for the integration tests, started on loopback.

A peer is a server knut talks to (Valkey, FalkorDB, later Airflow, Spark
Connect, Prometheus...). Each one runs as a child process on 127.0.0.1 with
an ephemeral port and its own temporary directory; its stdout/stderr go to
``<dir>/<name>.log``, which is shown when a test fails or the peer does not
start. Peers are always stopped by the fixtures in ``conftest.py``, even when
a test fails.

Adding a peer is one small class plus one line in ``conftest.py``::

    class Prometheus(Peer):
        name = "prometheus"
        start_timeout = 30.0

        def command(self):
            cfg = self.workdir / "prometheus.yml"
            cfg.write_text("global: {scrape_interval: 1s}\\n")
            return ["prometheus", f"--config.file={cfg}",
                    f"--web.listen-address={self.host}:{self.port}",
                    f"--storage.tsdb.path={self.workdir / 'data'}"]

        def is_ready(self):
            return http_ok(f"{self.url}/-/ready")

    # conftest.py
    prometheus = peer_fixture(Prometheus)

``command()`` says how to start it (use ``self.host``, ``self.port``,
``self.workdir``); ``is_ready()`` is one quick probe, polled until it returns
True or ``start_timeout`` passes; ``env()`` may add environment variables;
``extra_ports`` reserves more free ports (``self.ports[1:]``) for peers that
listen on several. ``Peer.stop()`` sends SIGTERM, then SIGKILL after
``stop_timeout``; override it only for peers that need a special shutdown.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import redis

REPO = Path(__file__).resolve().parents[2]
LOOPBACK = "127.0.0.1"


class PeerError(RuntimeError):
    """A peer could not be started (the message carries its log tail)."""


def free_port(host: str = LOOPBACK) -> int:
    """An ephemeral port that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def http_ok(url: str, timeout: float = 1.0) -> bool:
    """True if GET url answers 2xx: the usual readiness probe for HTTP peers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return 200 <= resp.status < 300
    except (urllib.error.URLError, OSError):
        return False


def pid_alive(pid: int) -> bool:
    """True if a process with this pid exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Peer:
    """One peer process. Subclasses set ``name`` and implement ``command``
    and ``is_ready``; see the module docstring."""

    name = "peer"
    start_timeout = 20.0
    stop_timeout = 10.0
    extra_ports = 0
    log_tail_lines = 40
    # Log lines that mean "someone took the port between free_port() and
    # bind()": the start is retried on fresh ports.
    port_taken_markers = ("Address already in use", "EADDRINUSE")

    def __init__(self, workdir: Path):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.host = LOOPBACK
        self.ports: list[int] = []
        self.proc: subprocess.Popen | None = None
        self.log_path = self.workdir / f"{self.name}.log"
        self._log = None

    # -- what a subclass describes -----------------------------------------

    def command(self) -> list[str]:
        raise NotImplementedError

    def env(self) -> dict[str, str]:
        return {}

    def is_ready(self) -> bool:
        raise NotImplementedError

    # -- convenience --------------------------------------------------------

    @property
    def port(self) -> int:
        return self.ports[0]

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int | None = None) -> str:
        lines = lines or self.log_tail_lines
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:]) or "(log is empty)"

    # -- lifecycle ----------------------------------------------------------

    def start(self, attempts: int = 3) -> "Peer":
        for attempt in range(1, attempts + 1):
            self.ports = [free_port(self.host) for _ in range(1 + self.extra_ports)]
            err = self._start_once()
            if err is None:
                return self
            port_race = any(m in self.log_tail() for m in self.port_taken_markers)
            if not port_race or attempt == attempts:
                raise PeerError(
                    f"{self.name} did not start on {self.host}:{self.port}: {err}\n"
                    f"command: {' '.join(self.command())}\n"
                    f"--- last lines of {self.log_path} ---\n{self.log_tail()}"
                )
        raise AssertionError("unreachable")

    def _start_once(self) -> str | None:
        """Starts the process and waits for readiness; returns why not, or None."""
        cmd = self.command()
        exe = shutil.which(cmd[0]) if not os.path.isabs(cmd[0]) else cmd[0]
        if not exe or not os.access(exe, os.X_OK):
            return f"executable {cmd[0]!r} not found"
        self._log = open(self.log_path, "ab")
        env = dict(os.environ, **self.env())
        self.proc = subprocess.Popen(
            cmd,
            cwd=self.workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            # Own session: a Ctrl-C meant for pytest does not reach the peer
            # first, so teardown still finds it and stops it in order.
            start_new_session=True,
        )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                code = self.proc.returncode
                self._close_log()
                return f"exited with status {code} before it was ready"
            try:
                if self.is_ready():
                    return None
            except Exception:  # a probe error only means "not ready yet"
                pass
            time.sleep(0.05)
        self.stop()
        return f"not ready after {self.start_timeout:.0f} s"

    def stop(self) -> None:
        """Stops the process (SIGTERM, then SIGKILL) and reaps it. Idempotent."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=self.stop_timeout)
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> "Peer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.host}:{self.ports} pid={self.pid}>"


# ---- Redis-protocol peers ----------------------------------------------------


def valkey_binary() -> str:
    """valkey-server if installed, else redis-server (same protocol and flags)."""
    for name in ("valkey-server", "redis-server"):
        path = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
        if path:
            return path
    raise PeerError("neither valkey-server nor redis-server is installed")


class Valkey(Peer):
    """Plain Valkey (or Redis): no persistence, loopback only."""

    name = "valkey"

    def server_args(self) -> list[str]:
        return [
            valkey_binary(),
            "--port", str(self.port),
            "--bind", self.host,
            "--save", "",
            "--appendonly", "no",
            "--dir", str(self.workdir),
            "--daemonize", "no",
            "--logfile", "",  # log to stdout, i.e. our log file
        ]

    def command(self) -> list[str]:
        return self.server_args()

    def client(self, **kw) -> redis.Redis:
        """A redis-py client for this peer (caller closes it)."""
        kw.setdefault("socket_timeout", 10)
        return redis.Redis(host=self.host, port=self.port, **kw)

    def is_ready(self) -> bool:
        with self.client(socket_timeout=1, socket_connect_timeout=1) as c:
            return c.ping() is True


FALKORDB_MODULE = REPO / "third_party" / "falkordb" / "falkordb.so"


class FalkorDB(Valkey):
    """Valkey with the FalkorDB graph module loaded."""

    name = "falkordb"
    start_timeout = 30.0  # the module is large and takes a moment to load

    def command(self) -> list[str]:
        if not FALKORDB_MODULE.is_file():
            raise PeerError(f"FalkorDB module not found at {FALKORDB_MODULE}: run scripts/setup.sh")
        return self.server_args() + ["--loadmodule", str(FALKORDB_MODULE)]

    def query(self, graph: str, cypher: str):
        """GRAPH.QUERY on this peer; returns the raw reply [header, rows, stats]."""
        with self.client() as c:
            return c.execute_command("GRAPH.QUERY", graph, cypher)


# ---- Apache Airflow 3 ----------------------------------------------------------

# Airflow lives in its own venv (scripts/setup.sh --test): its pins do not
# coexist with the test venv's.
AIRFLOW_VENV = REPO / ".venv-airflow"
AIRFLOW_USER = "knut"
AIRFLOW_PASSWORD = "knut-test-pass"


class Airflow(Peer):
    """Airflow 3 on SQLite: ``airflow db migrate`` first, then the API
    server (the peer's main process, on ``self.port``), a scheduler and a
    DAG processor. SimpleAuthManager with user ``knut`` (role op) and a
    fixed password; DAG files are copied from ``dags`` (a folder) before
    the start, and the peer is ready once its DAGs are registered.
    ``token()`` logs in and ``get(path)`` calls the REST API for assertions."""

    name = "airflow"
    start_timeout = 180.0  # python imports + API workers on a busy 2-core box
    stop_timeout = 20.0
    dags: Path | None = REPO / "tests" / "integration" / "airflow_dags"

    def __init__(self, workdir: Path):
        super().__init__(workdir)
        self.home = self.workdir / "home"
        self.helpers: list[subprocess.Popen] = []
        self._token: str | None = None

    @staticmethod
    def binary() -> str:
        exe = AIRFLOW_VENV / "bin" / "airflow"
        if not exe.is_file():
            raise PeerError(f"Airflow not installed at {exe}: run scripts/setup.sh --test")
        return str(exe)

    def env(self) -> dict[str, str]:
        return {
            "AIRFLOW_HOME": str(self.home),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(self.home / "dags"),
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": "2",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{AIRFLOW_USER}:op,viewer:viewer",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(self.home / "passwords.json"),
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL":
                f"{self.url}/execution/" if self.ports else "http://127.0.0.1:8080/execution/",
            "AIRFLOW__API__HOST": self.host,
            "AIRFLOW__API__PORT": str(self.port) if self.ports else "8080",
            "AIRFLOW__API__WORKERS": "1",
            "AIRFLOW__API_AUTH__JWT_SECRET": "knut-tests-only",
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
            "AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK": "False",
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
            "NO_PROXY": "*",
        }

    def prepare(self) -> None:
        """Home, password file, DAGs and the migrated SQLite database."""
        (self.home / "dags").mkdir(parents=True, exist_ok=True)
        (self.home / "passwords.json").write_text(
            f'{{"{AIRFLOW_USER}": "{AIRFLOW_PASSWORD}", "viewer": "viewer-pass"}}\n')
        if self.dags:
            for f in Path(self.dags).glob("*.py"):
                shutil.copy(f, self.home / "dags" / f.name)
        with open(self.log_path, "ab") as log:
            rc = subprocess.run([self.binary(), "db", "migrate"], env=dict(os.environ, **self.env()),
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                timeout=300, check=False).returncode
        if rc != 0:
            raise PeerError(f"airflow db migrate failed ({rc})\n{self.log_tail()}")

    def command(self) -> list[str]:
        return [self.binary(), "api-server", "--host", self.host, "--port", str(self.port),
                "--workers", "1"]

    def is_ready(self) -> bool:
        if not http_ok(f"{self.url}/api/v2/monitor/health"):
            return False
        # the DAG processor has parsed the DAG files (and so made their assets)
        return not self.dags or self.get("/api/v2/dags?limit=1")["total_entries"] > 0

    def _start_once(self) -> str | None:
        env = dict(os.environ, **self.env())
        for part in ("scheduler", "dag-processor"):
            log = open(self.workdir / f"{part}.log", "ab")
            self.helpers.append(subprocess.Popen(
                [self.binary(), part], cwd=self.workdir, env=env, stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
            log.close()
        err = super()._start_once()
        if err is not None:
            self._stop_helpers()
        return err

    def start(self, attempts: int = 3) -> "Peer":
        self.prepare()
        return super().start(attempts)

    @staticmethod
    def _stop_group(proc: subprocess.Popen, timeout: float) -> None:
        # Each part runs in its own session (pgid == pid): the group holds
        # its workers (uvicorn, LocalExecutor, DAG parsing) too.
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=timeout)
            except ProcessLookupError:
                pass
        try:  # leftover workers of an exited parent
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def _stop_helpers(self) -> None:
        helpers, self.helpers = self.helpers, []
        for proc in helpers:
            self._stop_group(proc, self.stop_timeout)

    def stop(self) -> None:
        proc = self.proc
        if proc is not None:
            self._stop_group(proc, self.stop_timeout)
        super().stop()
        self._stop_helpers()

    # -- REST helpers for assertions -------------------------------------------

    def token(self, user: str = AIRFLOW_USER, password: str = AIRFLOW_PASSWORD) -> str:
        import json

        req = urllib.request.Request(
            f"{self.url}/auth/token", method="POST",
            data=json.dumps({"username": user, "password": password}).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.load(resp)["access_token"]

    def get(self, path: str):
        """GET on the REST API as the op user; returns the parsed JSON."""
        import json

        if self._token is None:
            self._token = self.token()
        req = urllib.request.Request(f"{self.url}{path}",
                                     headers={"Authorization": f"Bearer {self._token}"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.load(resp)



# ---- Apache Airflow 2 ----------------------------------------------------------

AIRFLOW2_VENV = REPO / ".venv-airflow2"


class Airflow2(Airflow):
    """Airflow 2.x on SQLite (the path knut takes when /api/v2/version is a
    404): ``airflow db migrate`` and ``airflow users create`` (an Admin
    ``knut`` with the same fixed password as Airflow 3) first, then the
    webserver (the peer's main process, on ``self.port``) with the
    basic-auth API backend, and a scheduler, which also parses the DAG files
    of ``dags``. SequentialExecutor: Airflow 2 refuses any other on SQLite.
    ``self.ports[1]`` is the scheduler's log server (8793 by default).
    Ready once the DAGs are registered; ``get(path)`` calls the REST API
    with HTTP Basic."""

    name = "airflow2"
    extra_ports = 1
    dags: Path | None = REPO / "tests" / "integration" / "airflow2_dags"

    @staticmethod
    def binary() -> str:
        exe = AIRFLOW2_VENV / "bin" / "airflow"
        if not exe.is_file():
            raise PeerError(f"Airflow 2 not installed at {exe}: run scripts/setup.sh --test")
        return str(exe)

    def env(self) -> dict[str, str]:
        env = {
            "AIRFLOW_HOME": str(self.home),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(self.home / "dags"),
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
            "AIRFLOW__CORE__EXECUTOR": "SequentialExecutor",
            "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{self.home / 'airflow.db'}",
            "AIRFLOW__API__AUTH_BACKENDS": "airflow.api.auth.backend.basic_auth",
            "AIRFLOW__WEBSERVER__SECRET_KEY": "knut-tests-only",
            "AIRFLOW__WEBSERVER__WORKERS": "1",
            "AIRFLOW__WEBSERVER__WEB_SERVER_HOST": self.host,
            # gunicorn 27 (pinned) would open a control socket shared by every
            # webserver of the user (~/.gunicorn/gunicorn.ctl)
            "GUNICORN_CMD_ARGS": "--no-control-socket",
            "AIRFLOW__SCHEDULER__DAG_DIR_LIST_INTERVAL": "5",
            "AIRFLOW__SCHEDULER__MIN_FILE_PROCESS_INTERVAL": "5",
            "AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK": "False",
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
            "NO_PROXY": "*",
        }
        if self.ports:
            env["AIRFLOW__WEBSERVER__WEB_SERVER_PORT"] = str(self.port)
            env["AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT"] = str(self.ports[1])
        return env

    def prepare(self) -> None:
        """Home, DAGs, the migrated SQLite database and the admin user."""
        (self.home / "dags").mkdir(parents=True, exist_ok=True)
        if self.dags:
            for f in Path(self.dags).glob("*.py"):
                shutil.copy(f, self.home / "dags" / f.name)
        steps = (["db", "migrate"],
                 ["users", "create", "--username", AIRFLOW_USER, "--password", AIRFLOW_PASSWORD,
                  "--role", "Admin", "--firstname", "knut", "--lastname", "tests",
                  "--email", "knut@example.invalid"])
        with open(self.log_path, "ab") as log:
            for args in steps:
                rc = subprocess.run([self.binary(), *args], env=dict(os.environ, **self.env()),
                                    stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    timeout=300, check=False).returncode
                if rc != 0:
                    raise PeerError(f"airflow {args[0]} {args[1]} failed ({rc})\n{self.log_tail()}")

    def command(self) -> list[str]:
        return [self.binary(), "webserver", "--hostname", self.host, "--port", str(self.port),
                "--workers", "1"]

    def is_ready(self) -> bool:
        if not http_ok(f"{self.url}/health"):
            return False
        # the scheduler has parsed the DAG files (and so made their datasets)
        return not self.dags or self.get("/api/v1/dags?limit=1")["total_entries"] > 0

    def _start_once(self) -> str | None:
        log = open(self.workdir / "scheduler.log", "ab")
        self.helpers.append(subprocess.Popen(
            [self.binary(), "scheduler"], cwd=self.workdir, env=dict(os.environ, **self.env()),
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True))
        log.close()
        err = Peer._start_once(self)
        if err is not None:
            self._stop_helpers()
        return err

    def get(self, path: str):
        """GET on the REST API as the admin user (HTTP Basic); returns the parsed JSON."""
        import base64
        import json

        cred = base64.b64encode(f"{AIRFLOW_USER}:{AIRFLOW_PASSWORD}".encode()).decode()
        req = urllib.request.Request(f"{self.url}{path}", headers={"Authorization": f"Basic {cred}"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.load(resp)


# ---- Prometheus ----------------------------------------------------------------


class Prometheus(Peer):
    """The Debian ``prometheus`` server, scraping every second. Its targets
    come from a file_sd file (``set_targets``), so a test can point it at a
    port it learns only after starting it (``knut sync --metrics-addr
    127.0.0.1:0``); Prometheus watches that file and picks up changes."""

    name = "prometheus"
    start_timeout = 60.0

    @property
    def targets_file(self) -> Path:
        return self.workdir / "targets.json"

    def command(self) -> list[str]:
        binary = shutil.which("prometheus") or "/usr/bin/prometheus"
        if not os.path.exists(binary):
            raise PeerError("prometheus is not installed: run scripts/setup.sh --test")
        if not self.targets_file.exists():
            self.targets_file.write_text("[]\n")
        cfg = self.workdir / "prometheus.yml"
        cfg.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "scrape_configs:\n"
            "  - job_name: knut\n"
            "    scrape_interval: 1s\n"
            "    scrape_timeout: 1s\n"
            "    file_sd_configs:\n"
            f"      - files: ['{self.targets_file}']\n"
            "        refresh_interval: 1s\n")
        return [binary, f"--config.file={cfg}",
                f"--web.listen-address={self.host}:{self.port}",
                f"--storage.tsdb.path={self.workdir / 'data'}"]

    def is_ready(self) -> bool:
        return http_ok(f"{self.url}/-/ready")

    def set_targets(self, targets: list[str], **labels: str) -> None:
        """Scrape these host:port targets from now on (atomic file swap)."""
        import json

        tmp = self.targets_file.with_suffix(".tmp")
        tmp.write_text(json.dumps([{"targets": targets, "labels": labels}]))
        os.replace(tmp, self.targets_file)

    def query(self, promql: str) -> list[dict]:
        """An instant query through /api/v1/query; returns data.result."""
        import json
        import urllib.parse

        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(url, timeout=10) as resp:
            doc = json.load(resp)
        if doc.get("status") != "success":
            raise PeerError(f"prometheus query {promql!r}: {doc}")
        return doc["data"]["result"]
