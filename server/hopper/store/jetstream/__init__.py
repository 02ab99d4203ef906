"""The JetStream store: the QueueStore contract on NATS JetStream.

The mapping:

- A message's body (with its attributes and trace header) is one message of the stream
  `<PREFIX>_BODIES`, published once when sent and deleted when the message leaves the
  queue. Its stream sequence names it.
- A queue's record (config, tags, incarnation) is an entry of the key-value bucket
  `<prefix>_queues`; created with create-if-absent, changed with compare-and-set on its
  revision. Deletion times and the move tasks live there too (the tasks as one entry,
  changed by compare-and-set, so "one active task per source" holds across processes).
- A queue's per-message state -- leases, fencing tokens, receive counts, FIFO sequence
  numbers and deduplication windows, live deduplication keys, receive attempts -- is its
  *ledger*: one entry of the bucket `<prefix>_ledgers`, keyed by the queue's incarnation.
  Every operation reads the ledgers it touches, applies the reference model's rules
  (`store/memory/store.py`, which calls the core's: this store adds no SQS rule, only where
  state lives, how it commits and its declared limits) and writes them back with
  compare-and-set on the revisions it read; a lost race is retried from a fresh read. So
  every decision (claim, redrive, group lock, token issue, deduplication) is atomic
  across any number of hopper processes, and time is hopper's `now`, which is what lets
  the contract suite run this store under a fake clock.
- The fencing token comes from JetStream: the ledger bucket's revision of the write that
  claimed the delivery (times 64, plus the delivery's place in that write). Revisions
  are one sequence for the whole bucket, so tokens increase store-wide in commit order,
  across queues, redrives and moves (`codec.token`).
- Compare-and-set is the subject's expected last sequence *and* a message id naming the
  revision the write is based on: nats-server 2.9 checks the former before consensus
  only on replicated streams (nats-io/nats-server#4320); its deduplication, applied in
  consensus order, lets one writer per revision win (`edge._write`).
- Steps of one queue that meet in one process are run one after the other on one model
  and committed by one write (group commit), and a process keeps the ledgers it wrote
  decoded until another process writes them (`steps.py`).
- Wake-ups: every process watches the ledger bucket (headers only); a changed ledger
  wakes that queue's long polls. JetStream carries the wake-up between processes.

Where the seed's mapping does not fit, and why:

- AckWait/InProgress/Nak as visibility: a consumer has one AckWait, but SQS has one
  visibility timeout per receive and per ChangeMessageVisibility (up to 12 hours), zero
  leases, and time that is a parameter. Leases are therefore ledger state.
- Consumer sequence as fencing token: it lives only as long as one consumer, and a
  dead-lettered or moved message gets a new one in another stream; the bucket's
  revision keeps tokens increasing across both.
- Nats-Msg-Id: its duplicate window is the server's wall clock and fixed per stream; the
  FIFO window (300 s from the first send, even after deletion) and hopper's live keys are
  ledger state.
- MaxDeliver: redrive must move the message to another queue at the receive that would
  exceed it, keeping id, body and counts; done in the same step as the claim.
- FIFO group locks: no primitive; the ledger write that claims a group's run is the lock.

Limits (declared, not silent): a queue's ledger is one key-value entry, so a queue holds
at most `MAX_QUEUE_DEPTH` messages (a send beyond is refused whole with OverLimit naming
this store), and each operation costs in proportion to its queue's depth;
nats-server's `max_payload` must exceed 1 MiB plus a ledger (8 MB is plenty). Two
ledgers written by one step (a redrive, a move) are two compare-and-sets: the target is
written first, so a lost race afterwards can duplicate a message (at-least-once) but not
lose one. The model's state classes are the memory store's own (`codec.py` encodes
them), so the two stores cannot drift apart.
"""

from hopper.store.jetstream.store import JetStreamQueueStore

__all__ = ["JetStreamQueueStore"]
