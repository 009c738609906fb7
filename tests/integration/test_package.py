"""scripts/package-deb.sh and the .deb it builds (docs/install.md).

The package is $KNUT_DEB (scripts/test.sh builds it just before), else
built once per run (its build folder, build-deb/, is reused: a second run
only rebuilds what changed); it is inspected with
dpkg-deb: the files, the control fields (Depends against the packages of
the libraries the ELF files really link), the maintainer scripts. It is
unpacked with `dpkg -x` into a temporary root and run from there with the
bundled DuckDB. Then, only as root (CI runs as root on a throwaway
machine; a knut package already installed is never touched), the real
round trip: `apt-get install ./knut_*.deb`, the service user and state
folder, the man pages, pkg-config and a consumer program, `systemd-analyze
verify` and `security --offline` on the units, each unit's ExecStart line
run as the service user with the unit's environment (no systemd runs as
PID 1 here, so not under systemd: the hardening is checked by
systemd-analyze, not enforced), stopped with SIGTERM (exit 0), then
`apt-get remove` and `--purge` leaving nothing behind.

All tests share one worker (xdist group): they share one package and one
installation, in order.
"""
from __future__ import annotations

import grp
import os
import pwd
import re
import select
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.xdist_group("package")

REPO = Path(__file__).resolve().parents[2]
VERSION = re.search(r"project\(knut VERSION ([0-9.]+)", (REPO / "CMakeLists.txt").read_text())[1]
INSTANCE = "pkgtest"
APT = ["apt-get", "-y", "-qq", "-o", "DPkg::Lock::Timeout=120"]


def sh(*args, check=True, **kw):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=600, **kw)
    if check:
        assert p.returncode == 0, (args, p.stdout[-2000:], p.stderr[-2000:])
    return p


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    """$KNUT_DEB (scripts/test.sh builds it in a step of its own), else
    the package built here."""
    if os.environ.get("KNUT_DEB"):
        return Path(os.environ["KNUT_DEB"])
    out = tmp_path_factory.mktemp("deb")
    p = subprocess.run([str(REPO / "scripts" / "package-deb.sh"), str(out)], capture_output=True,
                       text=True, timeout=3600, env={**os.environ, "KNUT_JOBS": "2"})
    assert p.returncode == 0, p.stderr[-4000:]
    path = Path(p.stdout.strip().splitlines()[-1])
    assert path.is_file(), p.stdout
    return path


@pytest.fixture(scope="module")
def files(deb):
    """Each path in the package ('usr/bin/knut') with its tar listing line."""
    out = {}
    for line in sh("dpkg-deb", "-c", deb).stdout.splitlines():
        name = line.split(None, 5)[5].split(" -> ")[0]
        out[name.removeprefix("./").rstrip("/")] = line
    return out


@pytest.fixture(scope="module")
def unpacked(deb, tmp_path_factory):
    root = tmp_path_factory.mktemp("root")
    sh("dpkg", "-x", deb, root)
    return root


def libdir(files):
    return next(p.rsplit("/", 1)[0] for p in files if re.search(r"/libknut\.so\.\d+\.\d+", p))


def test_name_version_and_fields(deb):
    assert deb.name == f"knut_{VERSION}_amd64.deb"
    f = {k: sh("dpkg-deb", "-f", deb, k).stdout.strip()
         for k in ("Package", "Version", "Architecture", "Depends", "Maintainer")}
    assert f["Package"] == "knut" and f["Version"] == VERSION and f["Architecture"] == "amd64"
    assert f["Maintainer"]
    assert "passwd" in f["Depends"]


def test_files(files, knut, tmp_path):
    lib = libdir(files)
    assert lib == "usr/lib/x86_64-linux-gnu", lib
    want = ["usr/bin/knut", "usr/lib/knut/libduckdb.so", f"{lib}/libknut.so",
            f"{lib}/libknut.so.0", f"{lib}/libknut.so.{VERSION}", f"{lib}/pkgconfig/knut.pc",
            "usr/include/knut/knut.h", "usr/share/bash-completion/completions/knut",
            "usr/share/zsh/vendor-completions/_knut", "lib/systemd/system/knut-sync@.service",
            "lib/systemd/system/knut-serve@.service", "etc/knut/sync", "etc/knut/serve",
            "usr/share/doc/knut/install.md"]
    for path in want:
        assert path in files, path
    # every page knut writes, compressed
    sh(knut, "man", "--output-dir", tmp_path)
    for page in tmp_path.iterdir():
        assert f"usr/share/man/man1/{page.name}.gz" in files, page.name
    assert "usr/share/man/man1/knut-sync.1.gz" in files
    # binaries and libraries, root-owned; no static library, nothing from the build
    assert not any(p.endswith(".a") for p in files)
    assert all(" root/root " in line for line in files.values())
    assert all(p == "" or p.split("/")[0] in ("etc", "lib", "usr") for p in files), files.keys()
    assert not any("third_party" in p for p in files)


