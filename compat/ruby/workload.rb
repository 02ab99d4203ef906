# The compat workload through the AWS SDK for Ruby v1 (Debian's ruby-aws-sdk), unmodified:
# its AWS::SQS::Client speaks the query protocol. Debian packages no v3 SQS client.
# This SDK predates FIFO queues and message move tasks: the FIFO step checks that a send
# without a group id is refused with the SDK's own error class, and the redrive step
# moves the dead letter back by hand, as its users did (both printed as gaps). MD5s are
# checked here: the low-level client does not check them.
#
#   ruby workload.rb --endpoint URL --prefix NAME

require "aws-sdk"
require "digest/md5"
require "json"
require "optparse"
require "uri"

BODY = "hopper compat ✓"
ATTRIBUTES = {
  "colour" => { data_type: "String", string_value: "blue" },
  "count" => { data_type: "Number", string_value: "42" },
  "blob" => { data_type: "Binary", binary_value: "\x00\x01\xfe\xff".b },
}.freeze

class CheckFailed < StandardError; end

def expect(condition, why)
  raise CheckFailed, why unless condition
end

def step(name)
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  result = yield
  puts format("ok %s %.2f", name, Process.clock_gettime(Process::CLOCK_MONOTONIC) - started)
  result
rescue StandardError => e
  warn e.full_message
  puts "FAIL #{name}: #{e.class}: #{e.message}"
  exit 1
end

def gap(name, why)
  puts "gap #{name}: #{why}"
end

# SQS's MD5OfMessageAttributes: names sorted; each name, type and value length-prefixed,
# with a transport byte (1 string, 2 binary) before the value.
def md5_of_attributes(attributes)
  prefixed = ->(data) { [data.bytesize].pack("N") + data.b }
  Digest::MD5.hexdigest(attributes.keys.sort.map do |name|
    value = attributes[name]
    head = prefixed.(name) + prefixed.(value[:data_type])
    if value.key?(:binary_value)
      head + "\x02".b + prefixed.(value[:binary_value])
    else
      head + "\x01".b + prefixed.(value[:string_value])
    end
  end.join)
end

def plain(attributes)
  attributes.transform_values { |v| [v[:data_type], v[:string_value] || v[:binary_value]] }
end

def one(sqs, **params)
  messages = sqs.receive_message(**params)[:messages]
  expect(messages.size == 1, "expected one message, got #{messages.size}")
  messages.first
end

def arn(sqs, url)
  sqs.get_queue_attributes(queue_url: url, attribute_names: ["QueueArn"])[:attributes]["QueueArn"]
end

def batch(sqs, url)
  entries = (0..2).map { |n| { id: "m#{n}", message_body: "batch #{n}" } }
  entries << { id: "attributed", message_body: "batch a", message_attributes: ATTRIBUTES }
  sent = sqs.send_message_batch(queue_url: url, entries: entries)
  expect(sent[:successful].size == 4 && sent[:failed].empty?, "sent: #{sent.data}")
  sent[:successful].each do |result|
    entry = entries.find { |e| e[:id] == result[:id] }
    expect(result[:md5_of_message_body] == Digest::MD5.hexdigest(entry[:message_body]), "batch MD5")
  end
  received = {}
  10.times do
    break if received.size >= 4

    answer = sqs.receive_message(queue_url: url, max_number_of_messages: 10, wait_time_seconds: 2)
    answer[:messages].each { |m| received[m[:message_id]] = m }
  end
  expect(received.size == 4, "received #{received.size} of 4")
  receipts = received.values.each_with_index.map { |m, n| { id: "r#{n}", receipt_handle: m[:receipt_handle] } }
  changed = sqs.change_message_visibility_batch(
    queue_url: url, entries: receipts.map { |r| r.merge(visibility_timeout: 60) })
  expect(changed[:successful].size == 4 && changed[:failed].empty?, "changed: #{changed.data}")
  deleted = sqs.delete_message_batch(queue_url: url, entries: receipts)
  expect(deleted[:successful].size == 4 && deleted[:failed].empty?, "deleted: #{deleted.data}")
