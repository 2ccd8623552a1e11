-- An older Hermes schema (no sessions.cwd, no reasoning_content, timestamps may be NULL) with
-- every awkward row the converter must survive: other roles, blank text, missing and invalid
-- times, non-string and missing arguments, structured (multimodal) content, a torn tool_calls
-- value, a tool result naming no tool, an id gap, and a session id funes cannot use.
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    model TEXT,
    parent_session_id TEXT,
    started_at REAL NOT NULL,
    ended_at REAL
);

CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    timestamp REAL,
    reasoning TEXT
);

INSERT INTO sessions (id, source, model, started_at) VALUES
('20250105_070000_0ld5ch', 'cli', 'old-model', 1736060400),
('bad:id', 'acp', 'old-model', 1736060400);

INSERT INTO messages (id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, reasoning) VALUES
(1, '20250105_070000_0ld5ch', 'system', 'You are Hermes.', NULL, NULL, NULL, 1736060400, NULL),
(2, '20250105_070000_0ld5ch', 'user', 'Write a.txt, then list the folder.', NULL, NULL, NULL, NULL, NULL),
(3, '20250105_070000_0ld5ch', 'user', ' 	' || char(12288) || char(10), NULL, NULL, NULL, 1736060401, NULL),
(4, '20250105_070000_0ld5ch', 'assistant', NULL, NULL,
 '[{"id": "c9", "type": "function", "function": {"name": "write_file", "arguments": {"path": "a.txt", "content": "x\u00e9"}}}, {"id": "c10", "type": "function", "function": {"name": "list_dir"}}]',
 NULL, 'yesterday', '   '),
(5, '20250105_070000_0ld5ch', 'tool', 'wrote 2 bytes', 'c9', NULL, NULL, 1736060405.5, NULL),
(6, '20250105_070000_0ld5ch', 'tool', '', 'c10', NULL, 'list_dir', 1736060406, NULL),
(8, '20250105_070000_0ld5ch', 'user',
 char(0) || 'json:[{"type": "text", "text": "What is in this picture?"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}, {"type": "text", "text": "   "}]',
 NULL, NULL, NULL, 1736060410, NULL),
(9, '20250105_070000_0ld5ch', 'session_meta', '{"tools": []}', NULL, NULL, NULL, 1736060411, NULL),
(10, 'bad:id', 'user', 'this session id cannot name a spool file', NULL, NULL, NULL, 1736060412, NULL),
(11, '20250105_070000_0ld5ch', 'assistant', 'A chart. Let me check the folder again.', NULL,
 '[{"id": "c11", "type": "function", "function": {"name": "terminal", "arguments": "{\"command\": \"ls -',
 NULL, 1736060413, 'Vision first, then the terminal.');