def test_rpath_names_only_the_bundled_duckdb(unpacked, files):
    for elf in ("usr/bin/knut", f"{libdir(files)}/libknut.so.{VERSION}"):
        dyn = sh("readelf", "-d", unpacked / elf).stdout
        paths = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library (?:runpath|rpath): \[(.*)\]", dyn)
        assert paths == ["/usr/lib/knut"], (elf, paths)
        assert "[libduckdb.so]" in dyn, elf


def test_depends_names_every_linked_library(deb, unpacked, files):
    """The package of every library the ELF files link directly (as
    resolved here) is in Depends; libduckdb.so is the package's own."""
    depends = sh("dpkg-deb", "-f", deb, "Depends").stdout
    names = {d.strip().split()[0] for d in depends.split(",")}
    elves = [unpacked / "usr/bin/knut", unpacked / "usr/lib/knut/libduckdb.so",
             unpacked / libdir(files) / f"libknut.so.{VERSION}"]
    env = {**os.environ, "LD_LIBRARY_PATH": str(unpacked / "usr/lib/knut")}
    needed = set()
    for elf in elves:  # NEEDED (the direct ones), found where ldd finds them
        found = dict(re.findall(r"^\s*(\S+) => (/\S+)", sh("ldd", elf, env=env).stdout, re.M))
        for name in re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]",
                               sh("readelf", "-d", elf).stdout):
            if name in found and not found[name].startswith(str(unpacked)):  # not ld.so
                needed.add(os.path.realpath(found[name]))
    assert len(needed) > 10, needed
    for lib in needed:
        owner = sh("dpkg", "-S", lib, check=False)
        if owner.returncode != 0:  # /lib vs /usr/lib (merged /usr): ask for the other
            alt = lib[4:] if lib.startswith("/usr/") else "/usr" + lib
            owner = sh("dpkg", "-S", alt)
        pkg = owner.stdout.split(":")[0]
        assert pkg in names, (lib, pkg, depends)


def test_unpacked_binary_runs_with_the_bundled_duckdb(unpacked):
    env = {**os.environ, "LD_LIBRARY_PATH": str(unpacked / "usr/lib/knut")}
    knut = unpacked / "usr/bin/knut"
    ldd = sh("ldd", knut, env=env).stdout
    assert f"libduckdb.so => {unpacked}/usr/lib/knut/libduckdb.so" in ldd, ldd
    p = sh(knut, "version", env=env)
    assert p.stdout.startswith(f"knut {VERSION} (DuckDB "), p.stdout
    p = sh(knut, "query", "-f", "csv", "SELECT 6 * 7 AS x", env=env)
    assert p.stdout.splitlines() == ["x", "42"]
    # the shipped completion is what the shipped binary writes
    p = sh(knut, "completion", "bash", env=env)
    assert p.stdout == (unpacked / "usr/share/bash-completion/completions/knut").read_text()


def test_maintainer_scripts(deb, tmp_path):
    sh("dpkg-deb", "-e", deb, tmp_path / "DEBIAN")
    for name in ("postinst", "prerm", "postrm"):
        path = tmp_path / "DEBIAN" / name
        assert path.stat().st_mode & 0o777 == 0o755, name
        sh("sh", "-n", path)
    text = (tmp_path / "DEBIAN" / "postinst").read_text()
    assert "groupadd --system knut" in text and "useradd --system" in text
    assert "/var/lib/knut" in text
    assert "userdel knut" in (tmp_path / "DEBIAN" / "postrm").read_text()


# ---- installed (root only) --------------------------------------------------


