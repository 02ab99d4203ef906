// What the Node workloads share: named steps and checks, printed as the Python
// workloads print them (`client ...`, `ok <step> <seconds>`, `FAIL <step>: ...`, `done`).

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import * as sqs from "@aws-sdk/client-sqs";
import * as sns from "@aws-sdk/client-sns";

export function announce(client, version, protocol) {
  console.log(`client ${client} ${version} ${protocol}`);
}

export function expect(condition, why) {
  if (!condition) throw new Error(`check failed: ${why}`);
}

export async function step(name, body) {
  const started = process.hrtime.bigint();
  let result;
  try {
    result = await body();
  } catch (failure) {
    console.error(failure);
    console.log(`FAIL ${name}: ${failure.name}: ${failure.message}`);
    process.exit(1);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  console.log(`ok ${name} ${seconds.toFixed(2)}`);
  return result;
}

export function done() {
  console.log("done");
}

export function options() {
  const args = Object.fromEntries(
    process.argv.slice(2).reduce((pairs, arg, i, all) =>
      arg.startsWith("--") ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs, []));
  if (!args.endpoint || !args.prefix) throw new Error("usage: --endpoint URL --prefix NAME");
  return args;
}

// SQS's MD5OfMessageAttributes (the SDK checks only body MD5s): names sorted; each name,
// type and value length-prefixed, a transport byte (1 string, 2 binary) before the value.
export function md5OfAttributes(attributes) {
  const hash = createHash("md5");
  const prefixed = (bytes) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    hash.update(length);
    hash.update(bytes);
  };
  for (const name of Object.keys(attributes).sort()) {
    const { DataType, StringValue, BinaryValue } = attributes[name];
    prefixed(Buffer.from(name, "utf8"));
    prefixed(Buffer.from(DataType, "utf8"));
    if (BinaryValue !== undefined) {
      hash.update(Buffer.from([2]));
      prefixed(Buffer.from(BinaryValue));
    } else {
      hash.update(Buffer.from([1]));
      prefixed(Buffer.from(StringValue, "utf8"));
    }
  }
  return hash.digest("hex");
}

// One SQS client for a workload (no retries: a failure is a finding), and `call`, which
// sends the command of that name.
export function sqsClient(endpoint) {
  const client = new sqs.SQSClient({
    endpoint, region: "us-east-1", maxAttempts: 1,
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  });
  const call = (name, input) => client.send(new sqs[`${name}Command`](input));
  return { client, call };
}

// An @aws-sdk/client-sns v3 client for the same endpoint (SNS speaks the query protocol).
export function snsClient(endpoint) {
  const client = new sns.SNSClient({
    endpoint, region: "us-east-1", maxAttempts: 1,
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  });
  return (name, input) => client.send(new sns[`${name}Command`](input));
}

// The installed version of an npm package of compat/node.
export function packageVersion(name) {
  return JSON.parse(readFileSync(
    new URL(`./node_modules/${name}/package.json`, import.meta.url))).version;
}
