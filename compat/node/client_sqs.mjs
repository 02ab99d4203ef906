// The compat workload through @aws-sdk/client-sqs v3, unmodified. Its default MD5
// checks are on: the body MD5s of every SendMessage, SendMessageBatch and ReceiveMessage
// answer are verified by the SDK, which throws on a mismatch; the attribute MD5s are
// checked here.
//
//   node client_sqs.mjs --endpoint URL --prefix NAME

import {
  announce, done, expect, md5OfAttributes, options, packageVersion, snsClient, sqsClient, step,
} from "./steps.mjs";

const { endpoint, prefix } = options();
const { call } = sqsClient(endpoint);
const version = packageVersion("@aws-sdk/client-sqs");
const BODY = "hopper compat ✓";
const ATTRIBUTES = {
  colour: { DataType: "String", StringValue: "blue" },
  count: { DataType: "Number", StringValue: "42" },
  blob: { DataType: "Binary", BinaryValue: new Uint8Array([0, 1, 254, 255]) },
};

async function one(input) {
  const { Messages = [] } = await call("ReceiveMessage", input);
  expect(Messages.length === 1, `expected one message, got ${Messages.length}`);
  return Messages[0];
}

async function arn(QueueUrl) {
  const { Attributes } = await call("GetQueueAttributes", { QueueUrl, AttributeNames: ["QueueArn"] });
  return Attributes.QueueArn;
}

announce("client-sqs", `@aws-sdk/client-sqs ${version}`, "json");

const url = await step("create_queue", async () => {
  const { QueueUrl } = await call("CreateQueue", {
    QueueName: `${prefix}-jobs`, Attributes: { VisibilityTimeout: "30" } });
  const found = await call("GetQueueUrl", { QueueName: `${prefix}-jobs` });
  expect(found.QueueUrl === QueueUrl, "GetQueueUrl");
  const { QueueUrls = [] } = await call("ListQueues", { QueueNamePrefix: prefix });
  expect(QueueUrls.includes(QueueUrl), `ListQueues gave ${QueueUrls}`);
  return QueueUrl;
});

const sent = await step("send_with_attributes", async () => {
  const answer = await call("SendMessage", {
    QueueUrl: url, MessageBody: BODY, MessageAttributes: ATTRIBUTES, DelaySeconds: 1 });
  expect(answer.MD5OfMessageAttributes === md5OfAttributes(ATTRIBUTES), "attribute MD5");
  return answer;
});

const got = await step("long_poll_receive", async () => {
  const started = Date.now();
  const message = await one({ QueueUrl: url, WaitTimeSeconds: 20, MessageAttributeNames: ["All"],
    MessageSystemAttributeNames: ["All"] });
  const waited = (Date.now() - started) / 1000;
  expect(waited > 0.3 && waited < 10, `the long poll took ${waited}s for a 1 s delay`);
  expect(message.MessageId === sent.MessageId && message.Body === BODY, "the message sent");
  expect(message.MD5OfMessageAttributes === md5OfAttributes(ATTRIBUTES), "attribute MD5");
  expect(message.MessageAttributes.count.StringValue === "42", "Number attribute");
  expect(Buffer.from(message.MessageAttributes.blob.BinaryValue).equals(
    Buffer.from([0, 1, 254, 255])), "Binary attribute");
  expect(message.Attributes.ApproximateReceiveCount === "1", "first receive");
  return message;
});

const again = await step("change_visibility", async () => {
  await call("ChangeMessageVisibility", {
    QueueUrl: url, ReceiptHandle: got.ReceiptHandle, VisibilityTimeout: 0 });
  const message = await one({ QueueUrl: url, WaitTimeSeconds: 5,
    MessageSystemAttributeNames: ["ApproximateReceiveCount"] });
  expect(message.MessageId === got.MessageId, "released message received again");
  expect(message.Attributes.ApproximateReceiveCount === "2", "second receive");
  return message;
});

await step("delete", async () => {
  await call("DeleteMessage", { QueueUrl: url, ReceiptHandle: again.ReceiptHandle });
  const { Attributes } = await call("GetQueueAttributes", { QueueUrl: url, AttributeNames: [
    "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"] });
  expect(Object.values(Attributes).every((v) => v === "0"), JSON.stringify(Attributes));
});

await step("batch", async () => {
  const entries = [0, 1, 2].map((n) => ({ Id: `m${n}`, MessageBody: `batch ${n}` }));
  entries.push({ Id: "attributed", MessageBody: "batch a", MessageAttributes: ATTRIBUTES });
  const batch = await call("SendMessageBatch", { QueueUrl: url, Entries: entries });
  expect(batch.Successful.length === 4 && !(batch.Failed || []).length, JSON.stringify(batch));
  const received = new Map();
  for (let i = 0; i < 10 && received.size < 4; i++) {
    const { Messages = [] } = await call("ReceiveMessage", {
      QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 2, MessageAttributeNames: ["All"] });
    for (const m of Messages) received.set(m.MessageId, m);
  }
  expect(received.size === 4, `received ${received.size} of 4`);
  const receipts = [...received.values()].map((m, n) => ({ Id: `r${n}`, ReceiptHandle: m.ReceiptHandle }));
  const changed = await call("ChangeMessageVisibilityBatch", { QueueUrl: url,
    Entries: receipts.map((r) => ({ ...r, VisibilityTimeout: 60 })) });
  expect(changed.Successful.length === 4, JSON.stringify(changed));
  const deleted = await call("DeleteMessageBatch", { QueueUrl: url, Entries: receipts });
  expect(deleted.Successful.length === 4, JSON.stringify(deleted));
});