def unit_env(unit: str, instance: str) -> dict[str, str]:
    """Environment= first, then EnvironmentFile= over it, as systemd does."""
    env: dict[str, str] = {}
    files = []
    for line in unit.splitlines():
        if line.startswith("Environment="):
            env.update(kv.split("=", 1) for kv in shlex.split(line.split("=", 1)[1]))
        elif line.startswith("EnvironmentFile="):
            files.append(line.split("=", 1)[1].replace("%i", instance))
    for f in files:
        path = Path(f.lstrip("-"))
        if not path.exists():
            assert f.startswith("-"), f
            continue
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                k, v = line.split("=", 1)
                env[k.strip()] = " ".join(shlex.split(v))
    return env


def unit_command(unit: str, instance: str) -> tuple[list[str], dict[str, str], str]:
    """ExecStart's argv (%i and $VAR expanded: an unquoted $VAR splits into
    words, an empty one is none), the environment, the working directory."""
    env = unit_env(unit, instance)
    line = re.search(r"^ExecStart=(.*)$", unit, re.M)[1].replace("%i", instance)
    argv = []
    for word in shlex.split(line):
        m = re.fullmatch(r"\$([A-Z_]+)", word)
        argv += env.get(m[1], "").split() if m else [word]
    cwd = re.search(r"^WorkingDirectory=(.*)$", unit, re.M)[1]
    return argv, env, cwd


def as_knut(argv, env, cwd):
    """The process as the unit starts it: user and group knut, no new
    privileges, only the unit's environment."""
    cmd = ["setpriv", "--reuid=knut", "--regid=knut", "--init-groups", "--no-new-privs", "--",
           *argv]
    return subprocess.Popen(cmd, env={"PATH": "/usr/bin:/bin", **env}, cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_line(proc, pattern, stream=None, timeout=60):
    """The first line of stream (stderr) matching pattern, and the ones
    before it."""
    stream = stream or proc.stderr
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], 0.5)
        if ready:
            line = stream.readline()
            if not line and proc.poll() is not None:
                break
            seen.append(line)
            if re.search(pattern, line):
                return seen
    proc.kill()
    raise AssertionError(f"no {pattern!r} in {seen}")


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(timeout=60)
    return rc, proc.stderr.read()


@pytest.fixture(scope="module")
def installed(deb):
    if os.geteuid() != 0:
        pytest.skip("installing the package needs root (CI runs as root)")
    if sh("dpkg-query", "-W", "-f=${Status}", "knut", check=False).stdout.startswith("install"):
        pytest.skip("a knut package is installed on this machine: not touching it")
    t0 = time.monotonic()
    sh(*APT, "install", "--no-install-recommends", deb, env={**os.environ,
                                                              "DEBIAN_FRONTEND": "noninteractive"})
    print(f"apt-get install {deb.name}: {time.monotonic() - t0:.1f} s")
    try:
        yield deb
    finally:
        sh("dpkg", "--purge", "knut", check=False)
        shutil.rmtree("/etc/knut", ignore_errors=True)


def test_installed_user_state_and_tools(installed, tmp_path):
    user = pwd.getpwnam("knut")
    assert user.pw_uid < 1000 and user.pw_dir == "/var/lib/knut"
    assert user.pw_shell == "/usr/sbin/nologin"
    st = os.stat("/var/lib/knut")
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (user.pw_uid, user.pw_gid, 0o750)
    assert sh("/usr/bin/knut", "version").stdout.startswith(f"knut {VERSION} ")
    assert "/usr/lib/knut/libduckdb.so" in sh("ldd", "/usr/bin/knut").stdout
    assert sh("man", "-w", "knut-sync").stdout.strip() == "/usr/share/man/man1/knut-sync.1.gz"
    assert sh("man", "-w", "knut-gar-info").returncode == 0
    assert sh("pkg-config", "--modversion", "knut").stdout.strip() == VERSION
    flags = sh("pkg-config", "--cflags", "--libs", "knut").stdout.split()
    sh("cc", "-std=c17", "-Wall", "-Werror", REPO / "tests/install/consumer.c", "-o",
       tmp_path / "consumer", *flags)
    assert sh(tmp_path / "consumer").stdout.strip() == "consumer: SELECT 42 -> 42"


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="no systemd-analyze")
@pytest.mark.parametrize("unit", ["knut-sync@.service", "knut-serve@.service"])
def test_units_verify_and_security(installed, unit, tmp_path):
    inst = tmp_path / unit.replace("@", f"@{INSTANCE}")
    shutil.copy(f"/lib/systemd/system/{unit}", inst)
    p = sh("systemd-analyze", "verify", inst, check=False)
    assert p.returncode == 0 and p.stderr.strip() == "", p.stderr
    p = sh("systemd-analyze", "security", "--offline=yes", inst, check=False)
    m = re.search(r"Overall exposure level for \S+: ([0-9.]+) (\S+)", p.stdout)
    assert m, p.stdout[-2000:] + p.stderr
    print(f"{unit}: exposure {m[1]} {m[2]}")
    assert float(m[1]) <= 3.0, p.stdout  # OK on systemd's scale (0 safe .. 10 exposed)


