"""The peer harness itself: each peer starts on its own loopback port,
answers its protocol, reports a failed start clearly, and is gone after
teardown."""

from __future__ import annotations

import datetime as dt
import socket

import pytest
import redis

from peers import FalkorDB, PeerError, Valkey, pid_alive


def test_valkey_set_get(valkey):
    with valkey.client() as c:
        assert c.set("knut:key", "välue") is True
        assert c.get("knut:key") == "välue".encode()
        assert c.config_get("bind")["bind"] == "127.0.0.1"
        assert c.config_get("port")["port"] == str(valkey.port)


def test_falkordb_create_and_match(falkordb):
    falkordb.query(
        "knut_test",
        "CREATE (:Person {name: 'Ada', born: 1815, score: 9.5, active: true,"
        " joined: date('2024-01-02')})",
    )
    header, rows, _stats = falkordb.query(
        "knut_test",
        "MATCH (p:Person {name: 'Ada'}) "
        "RETURN p.name, p.born, p.score, p.active, toString(p.joined)",
    )
    assert [h.decode() for h in header] == [
        "p.name", "p.born", "p.score", "p.active", "toString(p.joined)",
    ]
    assert len(rows) == 1
    name, born, score, active, joined = rows[0]
    assert name == b"Ada"
    assert born == 1815
    assert float(score) == 9.5
    assert active in (1, b"true", True)
    assert joined == b"2024-01-02"


def test_falkordb_date_function(falkordb):
    before = dt.datetime.now(dt.timezone.utc).date()
    _header, rows, _stats = falkordb.query("knut_test", "RETURN toString(date())")
    after = dt.datetime.now(dt.timezone.utc).date()
    today = dt.date.fromisoformat(rows[0][0].decode())
    assert today in (before, after)  # a run across midnight sees either


def test_each_peer_has_its_own_port(valkey, falkordb):
    assert valkey.port != falkordb.port
    with valkey.client() as v, falkordb.client() as f:
        v.set("only-here", "1")
        assert f.get("only-here") is None
        modules = [m[b"name"] if isinstance(m, dict) else m[1] for m in f.module_list()]
        assert b"graph" in [m.lower() for m in modules]
        assert v.module_list() == []


def test_stop_leaves_no_process(tmp_path):
    peer = Valkey(tmp_path)
    with peer:
        pid = peer.pid
        port = peer.port
        assert pid_alive(pid)
    assert peer.pid is None
    assert not pid_alive(pid)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    peer.stop()  # stopping twice is harmless


def test_factory_starts_several_of_a_kind(start_peer):
    a = start_peer(Valkey)
    b = start_peer(Valkey)
    assert a.port != b.port
    assert a.workdir != b.workdir
    with a.client() as ca, b.client() as cb:
        ca.set("k", "a")
        cb.set("k", "b")
        assert ca.get("k") == b"a"
        assert cb.get("k") == b"b"


class BrokenValkey(Valkey):
    name = "broken-valkey"

    def command(self):
        return self.server_args() + ["--no-such-directive", "1"]


def test_failed_start_reports_log_tail(tmp_path):
    peer = BrokenValkey(tmp_path)
    with pytest.raises(PeerError) as info:
        peer.start(attempts=1)
    msg = str(info.value)
    assert "broken-valkey did not start" in msg
    assert "exited with status" in msg
    assert "no-such-directive" in msg  # the server's own complaint, from its log
    assert not peer.running()


def test_missing_executable_is_reported(tmp_path):
    class Nowhere(Valkey):
        name = "nowhere"

        def command(self):
            return ["/nonexistent/knut-peer-server", "--port", str(self.port)]

    with pytest.raises(PeerError, match="executable '/nonexistent/knut-peer-server' not found"):
        Nowhere(tmp_path).start(attempts=1)


def test_client_refuses_after_falkordb_stops(tmp_path):
    peer = FalkorDB(tmp_path).start()
    port, pid = peer.port, peer.pid
    peer.stop()
    assert not pid_alive(pid)
    with pytest.raises(redis.exceptions.ConnectionError):
        redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=1).ping()
