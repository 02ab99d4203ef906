// The compat workload through the AWS SDK for Go v2, unmodified: Debian's
// golang-github-aws-aws-sdk-go-v2-dev, built offline in GOPATH mode (compat/envs.py).
// Its service/sqs (1.19.x) speaks the query protocol and checks the body MD5s of every
// SendMessage, SendMessageBatch and ReceiveMessage answer itself; the attribute MD5s
// are checked here. It predates message move tasks, so the redrive step moves the dead
// letter back by hand, as that SDK's users did (printed as a gap). Its one change: an
// HTTP client that gives the transport its own copy of each request body (ownBodies),
// for a bug of that SDK's smithy-go, not of any server.
//
//	sqs-workload --endpoint URL --prefix NAME
package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Set at build time (-ldflags -X) from the installed SDK's go_module_metadata.go.
var sdkVersion = "?"

const body = "hopper compat ✓"

var ctx = context.Background()

var attributes = map[string]types.MessageAttributeValue{
	"colour": {DataType: aws.String("String"), StringValue: aws.String("blue")},
	"count":  {DataType: aws.String("Number"), StringValue: aws.String("42")},
	"blob":   {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 254, 255}},
}

// checkFailed is a workload expectation that did not hold.
type checkFailed string

func expect(condition bool, why string, args ...any) {
	if !condition {
		panic(checkFailed(fmt.Sprintf(why, args...)))
	}
}

func must[T any](value T, err error) T {
	if err != nil {
		panic(err)
	}
	return value
}

// step runs one named step and prints its verdict as every workload does.
func step(name string, work func()) {
	started := time.Now()
	defer func() {
		if failure := recover(); failure != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, failure)
			fmt.Printf("FAIL %s: %v\n", name, failure)
			os.Exit(1)
		}
		fmt.Printf("ok %s %.2f\n", name, time.Since(started).Seconds())
	}()
	work()
}

func main() {
	endpoint := flag.String("endpoint", "", "hopper's URL")
	prefix := flag.String("prefix", "", "queue name prefix")
	flag.Parse()
	client := sqs.New(sqs.Options{
		Region:           "us-east-1",
		Credentials:      credentials.NewStaticCredentialsProvider("test", "test", ""),
		EndpointResolver: sqs.EndpointResolverFromURL(*endpoint),
		// A failure is a finding, not something to retry.
		RetryMaxAttempts: 1,
		HTTPClient:       ownBodies{http.DefaultClient},
	})
	fmt.Printf("client go-sdk-v2 aws-sdk-go-v2/service/sqs %s query\n", sdkVersion)
	run(client, *prefix)
	topics := sns.New(sns.Options{
		Region:           "us-east-1",
		Credentials:      credentials.NewStaticCredentialsProvider("test", "test", ""),
		EndpointResolver: sns.EndpointResolverFromURL(*endpoint),
		RetryMaxAttempts: 1,
		HTTPClient:       ownBodies{http.DefaultClient},
	})
	step("sns_fan_out", func() { fanOut(topics, client, *prefix) })
	fmt.Println("done")
}

// ownBodies sends each request with a body of its own. This smithy-go closes the body
// it built as soon as Do returns, which can be while the transport's write loop still
// holds it; the write loop then fails and closes the connection under the answer being
// read ("failed to decode response body ... use of closed network connection"), about
// one run in twenty against a server that answers within a millisecond. Known upstream:
// aws/aws-sdk-go-v2#1825 and #2737, aws/smithy-go#403; later SDKs retry net.ErrClosed
// (aws/aws-sdk-go-v2#2949), which would hide it from a workload that retries nothing.
type ownBodies struct{ inner *http.Client }

func (c ownBodies) Do(request *http.Request) (*http.Response, error) {
	if request.Body == nil || request.Body == http.NoBody {
		return c.inner.Do(request)
	}
	data, err := io.ReadAll(request.Body)
	if err != nil {
		return nil, err
	}
	own := request.Clone(request.Context())
	own.Body = io.NopCloser(bytes.NewReader(data))
	own.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	return c.inner.Do(own)
}

