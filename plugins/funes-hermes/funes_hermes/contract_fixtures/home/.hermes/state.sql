-- A Hermes home with two sessions: discover() must list the later one first.
INSERT INTO sessions (id, source, model, started_at, cwd) VALUES
('20260401_100000_aaaa01', 'cli', 'fake-model', 1775037600, '/home/ada/src/site'),
('20260402_110000_bbbb02', 'cli', 'fake-model', 1775127600, '/home/ada/src/site');

INSERT INTO messages (id, session_id, role, content, timestamp) VALUES
(1, '20260401_100000_aaaa01', 'user', 'Why is the build slow?', 1775037601),
(2, '20260401_100000_aaaa01', 'assistant', 'The image step re-encodes every file.', 1775037620),
(3, '20260402_110000_bbbb02', 'user', 'Cache the image step.', 1775127601),
(4, '20260402_110000_bbbb02', 'assistant', 'Done: the step now keys on the file hash.', 1775127650);
