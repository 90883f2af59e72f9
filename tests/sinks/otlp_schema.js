// SPDX-License-Identifier: Apache-2.0
// The OTLP metrics schema as the official opentelemetry-proto decoder reads
// it (npm @opentelemetry/otlp-transformer's generated root), shared by the
// test receiver and the payload decoder.
'use strict';
const path = require('path');

const root = require(path.join(__dirname, 'node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js'));
const metrics = root.opentelemetry.proto.collector.metrics.v1;

// toObject options: 64-bit integers as strings, enums as numbers, no defaults.
const asObject = {longs: String, enums: Number, bytes: String, defaults: false};

function canonical(v) {  // key order does not matter in JSON
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = canonical(v[k]);
    return o;
  }
  return v;
}

module.exports = {
  Req: metrics.ExportMetricsServiceRequest,
  Resp: metrics.ExportMetricsServiceResponse,
  asObject,
  canonical,
};
