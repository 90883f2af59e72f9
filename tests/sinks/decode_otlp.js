#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// tests/sinks: decodes one OTLP protobuf payload and one OTLP JSON payload
// with the decoder @opentelemetry/otlp-transformer generates from the
// official opentelemetry-proto files (as otlp_receiver.js does), and prints
// {"proto": ..., "json": ...} as toObject({longs: String, enums: Number}).
// Fails when the protobuf holds a field the schema does not know (its
// re-encoding is shorter) or when the JSON does not read back as itself.
//
// usage: node decode_otlp.js PAYLOAD.pb PAYLOAD.json
'use strict';
const fs = require('fs');

const {Req, asObject, canonical} = require('./otlp_schema.js');

const raw = fs.readFileSync(process.argv[2]);
const msg = Req.decode(raw);
const again = Req.encode(msg).finish().length;
if (again !== raw.length) throw new Error(`protobuf: re-encoded ${again} bytes of ${raw.length}: fields the schema does not know`);
const json = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
const back = Req.toObject(Req.fromObject(json), asObject);
if (JSON.stringify(canonical(json)) !== JSON.stringify(canonical(back))) throw new Error('json: not what the schema reads back');
console.log(JSON.stringify({proto: Req.toObject(msg, asObject), json: back}));