func run(client *sqs.Client, prefix string) {
	var url, source, dead string
	var sent *sqs.SendMessageOutput
	var got, again types.Message
	step("create_queue", func() {
		url = *must(client.CreateQueue(ctx, &sqs.CreateQueueInput{
			QueueName: aws.String(prefix + "-jobs"), Attributes: map[string]string{"VisibilityTimeout": "30"},
		})).QueueUrl
		found := must(client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(prefix + "-jobs")}))
		expect(*found.QueueUrl == url, "GetQueueUrl gave %s", *found.QueueUrl)
		listed := must(client.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String(prefix)}))
		expect(contains(listed.QueueUrls, url), "ListQueues gave %v", listed.QueueUrls)
	})
	step("send_with_attributes", func() {
		// delayed, so that the long poll below has to wait for it
		sent = must(client.SendMessage(ctx, &sqs.SendMessageInput{
			QueueUrl: &url, MessageBody: aws.String(body), MessageAttributes: attributes, DelaySeconds: 1,
		}))
		expect(*sent.MD5OfMessageAttributes == md5OfAttributes(attributes), "MD5OfMessageAttributes")
	})
	step("long_poll_receive", func() {
		started := time.Now()
		got = one(client, &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 20,
			MessageAttributeNames: []string{"All"}, AttributeNames: []types.QueueAttributeName{"All"}})
		waited := time.Since(started).Seconds()
		expect(waited > 0.3 && waited < 10, "the long poll took %.2fs for a 1 s delay", waited)
		expect(*got.MessageId == *sent.MessageId && *got.Body == body, "the message sent")
		expect(*got.MD5OfMessageAttributes == md5OfAttributes(attributes), "attribute MD5")
		expect(*got.MessageAttributes["count"].StringValue == "42", "Number attribute")
		expect(string(got.MessageAttributes["blob"].BinaryValue) == "\x00\x01\xfe\xff", "Binary attribute")
		expect(got.Attributes["ApproximateReceiveCount"] == "1", "first receive")
	})
	step("change_visibility", func() {
		must(client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
			QueueUrl: &url, ReceiptHandle: got.ReceiptHandle, VisibilityTimeout: 0}))
		again = one(client, &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 5,
			AttributeNames: []types.QueueAttributeName{"ApproximateReceiveCount"}})
		expect(*again.MessageId == *got.MessageId, "released message received again")
		expect(again.Attributes["ApproximateReceiveCount"] == "2", "second receive")
	})
	step("delete", func() {
		must(client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: again.ReceiptHandle}))
		counts := must(client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url,
			AttributeNames: []types.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}}))
		for name, value := range counts.Attributes {
			expect(value == "0", "%s is %s", name, value)
		}
	})
	step("batch", func() { batch(client, url) })
	var deadArn, sourceArn string
	step("dead_letter", func() {
		dead = *must(client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(prefix + "-dead")})).QueueUrl
		deadArn = arn(client, dead)
		policy := must(json.Marshal(map[string]any{"deadLetterTargetArn": deadArn, "maxReceiveCount": 1}))
		source = *must(client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(prefix + "-work"),
			Attributes: map[string]string{"RedrivePolicy": string(policy)}})).QueueUrl
		sourceArn = arn(client, source)
		poison := must(client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &source, MessageBody: aws.String("poison")}))
		// This SDK leaves out a VisibilityTimeout of 0 (its zero value means "not set"),
		// so a receive cannot release at once: release with ChangeMessageVisibility.
		release(client, source, one(client, &sqs.ReceiveMessageInput{QueueUrl: &source, WaitTimeSeconds: 5}))
		none := must(client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &source, WaitTimeSeconds: 1}))
		expect(len(none.Messages) == 0, "a message past maxReceiveCount is not delivered again")
		moved := one(client, &sqs.ReceiveMessageInput{QueueUrl: &dead, WaitTimeSeconds: 5,
			AttributeNames: []types.QueueAttributeName{"All"}})
		release(client, dead, moved)
		expect(*moved.MessageId == *poison.MessageId, "the dead letter keeps its id")
		expect(moved.Attributes["DeadLetterQueueSourceArn"] == sourceArn, "DeadLetterQueueSourceArn")
		sources := must(client.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &dead}))
		expect(len(sources.QueueUrls) == 1 && sources.QueueUrls[0] == source, "sources %v", sources.QueueUrls)
	})
	fmt.Println("gap redrive: this SDK has no StartMessageMoveTask; the dead letter is moved back by hand")
	step("redrive_by_hand", func() {
		letter := one(client, &sqs.ReceiveMessageInput{QueueUrl: &dead, WaitTimeSeconds: 5})
		must(client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &source, MessageBody: letter.Body}))
		must(client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &dead, ReceiptHandle: letter.ReceiptHandle}))
		back := one(client, &sqs.ReceiveMessageInput{QueueUrl: &source, WaitTimeSeconds: 10})
		expect(*back.Body == "poison", "the dead letter is back in its source queue")
		must(client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &source, ReceiptHandle: back.ReceiptHandle}))
	})
	step("fifo", func() { fifo(client, prefix) })
	step("delete_queues", func() {
		for _, queue := range []string{url, source, dead} {
			must(client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(queue)}))
		}
	})
}

