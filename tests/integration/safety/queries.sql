-- The safety corpus's sqlite3 input (tests/integration/test_safety.cpp):
-- a generated table, an index, grouping, a join, a window function, and
-- one failing statement (its error goes to stderr).
CREATE TABLE t(id INTEGER PRIMARY KEY, grp INTEGER, name TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
INSERT INTO t SELECT i, i % 7, printf('name-%04d', (i * 7919) % 1000) FROM n;
CREATE INDEX t_name ON t(name);
SELECT grp, count(*), sum(id), min(name), max(name) FROM t GROUP BY grp ORDER BY grp;
SELECT a.id, b.id FROM t a JOIN t b ON a.name = b.name AND a.id < b.id ORDER BY a.id LIMIT 5;
SELECT id, name, rank() OVER (PARTITION BY grp ORDER BY name) FROM t WHERE id <= 10 ORDER BY id;
SELECT * FROM no_such_table;
