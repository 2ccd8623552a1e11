-- Two sessions interleaved in one database, as a CLI session and a gateway (Telegram) session
-- running at the same time leave it; the second continues a compressed one. A session with no
-- rows yet converts to nothing.
INSERT INTO sessions (id, source, model, parent_session_id, started_at, cwd) VALUES
('20260310_080000_cafe01', 'cli', 'fake-model', NULL, 1773129600, '/srv/app'),
('20260310_080005_beef02', 'telegram', 'fake-model', '20260310_075500_feed00', 1773129605, ''),
('20260310_090000_empty3', 'cli', 'fake-model', NULL, 1773133200, '/srv/app');

INSERT INTO messages (id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp) VALUES
(101, '20260310_080000_cafe01', 'user', 'Run the tests.', NULL, NULL, NULL, 1773129601),
(102, '20260310_080005_beef02', 'user', 'remind me what we decided about the cache', NULL, NULL, NULL, 1773129606),
(103, '20260310_080000_cafe01', 'assistant', '', NULL,
 '[{"id": "t1", "type": "function", "function": {"name": "terminal", "arguments": "{\"command\": \"pytest -q\"}"}}]',
 NULL, 1773129602),
(104, '20260310_080005_beef02', 'assistant', 'You chose a write-through cache with a 5 minute TTL.', NULL, NULL, NULL, 1773129608),
(105, '20260310_080000_cafe01', 'tool', '12 passed in 0.84s', 't1', NULL, 'terminal', 1773129610),
(106, '20260310_080000_cafe01', 'assistant', 'All 12 tests pass.', NULL, NULL, NULL, 1773129611);