// fanOut: SNS through the same SDK's service/sns (query protocol, signed for sns): a
// topic fanned out to a raw queue with a filter policy, the publish it must and must
// not get.
func fanOut(topics *sns.Client, client *sqs.Client, prefix string) {
	topic := must(topics.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(prefix + "-events")})).TopicArn
	raw := must(client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(prefix + "-raw")})).QueueUrl
	must(topics.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic, Protocol: aws.String("sqs"),
		Endpoint: aws.String(arn(client, *raw)), Attributes: map[string]string{
			"RawMessageDelivery": "true", "FilterPolicy": `{"kind": ["order"]}`}}))
	for _, kind := range []string{"order", "refund"} {
		must(topics.Publish(ctx, &sns.PublishInput{TopicArn: topic, Message: aws.String("a " + kind),
			MessageAttributes: map[string]snstypes.MessageAttributeValue{
				"kind": {DataType: aws.String("String"), StringValue: aws.String(kind)}}}))
	}
	got := one(client, &sqs.ReceiveMessageInput{QueueUrl: raw, WaitTimeSeconds: 5})
	expect(*got.Body == "a order", "raw body %s", *got.Body)
	must(topics.DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: topic}))
	must(client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: raw}))
}

func batch(client *sqs.Client, url string) {
	entries := []types.SendMessageBatchRequestEntry{}
	for n := 0; n < 3; n++ {
		entries = append(entries, types.SendMessageBatchRequestEntry{
			Id: aws.String(fmt.Sprintf("m%d", n)), MessageBody: aws.String(fmt.Sprintf("batch %d", n))})
	}
	entries = append(entries, types.SendMessageBatchRequestEntry{
		Id: aws.String("attributed"), MessageBody: aws.String("batch a"), MessageAttributes: attributes})
	sent := must(client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: entries}))
	expect(len(sent.Successful) == 4 && len(sent.Failed) == 0, "sent %d, failed %d", len(sent.Successful), len(sent.Failed))
	for _, result := range sent.Successful {
		if *result.Id == "attributed" {
			expect(*result.MD5OfMessageAttributes == md5OfAttributes(attributes), "batch attribute MD5")
		}
	}
	received := map[string]types.Message{}
	for i := 0; i < 10 && len(received) < 4; i++ {
		answer := must(client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url,
			MaxNumberOfMessages: 10, WaitTimeSeconds: 2}))
		for _, message := range answer.Messages {
			received[*message.MessageId] = message
		}
	}
	expect(len(received) == 4, "received %d of 4", len(received))
	changes := []types.ChangeMessageVisibilityBatchRequestEntry{}
	deletes := []types.DeleteMessageBatchRequestEntry{}
	for _, message := range received {
		id := aws.String(fmt.Sprintf("r%d", len(deletes)))
		changes = append(changes, types.ChangeMessageVisibilityBatchRequestEntry{
			Id: id, ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: 60})
		deletes = append(deletes, types.DeleteMessageBatchRequestEntry{Id: id, ReceiptHandle: message.ReceiptHandle})
	}
	changed := must(client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{
		QueueUrl: &url, Entries: changes}))
	expect(len(changed.Successful) == 4 && len(changed.Failed) == 0, "changed %d", len(changed.Successful))
	deleted := must(client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: deletes}))
	expect(len(deleted.Successful) == 4 && len(deleted.Failed) == 0, "deleted %d", len(deleted.Successful))
}

