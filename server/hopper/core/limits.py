"""SQS's numeric limits, in one place (values from the AWS SQS documentation and the
botocore model; see SQS-NOTES.md)."""

MAX_MESSAGE_SIZE = 1_048_576
MIN_MESSAGE_SIZE_SETTING = 1_024
MAX_DELAY_SECONDS = 900
MIN_RETENTION_SECONDS = 60
MAX_RETENTION_SECONDS = 1_209_600
MAX_VISIBILITY_TIMEOUT = 43_200
MAX_WAIT_TIME_SECONDS = 20
MAX_RECEIVE_MESSAGES = 10
MAX_MESSAGE_ATTRIBUTES = 10
MAX_BATCH_ENTRIES = 10
MAX_BATCH_ENTRY_ID_LENGTH = 80
MAX_QUEUE_NAME_LENGTH = 80
MAX_LIST_QUEUES_RESULTS = 1_000
MAX_TAGS_PER_QUEUE = 50
DEDUPLICATION_WINDOW_SECONDS = 300
# A ReceiveRequestAttemptId names its receive for this long after it was made.
RECEIVE_ATTEMPT_WINDOW_SECONDS = 300
MIN_MAX_RECEIVE_COUNT = 1
MAX_MAX_RECEIVE_COUNT = 1_000
# Seconds SQS makes you wait after DeleteQueue before re-creating the name, and
# between two PurgeQueue calls.
QUEUE_RECREATE_SECONDS = 60
PURGE_INTERVAL_SECONDS = 60
# Message move tasks: MaxNumberOfMessagesPerSecond, ListMessageMoveTasks' MaxResults.
MAX_MOVE_TASK_RATE = 500
MAX_MOVE_TASK_RESULTS = 10
# RedriveAllowPolicy byQueue: at most this many source queue ARNs.
MAX_REDRIVE_ALLOW_SOURCES = 10
# In-flight messages per standard queue: AWS answers a short-poll ReceiveMessage with
# OverLimit beyond this ("approximately 120,000"; a long poll just gets no messages).
MAX_IN_FLIGHT_STANDARD = 120_000
# A delivery's visibility can be extended to at most this many seconds after the
# ReceiveMessage that made it ("the total visibility timeout", 12 hours).
MAX_TOTAL_VISIBILITY_SECONDS = 43_200
# hopper's Hopper.MaximumQueueDepth: the largest ceiling a queue may be given.
MAX_QUEUE_DEPTH_SETTING = 2**31 - 1
