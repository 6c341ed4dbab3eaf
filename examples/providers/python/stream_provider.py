#!/usr/bin/env python3
"""A streaming weft managed provider in plain Python (standard library only, 3.11+).

It speaks protocol 2 of docs/provider-protocol.md on stdin/stdout and logs to stderr.
Capabilities, one per streaming mode plus a unary one:

    pys.count@1.0.0  server streaming: {"to": n, "delay_ms"?: d} -> chunks {"n": 1..n},
                     completes with {"count": n}
    pys.sum@1.0.0    client streaming: chunks {"value": number} -> completes with
                     {"sum": total, "count": chunks} after the caller half-closes
    pys.upper@1.0.0  bidirectional: each chunk {"text": s} is answered with
                     {"text": s.upper()}; completes without a payload (result null)
    pys.echo@1.0.0   unary: returns the payload unchanged

Flow control: each streaming call carries a `window`. The provider never has more than
`window` output chunks unacknowledged (it waits for the node's `ack` before writing
more), and it acknowledges every input chunk as it takes it for processing.

Set STREAM_PROVIDER_JOURNAL to a file path to have one line appended per event:
"start <pid>", "call <call_id> <capability> <window>", "sent <call_id> <chunks written>",
"wait <call_id> <chunks written>" (blocked on the window), "cancel <call_id>", "exit".
The tests use it to see what the child did.
"""

import json
import os
import sys
import threading
from collections import deque

PROTOCOL = 2
JOURNAL = os.environ.get("STREAM_PROVIDER_JOURNAL")
END = object()  # marks the caller's half-close in a call's inbox

_out_lock = threading.Lock()
_journal_lock = threading.Lock()
_max_line = 4 * 1024 * 1024
_calls = {}  # call_id -> Call
_calls_lock = threading.Lock()


def log(message):
    """Free-form log text: stderr ends up in the node's log."""
    print(f"stream_provider[{os.getpid()}]: {message}", file=sys.stderr, flush=True)


def journal(event):
    if JOURNAL:
        with _journal_lock, open(JOURNAL, "a", encoding="utf-8") as f:
            f.write(event + "\n")