end

options = {}
OptionParser.new do |parser|
  parser.on("--endpoint URL") { |v| options[:endpoint] = URI(v) }
  parser.on("--prefix NAME") { |v| options[:prefix] = v }
end.parse!
endpoint, prefix = options.values_at(:endpoint, :prefix)
# No retries: a failure is a finding.
sqs = AWS::SQS::Client.new(
  access_key_id: "test", secret_access_key: "test", region: "us-east-1", max_retries: 0,
  sqs_endpoint: endpoint.host, sqs_port: endpoint.port, use_ssl: endpoint.scheme == "https")
$stdout.sync = true
puts "client ruby-sdk-v1 aws-sdk #{AWS::VERSION} query"

url = step("create_queue") do
  url = sqs.create_queue(queue_name: "#{prefix}-jobs", attributes: { "VisibilityTimeout" => "30" })[:queue_url]
  expect(sqs.get_queue_url(queue_name: "#{prefix}-jobs")[:queue_url] == url, "GetQueueUrl")
  listed = sqs.list_queues(queue_name_prefix: prefix)[:queue_urls]
  expect(listed.include?(url), "ListQueues gave #{listed}")
  url
end

sent = step("send_with_attributes") do
  # delayed, so that the long poll below has to wait for it
  sent = sqs.send_message(queue_url: url, message_body: BODY, message_attributes: ATTRIBUTES,
                          delay_seconds: 1)
  expect(sent[:md5_of_message_body] == Digest::MD5.hexdigest(BODY), "MD5OfMessageBody")
  expect(sent[:md5_of_message_attributes] == md5_of_attributes(ATTRIBUTES), "MD5OfMessageAttributes")
  sent
end

got = step("long_poll_receive") do
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  got = one(sqs, queue_url: url, wait_time_seconds: 20, message_attribute_names: ["All"],
                 attribute_names: ["All"])
  waited = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
  expect(waited > 0.3 && waited < 10, "the long poll took #{waited}s for a 1 s delay")
  expect(got[:message_id] == sent[:message_id], "the message received is the one sent")
  expect(got[:body] == BODY && got[:md5_of_body] == Digest::MD5.hexdigest(BODY), "body and MD5")
  expect(got[:md5_of_message_attributes] == md5_of_attributes(ATTRIBUTES), "attribute MD5")
  expect(plain(got[:message_attributes]) == plain(ATTRIBUTES),
         "attributes came back as #{got[:message_attributes]}")
  expect(got[:attributes]["ApproximateReceiveCount"] == "1", "first receive")
  got
end

again = step("change_visibility") do
  sqs.change_message_visibility(queue_url: url, receipt_handle: got[:receipt_handle],
                                visibility_timeout: 0)
  again = one(sqs, queue_url: url, wait_time_seconds: 5, attribute_names: ["ApproximateReceiveCount"])
  expect(again[:message_id] == got[:message_id], "released message received again")
  expect(again[:attributes]["ApproximateReceiveCount"] == "2", "second receive")
  again
end

step("delete") do
  sqs.delete_message(queue_url: url, receipt_handle: again[:receipt_handle])
  counts = sqs.get_queue_attributes(queue_url: url, attribute_names: %w[
    ApproximateNumberOfMessages ApproximateNumberOfMessagesNotVisible])[:attributes]
  expect(counts.values.uniq == ["0"], "left: #{counts}")
end

step("batch") { batch(sqs, url) }

