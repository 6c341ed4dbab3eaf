#!/usr/bin/env python3
"""A weft managed provider in plain Python (standard library only, Python 3.11+).

It speaks protocol 1 of docs/provider-protocol.md on stdin/stdout and logs to stderr.
Capabilities:

    py.echo@1.0.0   returns the payload unchanged
    py.upper@1.0.0  {"text": str} -> {"text": str.upper()}
    py.fail@1.0.0   always answers with an error
    py.sleep@1.0.0  {"seconds": n} -> {"slept": n} after n seconds (honours cancel)
    py.crash@1.0.0  kills the process with exit status 3 (for restart tests)

Set ECHO_PROVIDER_JOURNAL to a file path to have one line appended per event
("start <pid>", "call <call_id> <capability>", "cancel <call_id>", "exit"); the tests
use it to see what the child received.
"""

import json
import os
import sys
import threading

PROTOCOL = 1
JOURNAL = os.environ.get("ECHO_PROVIDER_JOURNAL")

_out_lock = threading.Lock()
_journal_lock = threading.Lock()
_max_line = 4 * 1024 * 1024
_calls = {}  # call_id -> threading.Event (set when the node cancels the call)
_calls_lock = threading.Lock()


def log(message):
    """Free-form log text: stderr ends up in the node's log."""
    print(f"echo_provider[{os.getpid()}]: {message}", file=sys.stderr, flush=True)


def journal(event):
    if JOURNAL:
        with _journal_lock, open(JOURNAL, "a", encoding="utf-8") as f:
            f.write(event + "\n")


def encode(message):
    return json.dumps(
        message, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")


def send(message):
    """Writes one message as one line. Lines are written whole, under a lock, because
    several call threads answer concurrently."""
    line = encode(message)
    if len(line) > _max_line and message.get("type") == "result":
        # An over-long line is a protocol fault that would kill us: answer with an error.
        line = encode(
            {
                "type": "error",
                "call_id": message["call_id"],
                "message": f"result too large ({len(line)} bytes; limit {_max_line})",
            }
        )
    with _out_lock:
        sys.stdout.buffer.write(line + b"\n")
        sys.stdout.buffer.flush()


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
        "id": "py.echo",
        "version": "1.0.0",
        "title": "Python echo",
        "description": "Returns the payload unchanged.",
        "io_mode": "unary",
        "input_schema": schema(),
        "output_schema": schema(),
        "annotations": {"language": "python"},
    },
    {
        "id": "py.upper",
        "version": "1.0.0",
        "title": "Python upper-case",
        "description": "Upper-cases text. Input: {\"text\": string}. Output: the same shape.",
        "io_mode": "unary",
        "input_schema": TEXT,
        "output_schema": TEXT,
    },
    {
        "id": "py.fail",
        "version": "1.0.0",
        "title": "Python failure",
        "description": "Always answers with an error (a provider_error for the caller).",
        "io_mode": "unary",
        "input_schema": schema(),
    },
    {
        "id": "py.sleep",
        "version": "1.0.0",
        "title": "Python sleep",
        "description": "Sleeps `seconds`, then answers {\"slept\": seconds}; stops early when cancelled.",
        "io_mode": "unary",
        "input_schema": schema(
            {"seconds": {"type": "number", "minimum": 0, "maximum": 300}}, ["seconds"]
        ),
        "output_schema": schema({"slept": {"type": "number"}}, ["slept"]),
    },
    {
        "id": "py.crash",
        "version": "1.0.0",
        "title": "Python crash",
        "description": "Terminates the provider process with exit status 3 (restart testing).",
        "io_mode": "unary",
        "input_schema": schema(),
    },
]


class Failure(Exception):
    """An error answer for the caller."""


def handle(capability, payload, cancelled, call_id):
    if capability == "py.echo":
        return payload
    if capability == "py.upper":
        return {"text": payload["text"].upper()}
    if capability == "py.fail":
        raise Failure("py.fail always fails")
    if capability == "py.sleep":
        seconds = payload["seconds"]
        if cancelled.wait(seconds):
            raise Failure("cancelled")
        return {"slept": seconds}
    if capability == "py.crash":
        journal(f"crash {call_id}")
        log("crashing on purpose")
        os._exit(3)
    raise Failure(f"unknown capability {capability}")


def run_call(message, cancelled):
    call_id = message["call_id"]
    capability = message["capability_id"]
    try:
        result = handle(capability, message["payload"], cancelled, call_id)
        reply = {"type": "result", "call_id": call_id, "result": result}
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


def main():
    global _max_line
    stdin = sys.stdin.buffer
    hello = read_message(stdin)
    if hello is None or hello.get("type") != "hello":
        log("expected hello as the first line; exiting")
        return 2
    if not hello.get("min_protocol", 1) <= PROTOCOL <= hello.get("protocol", 0):
        log(f"the node does not speak protocol {PROTOCOL}; exiting")
        return 2
    _max_line = int(hello.get("max_line_bytes", _max_line))
    journal(f"start {os.getpid()}")
    send({"type": "ready", "protocol": PROTOCOL, "descriptors": DESCRIPTORS})
    log(f"ready: protocol {PROTOCOL}, {len(DESCRIPTORS)} capabilities, provider id {hello.get('provider_id')}")

    workers = []
    while True:
        message = read_message(stdin)
        if message is None:
            break  # end of input: the node asks us to finish and exit
        kind = message.get("type")
        if kind == "ping":
            send({"type": "pong", "id": message["id"]})
        elif kind == "call":
            call_id = message["call_id"]
            journal(f"call {call_id} {message['capability_id']}")
            log(f"call {call_id} {message['capability_id']} (deadline {message['deadline_ms']} ms)")
            cancelled = threading.Event()
            with _calls_lock:
                _calls[call_id] = cancelled
            worker = threading.Thread(target=run_call, args=(message, cancelled), daemon=True)
            worker.start()
            workers = [w for w in workers if w.is_alive()] + [worker]
        elif kind == "cancel":
            call_id = message["call_id"]
            journal(f"cancel {call_id}")
            log(f"cancel {call_id}")
            with _calls_lock:
                event = _calls.get(call_id)
            if event is not None:
                event.set()
        else:
            log(f"ignoring message of unknown type {kind!r}")
    log("end of input; finishing in-flight calls")
    for worker in workers:
        worker.join()
    journal("exit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