def encode(message):
    return json.dumps(
        message, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")


def write_line(line):
    """Writes one encoded message as one line, under a lock (calls run on threads)."""
    with _out_lock:
        sys.stdout.buffer.write(line + b"\n")
        sys.stdout.buffer.flush()


def send(message):
    write_line(encode(message))


class Failure(Exception):
    """An error answer for the caller."""


class Cancelled(Exception):
    """The node cancelled the call."""


class Call:
    """One call in flight: its cancel flag, its output credit and its input inbox."""

    def __init__(self, call_id, window, streaming):
        self.call_id = call_id
        self.window = window
        self.streaming = streaming
        self.cond = threading.Condition()
        self.unacked = 0  # output chunks written and not yet acknowledged by the node
        self.sent = 0
        self.cancelled = False
        self.inbox = deque()

    def emit(self, chunk):
        """Writes an output chunk, first waiting while `window` chunks are unacked."""
        line = encode({"type": "chunk", "call_id": self.call_id, "chunk": chunk})
        if len(line) > _max_line:
            raise Failure(f"chunk too large ({len(line)} bytes; limit {_max_line})")
        with self.cond:
            if self.unacked >= self.window and not self.cancelled:
                journal(f"wait {self.call_id} {self.sent}")
            while self.unacked >= self.window and not self.cancelled:
                self.cond.wait()
            if self.cancelled:
                raise Cancelled()
            self.unacked += 1
            self.sent += 1
            sent = self.sent
            # Written under the call's lock so "sent" journal lines stay in order.
            write_line(line)
        journal(f"sent {self.call_id} {sent}")

    def next_input(self):
        """The caller's next chunk, None after its half-close. Acknowledges the chunk."""
        with self.cond:
            while not self.inbox and not self.cancelled:
                self.cond.wait()
            if self.cancelled:
                raise Cancelled()
            item = self.inbox.popleft()
        if item is END:
            return None
        send({"type": "ack", "call_id": self.call_id, "chunks": 1})
        return item

    def wait_cancelled(self, seconds):
        with self.cond:
            return self.cond.wait_for(lambda: self.cancelled, seconds)

    # Called from the reading loop.
    def acked(self, chunks):
        with self.cond:
            self.unacked = max(0, self.unacked - chunks)
            self.cond.notify_all()

    def receive(self, item):
        with self.cond:
            self.inbox.append(item)
            self.cond.notify_all()

    def cancel(self):
        with self.cond:
            self.cancelled = True
            self.cond.notify_all()


def schema(properties=None, required=()):
    s = {"type": "object"}
    if properties is not None:
        s["properties"] = properties
        s["required"] = list(required)
        s["additionalProperties"] = False
    return s


TEXT = schema({"text": {"type": "string"}}, ["text"])

DESCRIPTORS = [
    {
        "id": "pys.count",
        "version": "1.0.0",
        "title": "Python count",
        "description": "Streams {\"n\": 1..to}, `delay_ms` apart; completes with {\"count\": to}.",
        "io_mode": "server_streaming",
        "input_schema": schema(
            {
                "to": {"type": "integer", "minimum": 1, "maximum": 100000},
                "delay_ms": {"type": "integer", "minimum": 0, "maximum": 1000},
            },
            ["to"],
        ),
        "output_chunk_schema": schema({"n": {"type": "integer"}}, ["n"]),
        "output_schema": schema({"count": {"type": "integer"}}, ["count"]),
    },
    {
        "id": "pys.sum",
        "version": "1.0.0",
        "title": "Python sum",
        "description": "Adds up the streamed {\"value\": number} chunks; completes with {\"sum\", \"count\"}.",
        "io_mode": "client_streaming",
        "input_schema": schema({}),
        "input_chunk_schema": schema({"value": {"type": "number"}}, ["value"]),
        "output_schema": schema(
            {"sum": {"type": "number"}, "count": {"type": "integer"}}, ["sum", "count"]
        ),
    },
    {
        "id": "pys.upper",
        "version": "1.0.0",
        "title": "Python upper-case stream",
        "description": "Answers each {\"text\"} chunk with its upper-case form; completes without a payload.",
        "io_mode": "bidirectional",
        "input_schema": schema({}),
        "input_chunk_schema": TEXT,
        "output_chunk_schema": TEXT,
    },
    {
        "id": "pys.echo",
        "version": "1.0.0",
        "title": "Python echo",
        "description": "Returns the payload unchanged.",
        "io_mode": "unary",
        "input_schema": schema(),
        "output_schema": schema(),
    },
]


def handle(capability, payload, call):
    """Runs one call; the return value is the `result` (None: completed without one)."""
    if capability == "pys.echo":
        return payload
    if capability == "pys.count":
        delay = payload.get("delay_ms", 0) / 1000
        for n in range(1, payload["to"] + 1):
            if delay and call.wait_cancelled(delay):
                raise Cancelled()
            call.emit({"n": n})
        return {"count": payload["to"]}
    if capability == "pys.sum":
        total, count = 0, 0
        while (chunk := call.next_input()) is not None:
            total += chunk["value"]
            count += 1
        return {"sum": total, "count": count}
    if capability == "pys.upper":
        while (chunk := call.next_input()) is not None:
            call.emit({"text": chunk["text"].upper()})
        return None
    raise Failure(f"unknown capability {capability}")


def run_call(message, call):
    call_id = message["call_id"]
    try:
        result = handle(message["capability_id"], message["payload"], call)
        reply = {"type": "result", "call_id": call_id, "result": result}
        if len(encode(reply)) > _max_line:
            reply = {"type": "error", "call_id": call_id, "message": "result too large"}
    except Cancelled:
        reply = {"type": "error", "call_id": call_id, "message": "cancelled"}
    except Failure as e:
        reply = {"type": "error", "call_id": call_id, "message": str(e)}
    except Exception as e:  # a bug in a handler is an error answer, not a crash
        reply = {"type": "error", "call_id": call_id, "message": f"{type(e).__name__}: {e}"}
    finally:
        with _calls_lock:
            _calls.pop(call_id, None)
    # After a cancel the reply is optional and discarded by the node; we send it anyway.
    send(reply)


def read_message(stdin):
    """One line as a dict, None at end of input. Exits on a protocol violation."""
    raw = stdin.readline(_max_line + 2)
    if not raw:
        return None
    if not raw.endswith(b"\n") and len(raw) > _max_line:
        log(f"line longer than {_max_line} bytes from the node; exiting")
        sys.exit(2)
    try:
        message = json.loads(raw)
    except ValueError as e:
        log(f"unparseable line from the node ({e}); exiting")
        sys.exit(2)
    if not isinstance(message, dict):
        log("a line from the node is not an object; exiting")
        sys.exit(2)
    return message


def find(call_id):
    with _calls_lock:
        return _calls.get(call_id)


def main():
    global _max_line
    stdin = sys.stdin.buffer
    hello = read_message(stdin)
    if hello is None or hello.get("type") != "hello":
        log("expected hello as the first line; exiting")
        return 2
    if not hello.get("min_protocol", 1) <= PROTOCOL <= hello.get("protocol", 0):
        log(f"the node does not speak protocol {PROTOCOL} (streaming); exiting")
        return 2
    _max_line = int(hello.get("max_line_bytes", _max_line))
    journal(f"start {os.getpid()}")
    send({"type": "ready", "protocol": PROTOCOL, "descriptors": DESCRIPTORS})
    log(f"ready: protocol {PROTOCOL}, {len(DESCRIPTORS)} capabilities")

    workers = []
    while True:
        message = read_message(stdin)
        if message is None:
            break  # end of input: the node asks us to finish and exit
        kind = message.get("type")
        call = find(message.get("call_id"))
        if kind == "ping":
            send({"type": "pong", "id": message["id"]})
        elif kind == "call":
            call_id = message["call_id"]
            window = int(message.get("window", 16))
            journal(f"call {call_id} {message['capability_id']} {window}")
            call = Call(call_id, window, "window" in message)
            with _calls_lock:
                _calls[call_id] = call
            worker = threading.Thread(target=run_call, args=(message, call), daemon=True)
            worker.start()
            workers = [w for w in workers if w.is_alive()] + [worker]
        elif kind == "ack":
            if call is not None:  # a call we already answered: nothing to do
                call.acked(message["chunks"])
        elif kind == "chunk":
            if call is not None:
                call.receive(message["chunk"])
        elif kind == "end":
            if call is not None:
                call.receive(END)
        elif kind == "cancel":
            journal(f"cancel {message['call_id']}")
            if call is not None:
                call.cancel()
        else:
            log(f"ignoring message of unknown type {kind!r}")
    # End of input: no more acks, input chunks or half-closes can arrive, so a streaming
    # call still running could wait forever. Give them up (the node has already failed
    # them); a unary call finishes normally.
    log("end of input; finishing in-flight calls")
    with _calls_lock:
        streaming = [c for c in _calls.values() if c.streaming]
    for call in streaming:
        call.cancel()
    for worker in workers:
        worker.join()
    journal("exit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
