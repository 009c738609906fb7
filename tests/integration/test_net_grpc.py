"""The gRPC transport of the net part against the real peer, Python grpcio.

knut's side is tests/tools/knut_grpc_tool: `serve` runs an echo server over
the knut gRPC server (service knut.test.Echo), `call` makes one call with
the knut channel. grpcio calls the knut server with generic (bytes in,
bytes out) method handles, and serves the knut client with a generic
handler. Certificates for TLS and mutual TLS come from the `certs` fixture
(conftest.py, made with openssl).
Everything listens on 127.0.0.1, on ports the kernel picks.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import threading
import time
from concurrent import futures

import pytest

grpc = pytest.importorskip("grpc")

REPO = pathlib.Path(__file__).resolve().parents[2]
SVC = "/knut.test.Echo/"


def find_tool() -> pathlib.Path:
    """The tool: $KNUT_GRPC_TOOL, next to $KNUT_BIN's build, or build/."""
    if os.environ.get("KNUT_GRPC_TOOL"):
        return pathlib.Path(os.environ["KNUT_GRPC_TOOL"])
    candidates = []
    if os.environ.get("KNUT_BIN"):
        candidates.append(pathlib.Path(os.environ["KNUT_BIN"]).parent / "tests" / "knut_grpc_tool")
    candidates.append(REPO / "build" / "tests" / "knut_grpc_tool")
    for c in candidates:
        if c.exists():
            return c
    pytest.fail("knut_grpc_tool not built (looked in %s); set KNUT_GRPC_TOOL" % candidates)


@pytest.fixture(scope="module")
def tool() -> pathlib.Path:
    return find_tool()


# ---- certificates -----------------------------------------------------------


def read(p: pathlib.Path) -> bytes:
    return p.read_bytes()


# ---- the knut server, called by grpcio --------------------------------------


