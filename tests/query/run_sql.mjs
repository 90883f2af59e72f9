// SPDX-License-Identifier: Apache-2.0
// Test-only: runs a file of SQL statements in DuckDB (the official Node API, @duckdb/node-api) in
// the current directory and prints the last statement's rows as JSON, one array per line.
// usage: node run_sql.mjs FILE.sql
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'fs';

const sql = readFileSync(process.argv[2], 'utf8')
  .split('\n').filter((line) => !line.trimStart().startsWith('--')).join('\n');
const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
let last = null;
for (const stmt of sql.split(';').map((s) => s.trim()).filter(Boolean)) last = await conn.runAndReadAll(stmt);
console.log(JSON.stringify(last.columnNames()));
for (const row of last.getRowsJS()) console.log(JSON.stringify(row, (k, v) => (typeof v === 'bigint' ? v.toString() : v)));
