"""A scripted fake model on 127.0.0.1, for end-to-end tests that drive a real agent CLI offline.

It speaks just enough of three wire protocols for coding agents to run a whole session: Anthropic
Messages (``POST /v1/messages``: Claude Code), OpenAI Responses (``POST /v1/responses``: Codex) and
OpenAI Chat Completions (``POST /v1/chat/completions``: pi, Hermes), plus ``GET /v1/models``.

The script is stateless and decided from each request alone: while the conversation holds no tool
result and a tool whose name matches ``tool_pattern`` is offered, answer with one call to it;
otherwise answer ``reply`` followed by the start of the last tool result, so the transcript proves
the round trip. Requests are kept in :attr:`FakeModel.requests` for assertions.

Some agents offer their MCP tools only on demand (Factory Droid lists them under "Deferred tools:"
and loads one through its ``ToolSearch`` tool): with ``loader`` set, a wanted tool the request only
names is first loaded with one call to ``loader`` (``loader_args``, ``{tool}`` replaced by its name);
that call's result does not count as the wanted tool's.

Usage::

    with FakeModel(tool_pattern=r"recall$", tool_args={"query": "parser"}, reply="Done.") as model:
        env["ANTHROPIC_BASE_URL"] = model.url          # or model.url + "/v1" for OpenAI clients
"""

from __future__ import annotations

import gzip
import json
import re
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from funes_core.host.transcripts import json_strings

__all__ = ["FakeModel"]


