// The compat workload through sqs-consumer, unmodified: a Consumer long-polls a
// queue, handles messages in batches, deletes what it handled, and releases a failed
// message (ChangeMessageVisibility to 0) so that it comes back and succeeds.
//
//   node consumer.mjs --endpoint URL --prefix NAME

import { Consumer } from "sqs-consumer";
import { announce, done, expect, options, packageVersion, sqsClient, step } from "./steps.mjs";

const { endpoint, prefix } = options();
const { client, call } = sqsClient(endpoint);
const version = packageVersion("sqs-consumer");
const COUNT = 12;
const TIMEOUT_MS = 60_000;

announce("sqs-consumer", `sqs-consumer ${version}`, "json");

const url = await step("create_queue", async () =>
  (await call("CreateQueue", { QueueName: `${prefix}-events` })).QueueUrl);

await step("send_batches", async () => {
  for (const start of [0, 10]) {
    const entries = [];
    for (let n = start; n < Math.min(start + 10, COUNT); n++) {
      entries.push({ Id: `e${n}`, MessageBody: n === 3 ? "fail-once" : `event ${n}`,
        MessageAttributes: { n: { DataType: "Number", StringValue: String(n) } } });
    }
    const sent = await call("SendMessageBatch", { QueueUrl: url, Entries: entries });
    expect(sent.Successful.length === entries.length, JSON.stringify(sent));
  }
});

const handled = await step("consume", () => new Promise((resolve, reject) => {
  const seen = new Map();
  let failed = false;
  const consumer = Consumer.create({
    queueUrl: url, sqs: client, batchSize: 10, waitTimeSeconds: 2, visibilityTimeout: 30,
    messageAttributeNames: ["All"], terminateVisibilityTimeout: true,
    handleMessage: async (message) => {
      if (message.Body === "fail-once" && !failed) {
        failed = true;
        throw new Error("first attempt fails");
      }
      seen.set(message.MessageAttributes.n.StringValue, message.Body);
      return message;
    },
  });
  let processed = 0; // emitted once the message is deleted
  consumer.on("message_processed", () => {
    if (++processed === COUNT) {
      consumer.once("stopped", () => resolve(seen));
      consumer.stop();
    }
  });
  consumer.on("error", (err) => reject(err));
  consumer.on("processing_error", () => {}); // the planned first failure
  setTimeout(() => reject(new Error(`handled ${seen.size} of ${COUNT}`)), TIMEOUT_MS).unref();
  consumer.start();
}));

await step("all_handled_once_and_deleted", async () => {
  expect(handled.size === COUNT, `handled ${handled.size}`);
  expect(handled.get("3") === "fail-once", "the failed message came back and was handled");
  const { Attributes } = await call("GetQueueAttributes", { QueueUrl: url, AttributeNames: [
    "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"] });
  expect(Object.values(Attributes).every((v) => v === "0"), JSON.stringify(Attributes));
  await call("DeleteQueue", { QueueUrl: url });
});

done();