class KnutServer:
    """knut_grpc_tool serve, with the port it printed."""

    def __init__(self, tool: pathlib.Path, *args: str):
        self.proc = subprocess.Popen([str(tool), "serve", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("port "):
            self.proc.kill()
            pytest.fail("knut_grpc_tool serve: %r %s" % (line, self.proc.stderr.read()))
        self.port = int(line.split()[1])
        self.target = f"127.0.0.1:{self.port}"
        self.signalled = False

    def terminate(self) -> None:
        """SIGTERM once: a second one would end the tool at once (one-shot handlers)."""
        if not self.signalled and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        self.signalled = True

    def stop(self, timeout: float = 15) -> tuple[int, str]:
        self.terminate()
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            pytest.fail("knut_grpc_tool serve did not stop within %ss of SIGTERM" % timeout)
        return self.proc.returncode, out


@pytest.fixture
def knut_server(tool):
    servers = []

    def start(*args: str) -> KnutServer:
        s = KnutServer(tool, *args)
        servers.append(s)
        return s

    yield start
    for s in servers:
        rc, _ = s.stop()
        assert rc == 0


def code_of(fn, *args, **kw) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as e:
        fn(*args, **kw)
    return e.value.code()


def test_unary_echo_and_unknown_method(knut_server):
    s = knut_server()
    with grpc.insecure_channel(s.target) as ch:
        echo = ch.unary_unary(SVC + "Echo")
        assert echo(b"hello \x00 bytes", timeout=10) == b"hello \x00 bytes"
        assert echo(b"", timeout=10) == b""
        e = None
        try:
            ch.unary_unary(SVC + "Nope")(b"x", timeout=10)
        except grpc.RpcError as err:
            e = err
        assert e is not None and e.code() == grpc.StatusCode.UNIMPLEMENTED
        assert "/knut.test.Echo/Nope" in e.details()
        # a handler's knut status reaches the client as its gRPC code
        assert code_of(ch.unary_unary(SVC + "Fail"), b"", timeout=10) == grpc.StatusCode.NOT_FOUND


def test_server_streaming(knut_server):
    s = knut_server()
    with grpc.insecure_channel(s.target) as ch:
        got = list(ch.unary_stream(SVC + "Stream")(b"ab", metadata=(("x-count", "5"),),
                                                     timeout=10))
        assert got == [b"0:ab", b"1:ab", b"2:ab", b"3:ab", b"4:ab"]


def test_client_streaming_and_bidi(knut_server):
    s = knut_server()
    with grpc.insecure_channel(s.target) as ch:
        bidi = ch.stream_stream(SVC + "Bidi")
        got = list(bidi(iter([b"a", b"bc", b""]), timeout=10))
        assert got == [b"0:a", b"1:bc", b"2:", b"total:3"]
        # no request messages at all (Flight's Go client on Handshake)
        assert list(bidi(iter(()), timeout=10)) == [b"total:0"]


def test_receive_cap(knut_server):
    s = knut_server("--max-receive", "1024")
    with grpc.insecure_channel(s.target) as ch:
        echo = ch.unary_unary(SVC + "Echo")
        assert echo(b"x" * 1000, timeout=10) == b"x" * 1000
        assert code_of(echo, b"x" * 2048, timeout=10) == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_deadline(knut_server):
    s = knut_server()
    with grpc.insecure_channel(s.target) as ch:
        slow = ch.unary_unary(SVC + "Slow")
        t0 = time.monotonic()
        assert code_of(slow, b"x", timeout=0.3,
                       metadata=(("x-delay-ms", "5000"),)) == grpc.StatusCode.DEADLINE_EXCEEDED
        assert time.monotonic() - t0 < 3
        assert slow(b"late", timeout=10, metadata=(("x-delay-ms", "100"),)) == b"late"


def test_metadata(knut_server):
    s = knut_server()
    with grpc.insecure_channel(s.target) as ch:
        resp, call = ch.unary_unary(SVC + "Metadata").with_call(
            b"", timeout=10,
            metadata=(("authorization", "Bearer abc"), ("x-trace", "t1"),
                      ("x-blob-bin", b"\x00\x01\xfe")))
        lines = resp.decode().splitlines()
        assert "authorization=Bearer abc" in lines
        assert "x-trace=t1" in lines
        assert "x-blob-bin=0001fe" in lines
        trailers = dict(call.trailing_metadata())
        assert trailers["x-trailer"] == "yes"
        assert trailers["x-raw-bin"] == b"\x00\xff"

        auth = ch.unary_unary(SVC + "Auth")
        assert auth(b"ok", timeout=10, metadata=(("authorization", "Bearer s3cret"),)) == b"ok"
        assert code_of(auth, b"x", timeout=10,
                       metadata=(("authorization", "Bearer wrong"),)) == \
            grpc.StatusCode.UNAUTHENTICATED
        assert code_of(auth, b"x", timeout=10) == grpc.StatusCode.UNAUTHENTICATED


def test_tls(knut_server, certs):
    s = knut_server("--cert", str(certs["server.pem"]), "--key", str(certs["server.key"]))
    creds = grpc.ssl_channel_credentials(root_certificates=read(certs["ca.pem"]))
    with grpc.secure_channel(s.target, creds) as ch:
        assert ch.unary_unary(SVC + "Echo")(b"over tls", timeout=10) == b"over tls"
    # a plaintext client gets nowhere
    with grpc.insecure_channel(s.target) as ch:
        assert code_of(ch.unary_unary(SVC + "Echo"), b"x", timeout=3) == \
            grpc.StatusCode.UNAVAILABLE


def test_mutual_tls(knut_server, certs):
    s = knut_server("--cert", str(certs["server.pem"]), "--key", str(certs["server.key"]),
                    "--ca", str(certs["ca.pem"]))
    with_cert = grpc.ssl_channel_credentials(root_certificates=read(certs["ca.pem"]),
                                             private_key=read(certs["client.key"]),
                                             certificate_chain=read(certs["client.pem"]))
    with grpc.secure_channel(s.target, with_cert) as ch:
        assert ch.unary_unary(SVC + "Echo")(b"mtls", timeout=10) == b"mtls"
    without = grpc.ssl_channel_credentials(root_certificates=read(certs["ca.pem"]))
    with grpc.secure_channel(s.target, without) as ch:
        assert code_of(ch.unary_unary(SVC + "Echo"), b"x", timeout=5) == \
            grpc.StatusCode.UNAVAILABLE


def test_sigterm_with_a_stream_open(tool):
    s = KnutServer(tool, "--grace-ms", "5000")
    with grpc.insecure_channel(s.target) as ch:
        it = ch.unary_stream(SVC + "Endless")(b"", timeout=30)
        assert next(it) == b"tick 0"
        assert next(it) == b"tick 1"
        t0 = time.monotonic()
        s.terminate()
        rest = list(it)  # ends with OK: the handler saw the stop and finished
        assert all(m.startswith(b"tick ") for m in rest)
        assert it.code() == grpc.StatusCode.OK
        rc, out = s.stop(timeout=15)
        assert rc == 0
        assert "stopped" in out
        assert time.monotonic() - t0 < 10


# ---- the knut client, against a grpcio server -------------------------------


class PyHandler(grpc.GenericRpcHandler):
    def service(self, details):
        m = details.method
        if m == "/py.Test/Echo":
            return grpc.unary_unary_rpc_method_handler(lambda req, ctx: req)
        if m == "/py.Test/Stream":
            return grpc.unary_stream_rpc_method_handler(
                lambda req, ctx: (req + b"#%d" % i for i in range(4)))
        if m == "/py.Test/Slow":
            def slow(req, ctx):
                time.sleep(2)
                return req
            return grpc.unary_unary_rpc_method_handler(slow)
        if m == "/py.Test/Meta":
            def meta(req, ctx):
                md = dict(ctx.invocation_metadata())
                ctx.set_trailing_metadata((("x-py", "trailer"),))
                return md.get("authorization", "none").encode()
            return grpc.unary_unary_rpc_method_handler(meta)
        if m == "/py.Test/Deny":
            def deny(req, ctx):
                ctx.abort(grpc.StatusCode.PERMISSION_DENIED, "not you")
            return grpc.unary_unary_rpc_method_handler(deny)
        return None


@pytest.fixture
def py_server():
    servers = []

    def start(creds=None) -> str:
        srv = grpc.server(futures.ThreadPoolExecutor(max_workers=4), handlers=[PyHandler()])
        port = (srv.add_secure_port("127.0.0.1:0", creds) if creds
                else srv.add_insecure_port("127.0.0.1:0"))
        srv.start()
        servers.append(srv)
        return f"127.0.0.1:{port}"

    yield start
    for srv in servers:
        srv.stop(grace=None)


def call(tool, target, method, *args: str) -> tuple[int, list[str]]:
    r = subprocess.run([str(tool), "call", target, method, *args], capture_output=True,
                       text=True, timeout=60)
    return r.returncode, r.stdout.splitlines()


def test_client_unary_stream_and_status(tool, py_server):
    target = py_server()
    rc, out = call(tool, target, "/py.Test/Echo", "--data", "hi there")
    assert rc == 0 and out[0] == "message 8 hi there" and out[1].startswith("status OK")
    rc, out = call(tool, target, "/py.Test/Stream", "--data", "s", "--stream")
    assert rc == 0
    assert out[:4] == ["message 3 s#0", "message 3 s#1", "message 3 s#2", "message 3 s#3"]
    rc, out = call(tool, target, "/py.Test/Meta", "--md", "authorization=Bearer t0k")
    assert rc == 0 and out[0] == "message 10 Bearer t0k"
    assert "trailer x-py=trailer" in out
    rc, out = call(tool, target, "/py.Test/Deny")
    assert rc == 1
    assert "status PERMISSION_DENIED not you" in out
    rc, out = call(tool, target, "/py.Test/Missing")
    assert rc == 1 and any(line.startswith("status UNIMPLEMENTED") for line in out)


def test_client_deadline_and_cap(tool, py_server):
    target = py_server()
    t0 = time.monotonic()
    rc, out = call(tool, target, "/py.Test/Slow", "--timeout-ms", "300")
    assert rc == 1 and any(line.startswith("status DEADLINE_EXCEEDED") for line in out)
    assert time.monotonic() - t0 < 1.9
    rc, out = call(tool, target, "/py.Test/Echo", "--data", "x" * 100, "--max-receive", "10")
    assert rc == 1 and any(line.startswith("status RESOURCE_EXHAUSTED") for line in out)


def test_client_tls_and_mtls(tool, py_server, certs):
    key_cert = [(read(certs["server.key"]), read(certs["server.pem"]))]
    target = py_server(grpc.ssl_server_credentials(key_cert))
    rc, out = call(tool, target, "/py.Test/Echo", "--data", "tls", "--ca", str(certs["ca.pem"]))
    assert rc == 0 and out[0] == "message 3 tls"
    # the name in the certificate is checked: localhost is in it, example.invalid not
    rc, out = call(tool, target, "/py.Test/Echo", "--ca", str(certs["ca.pem"]),
                   "--server-name", "example.invalid")
    assert rc == 1 and any(line.startswith("status UNAVAILABLE") for line in out)

    mtls = py_server(grpc.ssl_server_credentials(key_cert, root_certificates=read(certs["ca.pem"]),
                                                 require_client_auth=True))
    rc, out = call(tool, mtls, "/py.Test/Echo", "--data", "m", "--ca", str(certs["ca.pem"]),
                   "--cert", str(certs["client.pem"]), "--key", str(certs["client.key"]))
    assert rc == 0 and out[0] == "message 1 m"
    rc, out = call(tool, mtls, "/py.Test/Echo", "--ca", str(certs["ca.pem"]))
    assert rc == 1 and any(line.startswith("status UNAVAILABLE") for line in out)
