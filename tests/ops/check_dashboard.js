#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Checks deploy/grafana/ncclscope.json, the shipped Grafana dashboard, without
// Grafana:
//  - against Grafana's own types from @grafana/schema, turned into JSON Schema by
//    ts-json-schema-generator (interfaces closed: a property the type does not
//    know is an error) and checked with Ajv: the dashboard (raw/dashboard/x), each
//    panel's options and field config against its panel plugin's types
//    (raw/composable/<type>/panelcfg/x), each target against the common DataQuery
//    extended with the Prometheus data source's fields (prometheus_target.ts);
//  - its structure: unique panel ids and target refIds, gridPos inside the 24
//    columns and no two panels overlapping, every panel and target on the
//    ${datasource} variable, a datasource variable for Prometheus, the job_id,
//    host and comm variables from label_values(), every $variable used defined,
//    overrides naming existing refIds.
// usage: node check_dashboard.js DASHBOARD.json   (exit 0 pass, 1 fail, 77 skip)
'use strict';
const fs = require('fs');
const path = require('path');

const here = __dirname;
const schemaPkg = path.join(here, 'node_modules/@grafana/schema');
if (!fs.existsSync(schemaPkg) || !fs.existsSync(path.join(here, 'node_modules/ts-json-schema-generator'))) {
  console.log('SKIP: @grafana/schema is not installed (cd tests/ops && npm ci; .ci/deps.sh --ci does it)');
  process.exit(77);
}
const tsj = require('ts-json-schema-generator');
const Ajv = require('ajv');

const dashPath = process.argv[2];
const dash = JSON.parse(fs.readFileSync(dashPath, 'utf8'));
const failures = [];
const fail = (msg) => failures.push(msg);
const raw = path.join(schemaPkg, 'dist/types/raw');

function schemaOf(file, type) {
  return tsj.createGenerator({path: file, type, skipTypeCheck: true, expose: 'all', topRef: true,
                              tsconfig: path.join(here, 'tsconfig.json')}).createSchema(type);
}
const ajv = new Ajv({allErrors: true, strict: false});
function validate(schema, value, where) {
  const ok = ajv.validate(schema, value);
  if (!ok) {
    for (const e of ajv.errors) fail(`${where}${e.instancePath}: ${e.message} ${JSON.stringify(e.params)}`);
  }
  return ok;
}

// 1. the dashboard model
const dashSchema = schemaOf(path.join(raw, 'dashboard/x/types.gen.d.ts'), 'Dashboard');
validate(dashSchema, dash, 'dashboard');

// 2. each panel plugin's options and field config
const panelSchemas = {};
const panelTypeDir = {timeseries: 'timeseries', stat: 'stat', table: 'table', bargauge: 'bargauge', gauge: 'gauge',
                      text: 'text', heatmap: 'heatmap', statetimeline: 'statetimeline'};
function panelSchema(type) {
  if (!(type in panelSchemas)) {
    const file = path.join(raw, `composable/${panelTypeDir[type]}/panelcfg/x/types.gen.d.ts`);
    if (!panelTypeDir[type] || !fs.existsSync(file)) {
      panelSchemas[type] = null;
    } else {
      const text = fs.readFileSync(file, 'utf8');
      panelSchemas[type] = {options: schemaOf(file, 'Options'),
                            custom: /export interface FieldConfig\b/.test(text) ? schemaOf(file, 'FieldConfig') : null};
    }
  }
  return panelSchemas[type];
}
const targetSchema = schemaOf(path.join(here, 'prometheus_target.ts'), 'PrometheusTarget');

