"""The fake model loads a deferred tool first (Droid's ``ToolSearch``), then calls it, then answers."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from funes_contracts.fake_model import FakeModel

REMINDER = "<system-reminder>\nDeferred tools:\nWebSearch\nfunes___recall\n</system-reminder>"


def _tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


def _ask(model: FakeModel, messages: list[dict[str, Any]], tools: list[str]) -> dict[str, Any]:
    body = json.dumps({"model": "fake-model", "messages": messages, "tools": [_tool(t) for t in tools]})
    request = urllib.request.Request(
        f"{model.url}/v1/chat/completions", body.encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        answer: dict[str, Any] = json.loads(response.read())["choices"][0]["message"]
    return answer


def _call(name: str, call_id: str) -> dict[str, Any]:
    function = {"name": name, "arguments": "{}"}
    return {"role": "assistant", "tool_calls": [{"id": call_id, "type": "function", "function": function}]}


def test_a_deferred_tool_is_loaded_then_called_then_its_result_answered() -> None:
    prompt = [{"role": "user", "content": REMINDER}, {"role": "user", "content": "what did we decide?"}]
    with FakeModel(tool_pattern=r"^funes___recall$", tool_args={"query": "q"}, loader="ToolSearch") as model:
        first = _ask(model, prompt, ["Read", "ToolSearch"])
        (load,) = first["tool_calls"]
        assert load["function"]["name"] == "ToolSearch"
        assert json.loads(load["function"]["arguments"]) == {"query": "select:funes___recall"}

        loaded = [*prompt, _call("ToolSearch", "c1"), {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
        second = _ask(model, loaded, ["Read", "ToolSearch", "funes___recall"])
        (recall,) = second["tool_calls"]
        assert recall["function"]["name"] == "funes___recall"
        assert json.loads(recall["function"]["arguments"]) == {"query": "q"}

        done = [
            *loaded,
            _call("funes___recall", "c2"),
            {"role": "tool", "tool_call_id": "c2", "content": "HIT"},
        ]
        third = _ask(model, done, ["Read", "ToolSearch", "funes___recall"])
        assert "tool_calls" not in third and "HIT" in third["content"]
    assert [r.get("answered_tool") for r in model.requests] == ["ToolSearch", "funes___recall", None]


def test_without_a_loader_a_tool_that_is_only_named_is_not_called() -> None:
    prompt = [{"role": "user", "content": REMINDER}]
    with FakeModel(tool_pattern=r"^funes___recall$", reply="plain") as model:
        answer = _ask(model, prompt, ["Read", "ToolSearch"])
    assert answer["content"] == "plain"