def test_sync_unit_runs_as_knut_and_stops_on_sigterm(installed):
    data = Path("/var/lib/knut") / f"{INSTANCE}-data"
    data.mkdir()
    (data / "people.csv").write_text("id,name\n1,Ada\n2,Grace\n")
    shutil.chown(data, "knut", "knut")
    shutil.chown(data / "people.csv", "knut", "knut")
    Path(f"/etc/knut/sync/{INSTANCE}.yml").write_text(
        f"store: /var/lib/knut/{INSTANCE}.duckdb\n"
        "tables:\n  people:\n"
        f"    path: {data}/people.csv\n"
        "    vertices:\n      - labels: [Person]\n        keys: [id]\n")
    argv, env, cwd = unit_command(Path("/lib/systemd/system/knut-sync@.service").read_text(),
                                  INSTANCE)
    assert argv == ["/usr/bin/knut", "sync", "--config", f"/etc/knut/sync/{INSTANCE}.yml"]
    proc = as_knut(argv, env, cwd)
    lines = wait_line(proc, r'"msg":"round done"')
    assert '"files":1' in lines[-1] and '"failed_files":0' in lines[-1], lines
    rc, rest = stop(proc)
    assert rc == 0, rest
    assert pwd.getpwuid(os.stat(f"/var/lib/knut/{INSTANCE}.duckdb").st_uid).pw_name == "knut"
    p = as_knut(["/usr/bin/knut", "sync", "status", "--config", f"/etc/knut/sync/{INSTANCE}.yml"],
                env, cwd)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0 and "people" in out, (out, err)


def test_serve_unit_runs_as_knut_and_stops_on_sigterm(installed):
    data = Path("/var/lib/knut") / f"{INSTANCE}-data"
    Path(f"/etc/knut/serve/{INSTANCE}.yml").write_text(
        f"views:\n  lake:\n    people: {{path: {data}/people.csv, format: csv}}\n")
    # the env file takes the options: here a free port
    Path(f"/etc/knut/serve/{INSTANCE}.env").write_text("KNUT_SERVE_OPTS=--addr 127.0.0.1:0\n")
    argv, env, cwd = unit_command(Path("/lib/systemd/system/knut-serve@.service").read_text(),
                                  INSTANCE)
    assert argv == ["/usr/bin/knut", "serve", "--memory", "--config",
                    f"/etc/knut/serve/{INSTANCE}.yml", "--addr", "127.0.0.1:0"]
    proc = as_knut(argv, env, cwd)
    wait_line(proc, r"^listening on 127\.0\.0\.1:\d+$", proc.stdout)
    rc, rest = stop(proc)
    assert rc == 0, rest


def left_behind(files):
    """The package's files and links still there (its folders aside: other
    packages share them, and /lib is a link on a merged /usr)."""
    return [path for path, line in files.items()
            if not line.startswith("d") and os.path.lexists(Path("/") / path)]


def test_remove_then_purge_leave_nothing(installed, files):
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    sh(*APT, "remove", "knut", env=env)
    assert left_behind(files) == []
    for d in ("/usr/lib/knut", "/usr/include/knut", "/usr/share/doc/knut"):
        assert not Path(d).exists(), d
    # the state a service wrote and the configs are the user's until purge
    assert Path(f"/var/lib/knut/{INSTANCE}.duckdb").exists()
    sh("dpkg", "--purge", "knut")
    assert not Path("/var/lib/knut").exists() and not Path("/etc/knut").exists()
    with pytest.raises(KeyError):
        pwd.getpwnam("knut")
    with pytest.raises(KeyError):
        grp.getgrnam("knut")
    # installed and removed with no state: not even the state folder is left
    sh(*APT, "install", "--no-install-recommends", installed, env=env)
    sh(*APT, "remove", "knut", env=env)
    assert left_behind(files) == [] and not Path("/var/lib/knut").exists()
