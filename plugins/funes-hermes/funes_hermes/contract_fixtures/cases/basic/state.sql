-- A CLI session as Hermes 0.19 records it: a recall through funes' MCP server, reasoning in both
-- columns, parallel tool calls, multi-byte text, and a compacted (inactive) row that still counts.
INSERT INTO sessions (id, source, model, started_at, ended_at, end_reason, message_count, tool_call_count, cwd, title)
VALUES ('20260302_091500_a1b2c3', 'cli', 'fake-model', 1772442900.25, 1772442990.5, 'agent_close', 9, 3,
        '/home/ada/src/parser', 'Config parsing');

INSERT INTO messages (id, session_id, role, content, timestamp, api_content) VALUES
(1, '20260302_091500_a1b2c3', 'user', 'Where do we parse the config? Ünïcödé ✓ 設定ファイル',
 1772442901.5, '<memory-context>funes must never store this injected copy</memory-context>
Where do we parse the config? Ünïcödé ✓ 設定ファイル');

INSERT INTO messages (id, session_id, role, content, tool_calls, timestamp, finish_reason, reasoning_content) VALUES
(2, '20260302_091500_a1b2c3', 'assistant', '',
 '[{"id": "call_a7d45e", "call_id": "call_a7d45e", "response_item_id": "fc_a7d45e", "type": "function", "function": {"name": "mcp__funes__recall", "arguments": "{\"query\": \"config parser\"}"}}]',
 1772442902.0, 'tool_calls', 'The user asks where config parsing lives; check the memory first.');

INSERT INTO messages (id, session_id, role, content, tool_call_id, tool_name, timestamp) VALUES
(3, '20260302_091500_a1b2c3', 'tool', '<untrusted_tool_result source="mcp__funes__recall">
[2026-02-27T16:02:11Z] claude parser/3f2a text score=0.912
  config.py: load() reads ~/.parser.toml with tomllib
</untrusted_tool_result>', 'call_a7d45e', 'mcp__funes__recall', 1772442903.125);

INSERT INTO messages (id, session_id, role, content, timestamp, reasoning) VALUES
(4, '20260302_091500_a1b2c3', 'assistant', 'It is parsed in `config.py` by `load()`, which reads ~/.parser.toml. 🙂',
 1772442905, 'The recall answers it directly.');

INSERT INTO messages (id, session_id, role, content, timestamp, active, compacted) VALUES
(5, '20260302_091500_a1b2c3', 'user', 'Show me both files.', 1772442960, 0, 1);

INSERT INTO messages (id, session_id, role, content, tool_calls, timestamp, finish_reason, reasoning, reasoning_content) VALUES
(6, '20260302_091500_a1b2c3', 'assistant', 'Reading them now.',
 '[{"id": "call_r1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"config.py\"}"}}, {"id": "call_r2", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"parser.toml\"}"}}]',
 1772442961.75, 'tool_calls', 'summary that reasoning_content supersedes', 'Two reads, in parallel.');

INSERT INTO messages (id, session_id, role, content, tool_call_id, tool_name, timestamp) VALUES
(7, '20260302_091500_a1b2c3', 'tool', 'def load(path):
    return tomllib.loads(path.read_text())', 'call_r1', 'read_file', 1772442962),
(8, '20260302_091500_a1b2c3', 'tool', '[parser]
strict = true', 'call_r2', 'read_file', 1772442962.5);

INSERT INTO messages (id, session_id, role, content, timestamp, finish_reason) VALUES
(9, '20260302_091500_a1b2c3', 'assistant', '`load()` returns the parsed table; `strict` is on.', 1772442990.5, 'stop');