const { dead, deadArn, source, sourceArn } = await step("dead_letter", async () => {
  const dead = (await call("CreateQueue", { QueueName: `${prefix}-dead` })).QueueUrl;
  const deadArn = await arn(dead);
  const source = (await call("CreateQueue", { QueueName: `${prefix}-work`, Attributes: {
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadArn, maxReceiveCount: 1 }) } })).QueueUrl;
  const sourceArn = await arn(source);
  const poison = await call("SendMessage", { QueueUrl: source, MessageBody: "poison" });
  await one({ QueueUrl: source, VisibilityTimeout: 0, WaitTimeSeconds: 5 });
  const { Messages = [] } = await call("ReceiveMessage", { QueueUrl: source, WaitTimeSeconds: 1 });
  expect(Messages.length === 0, "a message past maxReceiveCount is not delivered again");
  const moved = await one({ QueueUrl: dead, WaitTimeSeconds: 5, VisibilityTimeout: 0,
    MessageSystemAttributeNames: ["All"] });
  expect(moved.MessageId === poison.MessageId, "the dead letter keeps its id");
  expect(moved.Attributes.DeadLetterQueueSourceArn === sourceArn, "DeadLetterQueueSourceArn");
  const { queueUrls } = await call("ListDeadLetterSourceQueues", { QueueUrl: dead });
  expect(queueUrls.length === 1 && queueUrls[0] === source, `sources ${queueUrls}`);
  return { dead, deadArn, source, sourceArn };
});

await step("redrive", async () => {
  const { TaskHandle } = await call("StartMessageMoveTask", { SourceArn: deadArn });
  expect(TaskHandle, "a task handle");
  const back = await one({ QueueUrl: source, WaitTimeSeconds: 10 });
  expect(back.Body === "poison", "the dead letter is back in its source queue");
  await call("DeleteMessage", { QueueUrl: source, ReceiptHandle: back.ReceiptHandle });
  const { Results = [] } = await call("ListMessageMoveTasks", { SourceArn: deadArn });
  expect(Results.length && ["RUNNING", "COMPLETED"].includes(Results[0].Status),
    JSON.stringify(Results));
});

await step("fifo", async () => {
  const fifo = (await call("CreateQueue", { QueueName: `${prefix}-orders.fifo`,
    Attributes: { FifoQueue: "true" } })).QueueUrl;
  const sends = [];
  for (const n of [0, 1, 2]) {
    sends.push(await call("SendMessage", { QueueUrl: fifo, MessageBody: `order ${n}`,
      MessageGroupId: "g", MessageDeduplicationId: `d${n}` }));
  }
  const numbers = sends.map((s) => BigInt(s.SequenceNumber));
  expect(numbers[0] < numbers[1] && numbers[1] < numbers[2], `sequence ${numbers}`);
  const duplicate = await call("SendMessage", { QueueUrl: fifo, MessageBody: "order 0 again",
    MessageGroupId: "g", MessageDeduplicationId: "d0" });
  expect(duplicate.MessageId === sends[0].MessageId, "a duplicate send names the first");
  const bodies = [];
  for (let i = 0; i < 6 && bodies.length < 3; i++) {
    const { Messages = [] } = await call("ReceiveMessage", { QueueUrl: fifo,
      MaxNumberOfMessages: 10, WaitTimeSeconds: 2, MessageSystemAttributeNames: ["MessageGroupId"] });
    for (const m of Messages) {
      expect(m.Attributes.MessageGroupId === "g", "MessageGroupId");
      bodies.push(m.Body);
      await call("DeleteMessage", { QueueUrl: fifo, ReceiptHandle: m.ReceiptHandle });
    }
  }
  expect(JSON.stringify(bodies) === JSON.stringify(["order 0", "order 1", "order 2"]),
    `received ${bodies}`);
  const { Messages = [] } = await call("ReceiveMessage", { QueueUrl: fifo, WaitTimeSeconds: 1 });
  expect(Messages.length === 0, "the duplicate was not delivered");
  await call("DeleteQueue", { QueueUrl: fifo });
});

// SNS through @aws-sdk/client-sns v3: a topic fanned out to a raw queue with a filter
// policy; the publish it must and must not get.
await step("sns_fan_out", async () => {
  const topics = snsClient(endpoint);
  const { TopicArn } = await topics("CreateTopic", { Name: `${prefix}-events` });
  const { QueueUrl } = await call("CreateQueue", { QueueName: `${prefix}-raw` });
  await topics("Subscribe", { TopicArn, Protocol: "sqs", Endpoint: await arn(QueueUrl),
    Attributes: { RawMessageDelivery: "true", FilterPolicy: '{"kind": ["order"]}' } });
  for (const kind of ["order", "refund"]) {
    await topics("Publish", { TopicArn, Message: `a ${kind}`,
      MessageAttributes: { kind: { DataType: "String", StringValue: kind } } });
  }
  const got = await one({ QueueUrl, WaitTimeSeconds: 5 });
  expect(got.Body === "a order", `raw body ${got.Body}`);
  await topics("DeleteTopic", { TopicArn });
  await call("DeleteQueue", { QueueUrl });
});

await step("delete_queues", async () => {
  for (const QueueUrl of [url, source, dead]) await call("DeleteQueue", { QueueUrl });
});

done();
