// The typed tables (`atrace convert --to=tables -o DIR`) in DuckDB, without
// a server, and the shipped ClickHouse queries of docs/sql/ run on them
// (docs/tables.md, "Into DuckDB").
//
//   npm install @duckdb/node-api          (in the current directory)
//   node tools/duckdb/atrace_duckdb.cjs DIR [QUERY.sql ...] [--save=FILE.duckdb]
//
// Loads DIR's TSV files into tables atrace.NAME (their columns and types
// read from DIR/schema.sql), then runs each QUERY.sql and prints its rows
// as TabSeparated, as clickhouse-client does (a NULL: the empty field, what
// ClickHouse's LEFT JOIN leaves for no match). `--save` keeps the database
// in a file (`duckdb FILE.duckdb` then asks it anything).
//
// The queries are ClickHouse's, made DuckDB's by the few rewrites below:
// the shipped ones are written in portable SQL but for those (the
// aggregate-with-condition functions, ClickHouse's exact quantiles,
// GLOBAL for clusters), so both engines give the same answers.
'use strict';

const fs = require('fs');

function duckdbApi() {
  try {
    return require(require.resolve('@duckdb/node-api', { paths: [process.cwd(), __dirname] }));
  } catch (e) {
    console.error('atrace_duckdb: @duckdb/node-api is not installed here (npm install @duckdb/node-api)');
    process.exit(2);
  }
}

// ClickHouse's column types -> DuckDB's.
const TYPES = {
  UInt8: 'UTINYINT', UInt16: 'USMALLINT', UInt32: 'UINTEGER', UInt64: 'UBIGINT',
  Int64: 'BIGINT', String: 'VARCHAR',
};

// schema.sql -> [{name, columns: [[name, duckdb type], ...]}]
function tablesOf(schema) {
  const out = [];
  const re = /CREATE TABLE IF NOT EXISTS atrace\.(\w+)\s*\(([^)]*)\)/g;
  for (let m; (m = re.exec(schema));) {
    const columns = m[2].split(',').map((c) => c.trim().split(/\s+/)).filter((c) => c.length === 2)
      .map(([n, t]) => {
        if (!TYPES[t]) throw new Error(`schema.sql: type ${t} of ${m[1]}.${n}`);
        return [n, TYPES[t]];
      });
    out.push({ name: m[1], columns });
  }
  return out;
}

// quantilesExact(L1, L2, ...)(x[, cond]): ClickHouse's exact quantile is the
// element at floor(level * n) of the sorted values (0-based); the same here.
function quantiles(levels, args) {
  const [x, cond] = splitArgs(args);
  const filter = cond ? ` FILTER (WHERE ${cond})` : '';
  return '[' + levels.split(',').map((l) =>
    `list_sort(list(${x})${filter})[floor(count(${x})${filter} * ${l.trim()})::BIGINT + 1]`)
    .join(', ') + ']';
}

// "a, f(b, c)" -> ["a", "f(b, c)"]: the top-level arguments.
function splitArgs(s) {
  const out = [];
  let depth = 0, start = 0;
  for (let i = 0; i < s.length; ++i) {
    if (s[i] === '(') depth++;
    else if (s[i] === ')') depth--;
    else if (s[i] === ',' && depth === 0) {
      out.push(s.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(s.slice(start).trim());
  return out;
}

// The text from `open` (an index just past a '(') to its matching ')'.
function balanced(s, open) {
  let depth = 1;
  for (let i = open; i < s.length; ++i) {
    if (s[i] === '(') depth++;
    else if (s[i] === ')' && --depth === 0) return i;
  }
  throw new Error('unbalanced parentheses');
}

function toDuckdb(sql) {
  sql = sql.replace(/--[^\n]*/g, '');  // comments may hold the words below
  sql = sql.replace(/\bGLOBAL\s+/g, '');  // a cluster's way to read once
  sql = sql.replace(/\bANY\s+LEFT\s+JOIN\b/g, 'LEFT JOIN');
  for (let m; (m = /\bquantilesExact(If)?\(/.exec(sql));) {
    const levelsEnd = balanced(sql, m.index + m[0].length);
    if (sql[levelsEnd + 1] !== '(') throw new Error('quantilesExact without its arguments');
    const argsEnd = balanced(sql, levelsEnd + 2);
    sql = sql.slice(0, m.index) +
      quantiles(sql.slice(m.index + m[0].length, levelsEnd), sql.slice(levelsEnd + 2, argsEnd)) +
      sql.slice(argsEnd + 1);
  }
  return sql;
}

// ClickHouse's functions the queries use, as DuckDB macros (an empty
// group gives 0, as in ClickHouse, not NULL).
const MACROS = [
  'CREATE MACRO sumIf(x, c) AS sum(CASE WHEN c THEN x ELSE 0 END)',
  'CREATE MACRO countIf(c) AS sum(CASE WHEN c THEN 1 ELSE 0 END)',
  'CREATE MACRO minIf(x, c) AS coalesce(min(CASE WHEN c THEN x END), 0)',
  'CREATE MACRO maxIf(x, c) AS coalesce(max(CASE WHEN c THEN x END), 0)',
  'CREATE MACRO intDiv(a, b) AS a // b',
  'CREATE MACRO uniqExact(x) AS count(DISTINCT x)',
  // Nearest-rank percentiles (request_latency_across_hosts.sql): the
  // sorted values as a list, indexed from 1 in both engines.
  'CREATE MACRO groupArray(x) AS list(x)',
  'CREATE MACRO arraySort(a) AS list_sort(a)',
  'CREATE MACRO arrayElement(a, i) AS list_extract(a, i)',
];

function field(v) {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return '[' + v.map(field).join(',') + ']';
  return String(v);
}

async function main() {
  const args = process.argv.slice(2);
  const save = args.find((a) => a.startsWith('--save='));
  const rest = args.filter((a) => !a.startsWith('--save='));
  if (rest.length < 1) {
    console.error('usage: node atrace_duckdb.cjs DIR [QUERY.sql ...] [--save=FILE.duckdb]');
    process.exit(2);
  }
  const dir = rest[0];
  const { DuckDBInstance } = duckdbApi();
  const db = await DuckDBInstance.create(save ? save.slice(7) : ':memory:');
  const c = await db.connect();
  await c.run('CREATE SCHEMA IF NOT EXISTS atrace');
  for (const m of MACROS) await c.run(m.replace('CREATE MACRO', 'CREATE OR REPLACE MACRO'));
  for (const t of tablesOf(fs.readFileSync(`${dir}/schema.sql`, 'utf8'))) {
    const columns = t.columns.map(([n, ty]) => `'${n}': '${ty}'`).join(', ');
    const file = `${dir}/${t.name}.tsv`.replace(/'/g, "''");
    // Empty files too: read_csv cannot tell their columns, the list does.
    await c.run(`CREATE OR REPLACE TABLE atrace.${t.name} AS SELECT * FROM read_csv('${file}', ` +
      `delim = '\t', header = false, quote = '', escape = '', auto_detect = false, ` +
      `columns = {${columns}})`);
  }
  for (const q of rest.slice(1)) {
    const reader = await c.runAndReadAll(toDuckdb(fs.readFileSync(q, 'utf8')));
    for (const row of reader.getRowsJS()) process.stdout.write(row.map(field).join('\t') + '\n');
  }
}

main().catch((e) => {
  console.error('atrace_duckdb: ' + String(e.message || e).split('\n')[0]);
  process.exit(1);
});
