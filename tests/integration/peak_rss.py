"""Runs a command and writes its own peak RSS: `python peak_rss.py OUT -- CMD...`.

A child's ru_maxrss on Linux starts at its parent's RSS at fork time (the
high-water mark survives exec), so a command forked straight from a pytest
worker that has grown (pyarrow tables, pyiceberg) reports the worker's
memory, not its own. This launcher is small when it forks: the command's
figure is its own. stdin, stdout and stderr are the command's; OUT gets
{"returncode": N, "maxrss_kb": K}.
"""
import json
import os
import sys


def main() -> int:
    out, sep, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
    assert sep == "--" and cmd, "usage: peak_rss.py OUT -- CMD..."
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    with open(out, "w") as f:
        json.dump({"returncode": os.waitstatus_to_exitcode(status),
                   "maxrss_kb": usage.ru_maxrss}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