func fifo(client *sqs.Client, prefix string) {
	url := *must(client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(prefix + "-orders.fifo"),
		Attributes: map[string]string{"FifoQueue": "true"}})).QueueUrl
	sends := []*sqs.SendMessageOutput{}
	for n := 0; n < 3; n++ {
		sends = append(sends, must(client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url,
			MessageBody: aws.String(fmt.Sprintf("order %d", n)), MessageGroupId: aws.String("g"),
			MessageDeduplicationId: aws.String(fmt.Sprintf("d%d", n))})))
	}
	previous := uint64(0)
	for _, sent := range sends {
		number := must(strconv.ParseUint(*sent.SequenceNumber, 10, 64))
		expect(number > previous, "sequence numbers %s", *sent.SequenceNumber)
		previous = number
	}
	duplicate := must(client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("order 0 again"),
		MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("d0")}))
	expect(*duplicate.MessageId == *sends[0].MessageId, "a duplicate send names the first")
	bodies := []string{}
	for i := 0; i < 6 && len(bodies) < 3; i++ {
		answer := must(client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10,
			WaitTimeSeconds: 2, AttributeNames: []types.QueueAttributeName{"MessageGroupId"}}))
		for _, message := range answer.Messages {
			expect(message.Attributes["MessageGroupId"] == "g", "MessageGroupId")
			bodies = append(bodies, *message.Body)
			must(client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: message.ReceiptHandle}))
		}
	}
	expect(fmt.Sprint(bodies) == "[order 0 order 1 order 2]", "received %v", bodies)
	rest := must(client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 1}))
	expect(len(rest.Messages) == 0, "the duplicate was delivered")
	must(client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &url}))
}

func one(client *sqs.Client, input *sqs.ReceiveMessageInput) types.Message {
	answer := must(client.ReceiveMessage(ctx, input))
	expect(len(answer.Messages) == 1, "expected one message, got %d", len(answer.Messages))
	return answer.Messages[0]
}

func release(client *sqs.Client, url string, message types.Message) {
	must(client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: &url, ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: 0}))
}

func arn(client *sqs.Client, url string) string {
	answer := must(client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{"QueueArn"}}))
	return answer.Attributes["QueueArn"]
}

func contains(values []string, wanted string) bool {
	for _, value := range values {
		if value == wanted {
			return true
		}
	}
	return false
}

// md5OfAttributes is SQS's MD5OfMessageAttributes (the SDK checks only body MD5s):
// names sorted; each name, type and value length-prefixed, with a transport byte
// (1 string, 2 binary) before the value.
func md5OfAttributes(values map[string]types.MessageAttributeValue) string {
	hash := md5.New()
	prefixed := func(data []byte) {
		length := make([]byte, 4)
		binary.BigEndian.PutUint32(length, uint32(len(data)))
		hash.Write(length)
		hash.Write(data)
	}
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		value := values[name]
		prefixed([]byte(name))
		prefixed([]byte(*value.DataType))
		if value.BinaryValue != nil {
			hash.Write([]byte{2})
			prefixed(value.BinaryValue)
		} else {
			hash.Write([]byte{1})
			prefixed([]byte(*value.StringValue))
		}
	}
	return hex.EncodeToString(hash.Sum(nil))
}