def _flatten(content: Any) -> str:
    """The text inside a message/tool-result content of any of the three protocols."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, dict):
                for key in ("text", "output", "content"):
                    if key in item:
                        parts.append(_flatten(item[key]))
                        break
        return " ".join(p for p in parts if p)
    return ""


@dataclass
class _Decision:
    tool: str | None  # the tool's own name (without namespace)
    namespace: str | None
    text: str
    args: dict[str, Any] = field(default_factory=dict)


def _tool_results(api: str, body: dict[str, Any]) -> list[str]:
    found: list[str] = []
    if api == "anthropic":
        for message in body.get("messages", []):
            for block in message.get("content", []) if isinstance(message.get("content"), list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found.append(_flatten(block.get("content")))
    elif api == "responses":
        for item in body.get("input", []) if isinstance(body.get("input"), list) else []:
            if isinstance(item, dict) and str(item.get("type", "")).endswith("_output"):
                out = item.get("output")
                found.append(out if isinstance(out, str) else json.dumps(out))
    elif api == "gemini":
        for content in body.get("contents", []) if isinstance(body.get("contents"), list) else []:
            for part in content.get("parts", []) if isinstance(content, dict) else []:
                if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                    found.append(json.dumps(part["functionResponse"].get("response")))
    else:
        found.extend(_flatten(m.get("content")) for m in body.get("messages", []) if m.get("role") == "tool")
    return found


def _called(body: dict[str, Any]) -> set[str]:
    """The names of the tools the conversation so far has called, in any of the protocols."""
    names: set[str] = set()
    items = [*body.get("messages", []), *(body["input"] if isinstance(body.get("input"), list) else [])]
    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call" and isinstance(item.get("name"), str):
            names.add(item["name"])
        for call in item.get("tool_calls") or []:
            if isinstance(call, dict) and isinstance((call.get("function") or {}).get("name"), str):
                names.add(call["function"]["name"])
        content = item.get("content")
        for block in content if isinstance(content, list) else []:
            if (
                isinstance(block, dict)
                and block.get("type") == "tool_use"
                and isinstance(block.get("name"), str)
            ):
                names.add(block["name"])
    return names


def _offered(body: dict[str, Any]) -> Iterator[tuple[str, str | None]]:
    """(name, namespace) of every offered tool; Codex nests MCP tools in a ``namespace`` entry."""

    def walk(tools: Any, namespace: str | None) -> Iterator[tuple[str, str | None]]:
        for tool in tools if isinstance(tools, list) else []:
            if not isinstance(tool, dict):
                continue
            if isinstance(tool.get("functionDeclarations"), list):
                yield from walk(tool["functionDeclarations"], namespace)
                continue
            if tool.get("type") == "namespace":
                yield from walk(tool.get("tools"), tool.get("name"))
                continue
            name = tool.get("name") or (tool.get("function") or {}).get("name")
            if isinstance(name, str):
                yield name, namespace

    yield from walk(body.get("tools"), None)


@dataclass
class FakeModel:
    """The server; use it as a context manager (it binds a free port on 127.0.0.1)."""

    tool_pattern: str | None = None
    tool_args: dict[str, Any] = field(default_factory=dict)
    reply: str = "Done."
    #: The agent's tool that loads deferred tools (Droid's ``ToolSearch``), and its arguments.
    loader: str | None = None
    loader_args: dict[str, str] = field(default_factory=lambda: {"query": "select:{tool}"})
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._server: ThreadingHTTPServer | None = None
        self._lock = threading.Lock()

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        assert self._server is not None, "start the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                model._record("GET", self.path, None)
                if self.path.split("?")[0].rstrip("/").endswith("/models"):
                    ids = ["fake-model", "claude-sonnet-4-5", "gpt-5-codex"]
                    self._send(
                        200,
                        "json",
                        {
                            "object": "list",
                            "data": [
                                {"id": i, "object": "model", "type": "model", "owned_by": "fake"} for i in ids
                            ],
                        },
                    )
                else:
                    self._send(404, "json", {"error": {"message": f"no {self.path}"}})

            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(size) if size else b""
                if (self.headers.get("Content-Encoding") or "").lower() == "gzip":
                    raw = gzip.decompress(raw)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                path = self.path.split("?")[0]
                model._record("POST", path, body)
                if path.endswith("/messages/count_tokens"):
                    self._send(200, "json", {"input_tokens": 12})
                elif path.endswith("/messages"):
                    self._send(200, *model._anthropic(body))
                elif path.endswith("/responses"):
                    self._send(200, *model._responses(body))
                elif ":generateContent" in path or ":streamGenerateContent" in path:
                    self._send(200, *model._gemini(body, ":stream" in path))
                elif path.endswith(":countTokens"):
                    self._send(200, "json", {"totalTokens": 12})
                elif path.endswith("/chat/completions"):
                    self._send(200, *model._chat(body))
                else:
                    self._send(404, "json", {"error": {"message": f"no {path}"}})

            def _send(self, code: int, kind: str, payload: Any) -> None:
                data = (json.dumps(payload) if kind == "json" else payload).encode()
                self.send_response(code)
                self.send_header(
                    "Content-Type", "application/json" if kind == "json" else "text/event-stream"
                )
                self.send_header("Content-Length", str(len(data)))
                self.send_header("request-id", "req_" + uuid.uuid4().hex[:12])
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def _record(self, method: str, path: str, body: Any) -> None:
        with self._lock:
            self.requests.append({"method": method, "path": path, "body": body})

    # -- the script -----------------------------------------------------------------------------

    def tool_calls_made(self) -> int:
        """How many answers were tool calls (for assertions)."""
        return sum(1 for r in self.requests if r.get("answered_tool"))

    def called(self, tool: str) -> bool:
        """Whether some answer was a call to ``tool`` (as the agent offered it, namespace included)."""
        return any(r.get("answered_tool") == tool for r in self.requests)

    def saw(self, text: str) -> bool:
        """Whether some request the agent sent holds ``text``: a tool result quoting the memory, say."""
        bodies = [r["body"] for r in self.requests if r.get("body")]
        return text in json.dumps(bodies, ensure_ascii=False)

    def _decide(self, api: str, body: dict[str, Any]) -> _Decision:
        results = _tool_results(api, body)
        loaded = self.loader is not None and self.loader in _called(body)
        if self.tool_pattern and len(results) <= int(loaded):
            pattern = re.compile(self.tool_pattern)
            offered = list(_offered(body))
            for name, namespace in offered:
                if pattern.search(f"{namespace}__{name}" if namespace else name):
                    with self._lock:
                        self.requests[-1]["answered_tool"] = f"{namespace}__{name}" if namespace else name
                    return _Decision(name, namespace, "", self.tool_args)
            if self.loader and not loaded and (self.loader, None) in offered:
                said = " ".join(json_strings(body.get("messages") or body.get("input")))
                wanted = next((w for w in re.findall(r"[\w.-]+", said) if pattern.search(w)), None)
                if wanted is not None:
                    with self._lock:
                        self.requests[-1]["answered_tool"] = self.loader
                    args = {k: v.replace("{tool}", wanted) for k, v in self.loader_args.items()}
                    return _Decision(self.loader, None, "", args)
        text = self.reply
        if results:
            text += " [tool result seen: " + " ".join(results[-1][:300].split()) + "]"
        return _Decision(None, None, text)

    def _anthropic(self, body: dict[str, Any]) -> tuple[str, Any]:
        d = self._decide("anthropic", body)
        if d.tool:
            name = f"{d.namespace}__{d.tool}" if d.namespace else d.tool
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": "toolu_" + uuid.uuid4().hex[:20],
                "name": name,
                "input": d.args,
            }
            stop = "tool_use"
        else:
            block, stop = {"type": "text", "text": d.text}, "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 5}
        message = {
            "id": "msg_" + uuid.uuid4().hex[:20],
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake-model"),
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            return "json", {**message, "content": [block], "stop_reason": stop}
        start: dict[str, Any]
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(d.args)}
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"message": {**message, "content": [], "stop_reason": None}}),
            ("content_block_start", {"index": 0, "content_block": start}),
            ("content_block_delta", {"index": 0, "delta": delta}),
            ("content_block_stop", {"index": 0}),
            (
                "message_delta",
                {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}},
            ),
            ("message_stop", {}),
        ]
        return "sse", "".join(f"event: {e}\ndata: {json.dumps({'type': e, **d_})}\n\n" for e, d_ in events)

    def _responses(self, body: dict[str, Any]) -> tuple[str, Any]:
        d = self._decide("responses", body)
        if d.tool:
            item: dict[str, Any] = {
                "type": "function_call",
                "id": "fc_" + uuid.uuid4().hex[:20],
                "call_id": "call_" + uuid.uuid4().hex[:20],
                "name": d.tool,
                "arguments": json.dumps(d.args),
                "status": "completed",
            }
            if d.namespace:
                item["namespace"] = d.namespace
        else:
            item = {
                "type": "message",
                "id": "msg_" + uuid.uuid4().hex[:20],
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": d.text, "annotations": []}],
            }
        response = {
            "id": "resp_" + uuid.uuid4().hex[:20],
            "object": "response",
            "status": "completed",
            "model": body.get("model", "fake-model"),
            "output": [item],
            "usage": {
                "input_tokens": 10,
                "output_tokens": 5,
                "total_tokens": 15,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }
        if not body.get("stream"):
            return "json", response
        events = [
            ("response.output_item.done", {"output_index": 0, "item": item, "sequence_number": 0}),
            ("response.completed", {"response": response, "sequence_number": 1}),
        ]
        return "sse", "".join(f"event: {e}\ndata: {json.dumps({'type': e, **d_})}\n\n" for e, d_ in events)

    def _gemini(self, body: dict[str, Any], stream: bool) -> tuple[str, Any]:
        d = self._decide("gemini", body)
        if d.tool:
            part: dict[str, Any] = {"functionCall": {"name": d.tool, "args": d.args}}
        else:
            part = {"text": d.text}
        response = {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "fake-model",
            "responseId": "resp_" + uuid.uuid4().hex[:12],
        }
        if not stream:
            return "json", response
        return "sse", "data: " + json.dumps(response) + "\r\n\r\n"

    def _chat(self, body: dict[str, Any]) -> tuple[str, Any]:
        d = self._decide("chat", body)
        head = {
            "id": "chatcmpl-" + uuid.uuid4().hex[:20],
            "created": 0,
            "model": body.get("model", "fake-model"),
        }
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if d.tool:
            call = {
                "id": "call_" + uuid.uuid4().hex[:20],
                "type": "function",
                "function": {
                    "name": f"{d.namespace}__{d.tool}" if d.namespace else d.tool,
                    "arguments": json.dumps(d.args),
                },
            }
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": d.text}, "stop"
        if not body.get("stream"):
            return "json", {
                **head,
                "object": "chat.completion",
                "usage": usage,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            }

        def chunk(delta: dict[str, Any], reason: str | None = None) -> str:
            return (
                "data: "
                + json.dumps(
                    {
                        **head,
                        "object": "chat.completion.chunk",
                        "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
                    }
                )
                + "\n\n"
            )

        if d.tool:
            body_chunk = chunk({"tool_calls": [{"index": 0, **message["tool_calls"][0]}]})
        else:
            body_chunk = chunk({"content": d.text})
        tail = "data: " + json.dumps(
            {**head, "object": "chat.completion.chunk", "choices": [], "usage": usage}
        )
        return "sse", chunk({"role": "assistant", "content": ""}) + body_chunk + chunk(
            {}, finish
        ) + tail + "\n\n" + ("data: [DONE]\n\n")
