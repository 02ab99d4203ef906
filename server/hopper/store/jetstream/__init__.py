"""The JetStream store: the QueueStore contract on NATS JetStream.

The mapping:

- A queue's *backlog* is its own subject of the stream `<PREFIX>_BODIES`. A send to a
  standard queue without deduplication id or lease, and every FIFO send, is one publish
  there: JetStream's acknowledgement is its commit and its stream sequence its place in
  line (a FIFO message's sequence number). No other state is read or written for it
  (`backlog.py`, `sends.py`).
- A queue's *ledger* (an entry of the bucket `<prefix>_ledgers`, keyed by the queue's
  incarnation) is its active messages -- in flight, delayed, taken from the backlog
  and not yet received -- with their leases, fencing tokens and receive counts, its
  FIFO group locks, receive attempts and live deduplication keys, and a cursor: the
  last backlog sequence taken. A step reads the ledgers it touches, applies the memory
  store's rules to them (the ledger model is `store/ledger/`; the rules call the core's:
  this store adds no SQS rule, only where state lives and how it commits), writes them by
  compare-and-set on the revisions it read; a lost race is retried from a fresh read.
  A receive that finds too few receivable messages reads the next ones after the cursor
  (one batched direct get) and claims them in the same compare-and-set: two processes
  never take one backlog entry twice, and a receive's cost follows what is in flight,
  never the depth behind it (`steps.py`).
- FIFO deduplication ids are one entry each of the bucket `<prefix>_dedup`, taken by
  compare-and-set and judged by hopper's clock (`deduplication.py`). FIFO sends to one
  queue that arrive together go in one round: their ids created at once, one publish,
  one record of where their messages went (`sends.FifoSends`).
- A queue's record (config, tags, incarnation), deletion times and the move tasks are
  entries of the bucket `<prefix>_queues` (`records.py`, `tasks.py`).
- The fencing token is the ledger bucket's revision of the write that claimed the
  delivery (times 1024, plus the delivery's place in that write): one sequence for the
  whole bucket, issued by JetStream, so tokens increase store-wide in commit order,
  across queues, dead letters and moves (`codec.token`).
- Steps of one queue that meet in one process run one after the other on one model and
  commit by one write (group commit); a group of receives takes from the backlog what
  they want together. Backlog entries no ledger names go by one purge below the
  ledger's oldest named entry (`Backlog.trim`).
- Idle queues cost no request per queue: the retention sweep visits a queue only when
  its oldest message may expire or its ledger was written (`sweeps.py`), and a queue
  known empty answers its stats from JetStream's per-subject counts (`quiet.py`).
- Wake-ups: a send publishes a hint on `<prefix>.wake.<incarnation>`, and every process
  watches the ledger bucket (headers only); either wakes that queue's long polls.

Why JetStream's consumers do not decide SQS's semantics here, although they could carry
them on a real clock (a `-NAK` with a delay moves one delivery's deadline, the delivery
count is in the ack subject): every decision must follow hopper's `now`, which is what
lets the contract suite run this store under a fake clock, and SQS's answers need state
a consumer does not keep (a 12-hour cap counted from the receive, a receipt's token
compared on delete, a dead-letter move at the receive that would exceed the count,
keeping id, body and counts). A durable consumer per queue would also be one Raft group
per queue at three replicas. The stream keeps the order and the bodies; the cursor in
the ledger is the consumer.

Limits (declared in the README): the ledger takes from its backlog while it holds fewer
than `steps.WINDOW` messages, so a queue with more in flight or delayed at its head
serves the messages behind them as those leave; nats-server 2.11 or later with a
`max_payload` that carries a 1 MiB message (`fitness.py`). Two ledgers written by one
step (a dead letter, a move) are two compare-and-sets: the target is written first, so
a lost race afterwards can duplicate a message (at-least-once) but not lose one.
"""

from hopper.store.jetstream.store import JetStreamQueueStore

__all__ = ["JetStreamQueueStore"]
