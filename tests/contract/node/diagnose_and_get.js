#!/usr/bin/env node
// A non-Python client of diagnosis.v1, built only from the .proto files: runs Diagnose to its final run, then
// GetRun on that run id, and prints a JSON summary on stdout (exit 0), or the error as JSON on stderr (exit 1).
//
// Usage: node diagnose_and_get.js TARGET PROTO_DIR QUESTION [SCENARIO]
// A bearer token is sent when DIAGNOSIS_TOKEN is set.
'use strict';

const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const DEADLINE_MS = 30000;
const PROTOS = [
  'diagnosis/v1/contracts.proto',
  'diagnosis/v1/run.proto',
  'diagnosis/v1/diagnosis_service.proto',
  'diagnosis/v1/gatekeeper_service.proto',
];

function loadServices(protoDir) {
  // google/protobuf/*.proto (Timestamp, Struct, ...) come with proto-loader.
  const definition = protoLoader.loadSync(PROTOS, {
    includeDirs: [protoDir],
    keepCase: true, // snake_case field names, as in the .proto
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true, // each oneof shows as a field naming the member that is set (e.g. kind: "event")
  });
  return grpc.loadPackageDefinition(definition).diagnosis.v1;
}

function callOptions() {
  return { deadline: new Date(Date.now() + DEADLINE_MS) };
}

function metadata() {
  const md = new grpc.Metadata();
  if (process.env.DIAGNOSIS_TOKEN) {
    md.set('authorization', `Bearer ${process.env.DIAGNOSIS_TOKEN}`);
  }
  return md;
}

function diagnose(client, question, scenario) {
  return new Promise((resolve, reject) => {
    const messages = [];
    const call = client.Diagnose({ question, context: { scenario } }, metadata(), callOptions());
    call.on('data', (message) => messages.push(message));
    call.on('error', reject);
    call.on('end', () => resolve(messages));
  });
}

function getRun(client, runId) {
  return new Promise((resolve, reject) => {
    client.GetRun({ run_id: runId }, metadata(), callOptions(), (error, response) =>
      error ? reject(error) : resolve(response),
    );
  });
}

async function main() {
  const [target, protoDir, question, scenario = ''] = process.argv.slice(2);
  if (!target || !protoDir || question === undefined) {
    throw new Error('usage: node diagnose_and_get.js TARGET PROTO_DIR QUESTION [SCENARIO]');
  }
  const v1 = loadServices(protoDir);
  const client = new v1.DiagnosisService(target, grpc.credentials.createInsecure());
  try {
    const messages = await diagnose(client, question, scenario);
    const kinds = messages.map((m) => m.kind);
    const first = messages[0] || {};
    const last = messages[messages.length - 1] || {};
    const finalRun = last.kind === 'run' ? last.run : null;
    const runId = finalRun ? finalRun.run_id : '';
    const stored = runId ? (await getRun(client, runId)).run : null;
    const summary = {
      message_count: messages.length,
      kinds,
      message_run_ids: [...new Set(messages.map((m) => m.run_id))],
      started_run_id: first.kind === 'started' ? first.started.run_id : null,
      event_sequences: messages.filter((m) => m.kind === 'event').map((m) => Number(m.event.sequence)),
      final_run_id: runId,
      final_status: finalRun ? finalRun.status : null,
      final_scenario: finalRun ? finalRun.scenario : null,
      get_run_id: stored ? stored.run_id : null,
      get_run_status: stored ? stored.status : null,
      get_run_verdict: stored ? stored.verdict : null,
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    client.close();
  }
}

main().catch((error) => {
  const code = error && error.code !== undefined ? grpc.status[error.code] || error.code : null;
  process.stderr.write(`${JSON.stringify({ error: String((error && error.details) || error), code })}\n`);
  process.exit(1);
});
