#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// tests/sinks: a small OTLP/HTTP metrics receiver on 127.0.0.1 for check_sinks.py.
//
// Every payload is decoded by the decoder that @opentelemetry/otlp-transformer
// generates from the official opentelemetry-proto files (a protobufjs static
// module, build/src/generated/root.js), never by code of ours:
//   http/protobuf: ExportMetricsServiceRequest.decode, and the decoded message
//     encoded again must have the payload's length (a field the schema does not
//     know would be skipped by decode and missing from the re-encoding);
//   http/json: ExportMetricsServiceRequest.fromObject, then toObject must give
//     back exactly the JSON received (an unknown or misspelt field would be lost).
// Writes one JSON line per request to --out: {path, headers, bytes, decoded},
// decoded as toObject({longs: String, enums: Number}).
//
// usage: node otlp_receiver.js --out FILE [--mode ok|status:N|hang|reset]
// Prints {"port": N} on stdout once listening. Stops on SIGTERM.
'use strict';
const http = require('http');
const fs = require('fs');
const zlib = require('zlib');

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const out = opt('--out');
const mode = opt('--mode', 'ok');
const {Req, Resp, asObject, canonical} = require('./otlp_schema.js');

function decode(req, body) {
  let raw = body;
  if (req.headers['content-encoding'] === 'gzip') raw = zlib.gunzipSync(body);
  const type = req.headers['content-type'] || '';
  if (type === 'application/x-protobuf') {
    const msg = Req.decode(raw);
    const again = Req.encode(msg).finish().length;
    if (again !== raw.length) throw new Error(`protobuf: re-encoded ${again} bytes of ${raw.length}: fields the schema does not know`);
    return {raw, decoded: Req.toObject(msg, asObject)};
  }
  if (type === 'application/json') {
    const json = JSON.parse(raw.toString('utf8'));
    const back = Req.toObject(Req.fromObject(json), asObject);
    const a = JSON.stringify(canonical(json)), b = JSON.stringify(canonical(back));
    if (a !== b) {
      let i = 0;
      while (i < a.length && a[i] === b[i]) i++;
      throw new Error(`json: not what the schema reads back, from byte ${i}:\n${a.slice(i - 150, i + 150)}\n${b.slice(i - 150, i + 150)}`);
    }
    return {raw, decoded: back};
  }
  throw new Error(`unexpected Content-Type ${type}`);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const line = {path: req.url, method: req.method, headers: req.headers, bytes: body.length, mode};
    if (mode === 'hang') {  // never answers; the client's timeout ends it
      fs.appendFileSync(out, JSON.stringify(line) + '\n');
      return;
    }
    if (mode === 'reset') {
      fs.appendFileSync(out, JSON.stringify(line) + '\n');
      req.socket.destroy();
      return;
    }
    try {
      const d = decode(req, body);
      line.decodedBytes = d.raw.length;
      line.decoded = d.decoded;
    } catch (e) {
      line.error = String(e.message || e);
    }
    fs.appendFileSync(out, JSON.stringify(line) + '\n');
    const status = mode.startsWith('status:') ? Number(mode.slice(7)) : line.error ? 400 : 200;
    const json = (req.headers['content-type'] || '') === 'application/json';
    res.writeHead(status, {'Content-Type': json ? 'application/json' : 'application/x-protobuf'});
    res.end(json ? '{}' : Buffer.from(Resp.encode(Resp.create({})).finish()));
  });
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({port: server.address().port})));
process.on('SIGTERM', () => process.exit(0));
