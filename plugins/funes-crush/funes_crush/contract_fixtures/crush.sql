-- The columns of Crush's sessions and messages tables (as its migrations leave them), and one session.
CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
  message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
  updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT, todos TEXT);
CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
  parts TEXT NOT NULL DEFAULT '[]', model TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  finished_at INTEGER, provider TEXT, is_summary_message INTEGER NOT NULL DEFAULT 0);
INSERT INTO sessions VALUES ('8c1f3a52-6d2e-4b7a-9f10-3e5c7a9b1d24', NULL, 'CSV parser drops quoted commas',
  4, 0, 0, 0.0, 1796344219000, 1796344212000, NULL, NULL);
INSERT INTO messages VALUES ('0e2a4c6e-1b3d-4f5a-8b7c-9d0e1f2a3b4c', '8c1f3a52-6d2e-4b7a-9f10-3e5c7a9b1d24', 'user',
  '[{"type":"text","data":{"text":"Why does the CSV parser drop quoted commas?"}}]', NULL, 1796344212000, 1796344212000, NULL, NULL, 0);
INSERT INTO messages VALUES ('1f3b5d7f-2c4e-4a6b-9c8d-0e1f2a3b4c5d', '8c1f3a52-6d2e-4b7a-9f10-3e5c7a9b1d24', 'assistant',
  '[{"type":"reasoning","data":{"thinking":"Ask the memory first.","signature":"","thought_signature":"","tool_id":"","responses_data":null}},{"type":"tool_call","data":{"id":"call_1","name":"mcp_funes_recall","input":"{\"query\":\"quoted commas\"}","provider_executed":false,"finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1796344214}}]',
  'fake-model', 1796344213000, 1796344214, 1796344214, 'fake', 0);
INSERT INTO messages VALUES ('2a4c6e8a-3d5f-4b7c-8d9e-1f2a3b4c5d6e', '8c1f3a52-6d2e-4b7a-9f10-3e5c7a9b1d24', 'tool',
  '[{"type":"tool_result","data":{"tool_call_id":"call_1","name":"mcp_funes_recall","content":"1. [claude 2026-11-30] the tokenizer resets in_quotes at every comma","data":"","mime_type":"","metadata":"","is_error":false}}]',
  NULL, 1796344215000, 1796344215000, NULL, NULL, 0);
INSERT INTO messages VALUES ('3b5d7f9b-4e6a-4c8d-9e0f-2a3b4c5d6e7f', '8c1f3a52-6d2e-4b7a-9f10-3e5c7a9b1d24', 'assistant',
  '[{"type":"text","data":{"text":"The tokenizer resets its quote state at each comma — café-grade bug. 🙂"}},{"type":"finish","data":{"reason":"end_turn","time":1796344219}}]',
  'fake-model', 1796344216000, 1796344219, 1796344219, 'fake', 0);