// 3. structure
const DS = {type: 'prometheus', uid: '${datasource}'};
const sameDs = (d) => d && d.type === DS.type && d.uid === DS.uid;
const vars = (dash.templating && dash.templating.list) || [];
const varNames = new Set(vars.map((v) => v.name));
const builtin = new Set(['__rate_interval', '__interval', '__range', '__interval_ms', '__range_s', '__range_ms']);
const dsVar = vars.find((v) => v.name === 'datasource');
if (!dsVar || dsVar.type !== 'datasource' || dsVar.query !== 'prometheus') fail('no datasource variable of type prometheus');
for (const name of ['job_id', 'host', 'comm']) {
  const v = vars.find((x) => x.name === name);
  const q = v && (typeof v.query === 'string' ? v.query : v.query && v.query.query);
  if (!v || v.type !== 'query' || !sameDs(v.datasource) || !new RegExp(`^label_values\\(.*, ${name}\\)$`).test(q || '')) {
    fail(`variable ${name}: a query variable label_values(..., ${name}) on \${datasource}, got ${JSON.stringify(v)}`);
  } else if (!v.includeAll || v.allValue !== '.*') {
    fail(`variable ${name}: "All" must be .* (series without the label match it)`);
  }
  for (const m of (q || '').matchAll(/\$(\w+)/g)) if (!varNames.has(m[1])) fail(`variable ${name} uses undefined $${m[1]}`);
}
const ids = new Set();
const boxes = [];
const panels = dash.panels || [];
if (panels.length === 0) fail('no panels');
for (const p of panels) {
  const where = `panel ${p.id} "${p.title}"`;
  if (typeof p.id !== 'number' || ids.has(p.id)) fail(`${where}: id missing or not unique`);
  ids.add(p.id);
  if (!p.title) fail(`${where}: no title`);
  if (!p.description) fail(`${where}: no description`);
  const g = p.gridPos || {};
  if (![g.x, g.y, g.w, g.h].every(Number.isInteger) || g.x < 0 || g.y < 0 || g.w < 1 || g.h < 1 || g.x + g.w > 24) {
    fail(`${where}: gridPos ${JSON.stringify(g)} outside the 24 columns`);
  }
  for (const b of boxes) {
    if (g.x < b.x + b.w && b.x < g.x + g.w && g.y < b.y + b.h && b.y < g.y + g.h) fail(`${where} overlaps panel ${b.id}`);
  }
  boxes.push({...g, id: p.id});
  if (!sameDs(p.datasource)) fail(`${where}: datasource ${JSON.stringify(p.datasource)}, not \${datasource}`);
  const ps = panelSchema(p.type);
  if (!ps) {
    fail(`${where}: panel type ${p.type} has no panelcfg types in @grafana/schema here`);
  } else {
    validate(ps.options, p.options || {}, `${where} options`);
    if (ps.custom && p.fieldConfig && p.fieldConfig.defaults.custom) {
      validate(ps.custom, p.fieldConfig.defaults.custom, `${where} fieldConfig.defaults.custom`);
    }
  }
  const refs = new Set();
  if (!Array.isArray(p.targets) || p.targets.length === 0) fail(`${where}: no targets`);
  for (const t of p.targets || []) {
    validate(targetSchema, t, `${where} target ${t.refId}`);
    if (refs.has(t.refId)) fail(`${where}: refId ${t.refId} twice`);
    refs.add(t.refId);
    if (!sameDs(t.datasource)) fail(`${where} target ${t.refId}: datasource not \${datasource}`);
    if (!t.expr || !t.expr.trim()) fail(`${where} target ${t.refId}: empty expr`);
    for (const m of (t.expr || '').matchAll(/\$\{?(\w+)/g)) {
      if (!varNames.has(m[1]) && !builtin.has(m[1])) fail(`${where} target ${t.refId}: undefined variable $${m[1]}`);
    }
    for (const m of (t.expr || '').matchAll(/(\w+)=~"\$(\w+)"/g)) {
      if (m[1] !== m[2]) fail(`${where} target ${t.refId}: label ${m[1]} filtered by $${m[2]}`);
    }
  }
  for (const o of (p.fieldConfig && p.fieldConfig.overrides) || []) {
    if (o.matcher.id === 'byFrameRefID' && !refs.has(o.matcher.options)) {
      fail(`${where}: override for refId ${o.matcher.options}, which no target has`);
    }
  }
}
for (const f of failures) console.log('FAIL: ' + f);
if (failures.length) process.exit(1);
console.log(`dashboard: valid against @grafana/schema ${require(path.join(schemaPkg, 'package.json')).version} ` +
            `(Dashboard, ${Object.keys(panelSchemas).join('/')} panel options, PrometheusTarget); ${panels.length} ` +
            `panels, ${panels.reduce((n, p) => n + p.targets.length, 0)} targets, ${vars.length} variables`);