dead, source = step("dead_letter") do
  dead = sqs.create_queue(queue_name: "#{prefix}-dead")[:queue_url]
  policy = JSON.generate(deadLetterTargetArn: arn(sqs, dead), maxReceiveCount: 1)
  source = sqs.create_queue(queue_name: "#{prefix}-work",
                            attributes: { "RedrivePolicy" => policy })[:queue_url]
  poison = sqs.send_message(queue_url: source, message_body: "poison")
  one(sqs, queue_url: source, visibility_timeout: 0, wait_time_seconds: 5)
  none = sqs.receive_message(queue_url: source, wait_time_seconds: 1)[:messages]
  expect(none.empty?, "a message past maxReceiveCount is not delivered again")
  moved = one(sqs, queue_url: dead, wait_time_seconds: 5, visibility_timeout: 0,
                   attribute_names: ["All"])
  expect(moved[:message_id] == poison[:message_id], "the dead letter keeps its id")
  expect(moved[:attributes]["DeadLetterQueueSourceArn"] == arn(sqs, source), "DeadLetterQueueSourceArn")
  sources = sqs.list_dead_letter_source_queues(queue_url: dead)[:queue_urls]
  expect(sources == [source], "ListDeadLetterSourceQueues gave #{sources}")
  [dead, source]
end

gap("redrive", "this SDK has no StartMessageMoveTask; the dead letter is moved back by hand")
step("redrive_by_hand") do
  letter = one(sqs, queue_url: dead, wait_time_seconds: 5)
  sqs.send_message(queue_url: source, message_body: letter[:body])
  sqs.delete_message(queue_url: dead, receipt_handle: letter[:receipt_handle])
  back = one(sqs, queue_url: source, wait_time_seconds: 10)
  expect(back[:body] == "poison", "the dead letter is back in its source queue")
  sqs.delete_message(queue_url: source, receipt_handle: back[:receipt_handle])
end

gap("fifo", "this SDK has no MessageGroupId; a FIFO queue refuses its sends")
step("fifo_refused") do
  fifo = sqs.create_queue(queue_name: "#{prefix}-orders.fifo",
                          attributes: { "FifoQueue" => "true" })[:queue_url]
  begin
    sqs.send_message(queue_url: fifo, message_body: "order 0")
    expect(false, "a FIFO queue took a send without MessageGroupId")
  rescue AWS::SQS::Errors::MissingParameter => e
    expect(e.message.include?("MessageGroupId"), "the refusal names MessageGroupId: #{e.message}")
  end
  sqs.delete_queue(queue_url: fifo)
end

# SNS through the same SDK's AWS::SNS::Client (query protocol, signed for `sns`): a topic
# fanned out to a raw queue with a filter policy, the publish it must and must not get.
step("sns_fan_out") do
  sns = AWS::SNS::Client.new(
    access_key_id: "test", secret_access_key: "test", region: "us-east-1", max_retries: 0,
    sns_endpoint: endpoint.host, sns_port: endpoint.port, use_ssl: endpoint.scheme == "https")
  topic = sns.create_topic(name: "#{prefix}-events")[:topic_arn]
  raw = sqs.create_queue(queue_name: "#{prefix}-raw")[:queue_url]
  sub = sns.subscribe(topic_arn: topic, protocol: "sqs", endpoint: arn(sqs, raw))
  sns.set_subscription_attributes(subscription_arn: sub[:subscription_arn],
                                  attribute_name: "RawMessageDelivery", attribute_value: "true")
  sns.set_subscription_attributes(subscription_arn: sub[:subscription_arn],
                                  attribute_name: "FilterPolicy",
                                  attribute_value: JSON.generate(kind: ["order"]))
  %w[order refund].each do |kind|
    sns.publish(topic_arn: topic, message: "a #{kind}", message_attributes: {
      "kind" => { data_type: "String", string_value: kind } })
  end
  got = one(sqs, queue_url: raw, wait_time_seconds: 5)
  expect(got[:body] == "a order", "raw body #{got[:body]}")
  sns.delete_topic(topic_arn: topic)
  sqs.delete_queue(queue_url: raw)
end

step("delete_queues") do
  [url, source, dead].each { |queue| sqs.delete_queue(queue_url: queue) }
  left = sqs.list_queues(queue_name_prefix: "#{prefix}-jobs")[:queue_urls]
  expect(left.empty?, "still listed: #{left}")
end

puts "done"
