"""``function_call`` reads an OpenAI chat-style tool call the way the converters that share it need."""

from __future__ import annotations

from funes_core import FunctionCall, function_call


def test_arguments_are_kept_verbatim_when_written_as_a_string() -> None:
    call = {"id": "call:1", "function": {"name": "recall", "arguments": '{"query": "x", }'}}
    assert function_call(call) == FunctionCall("recall", '{"query": "x", }', "call-1")


def test_arguments_that_are_not_a_string_become_compact_json() -> None:
    assert function_call({"function": {"name": "ls", "arguments": {"päth": "a"}}}) == FunctionCall(
        "ls", '{"päth":"a"}', None
    )
    assert function_call({"function": {"name": "ls", "arguments": "  "}}) == FunctionCall("ls", "{}", None)


def test_a_call_without_a_named_function_is_none() -> None:
    assert function_call({"function": {"arguments": "{}"}}) is None
    assert function_call({"function": "recall"}) is None
    assert function_call("recall") is None
