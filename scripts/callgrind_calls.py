#!/usr/bin/env python3
"""Instructions per call through a node, counted by callgrind (noise-free, unlike wall clock).

Usage: scripts/callgrind_calls.py [WEFT_BINARY] [CALLS]

Starts `weft bench-peer remote-echo` (outside valgrind), then `weft serve --builtins` under
`valgrind --tool=callgrind` on a scratch data directory, registers the remote echo, and for
the built-in `echo@1.0.0` and the remote `remote.echo@1.0.0` in turn: 200 warm-up calls,
counters zeroed (`callgrind_control -z`), CALLS sequential keep-alive calls (default 2,000),
a dump (`callgrind_control -d`). Prints the node's instructions per call for each, and the
ten functions with the most instructions of their own. Standard library only.
Under valgrind SHA-256 runs without SHA-NI: the bearer token's hash counts ~3.4k
instructions that hardware does in a few hundred.
"""
import collections
import glob
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time


def self_costs(path):
    """Instructions of each function's own (not its callees'), from a callgrind dump."""
    names, cost, fn, skip = {}, collections.Counter(), None, False
    with open(path) as dump:
        for line in dump:
            m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", line)
            if m:
                if m.group(3):
                    names[m.group(2)] = m.group(3).strip()
                if m.group(1) == "fn":
                    fn = names.get(m.group(2), m.group(2))
                continue
            if line.startswith("calls="):
                skip = True  # the next cost line is the callee's inclusive cost
                continue
            if line[:1].isdigit() or line[:1] in "+-*":
                parts = line.split()
                if len(parts) >= 2:
                    if skip:
                        skip = False
                    else:
                        cost[fn] += int(parts[1])
    return cost


def main():
    weft = sys.argv[1] if len(sys.argv) > 1 else "target/release/weft"
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    data = tempfile.mkdtemp(prefix="weft-callgrind-")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    peer = subprocess.Popen([weft, "bench-peer", "remote-echo", "--workers", "1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    peer_addr = peer.stdout.readline().split()[-1]
    node = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={data}/cg.%p",
                             weft, "serve", "--builtins", "--listen", f"127.0.0.1:{port}",
                             "--data-dir", data, "--max-concurrent-calls", "1024"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                probe = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                probe.request("GET", "/healthz")
                probe.getresponse().read()
                break
            except OSError:
                time.sleep(0.2)
        with open(f"{data}/admin.token") as f:
            token = f.read().strip()
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

        def send(method, path, body=None):
            conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
            response = conn.getresponse()
            return response.status, json.loads(response.read() or b"null")

        text = {"type": "object", "properties": {"text": {"type": "string"}},
                "required": ["text"], "additionalProperties": False}
        echo = {"id": "remote.echo", "version": "1.0.0", "title": "Echo (remote)",
                "description": "Echo served by a remote provider.",
                "input_schema": text, "output_schema": text}
        status, body = send("PUT", "/v1/providers/remote-echo",
                            {"node_id": "remote-host", "descriptors": [echo],
                             "transport": {"kind": "http", "url": f"http://{peer_addr}",
                                           "lease_seconds": 300}})
        assert status in (200, 201), body
        for capability in ("echo", "remote.echo"):
            revision = send("GET", f"/v1/capabilities/{capability}/versions/1.0.0")[1]["revision"]
            call = {"capability_id": capability, "version": "1.0.0",
                    "descriptor_revision": revision, "payload": {"text": "hello weft"}}
            for _ in range(200):
                status, body = send("POST", "/v1/calls", call)
                assert status == 200, body
            subprocess.run(["callgrind_control", "-z", str(node.pid)], stdout=subprocess.DEVNULL)
            for _ in range(calls):
                send("POST", "/v1/calls", call)
            before = set(glob.glob(f"{data}/cg.{node.pid}.*"))
            subprocess.run(["callgrind_control", "-d", str(node.pid)], stdout=subprocess.DEVNULL)
            for _ in range(100):
                fresh = set(glob.glob(f"{data}/cg.{node.pid}.*")) - before
                if fresh:
                    break
                time.sleep(0.1)
            time.sleep(0.5)
            cost = self_costs(max(fresh, key=os.path.getmtime))
            total = sum(cost.values())
            print(f"{capability}: {total / calls:,.0f} instructions per call")
            for name, c in cost.most_common(10):
                print(f"  {c / calls:>8,.0f}  {name[:110]}")
    finally:
        node.terminate()
        node.wait()
        peer.kill()


if __name__ == "__main__":
    main()
