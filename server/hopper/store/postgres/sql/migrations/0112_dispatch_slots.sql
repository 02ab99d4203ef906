-- A queue's dispatch slots (QueueStore.take_dispatch_slot): at most `slots` calls of
-- its Hopper.Dispatch in flight across every hopper process. A row per slot ever
-- taken, held by `holder` until `until` (epoch seconds); a dead process's slots come
-- free when their leases run out. Keyed by queue name: a slot is only a lease, and a
-- re-created queue may as well find its old rows free.
CREATE TABLE dispatch_slots (
    account text NOT NULL,
    name text NOT NULL,
    slot integer NOT NULL,
    holder text NOT NULL,
    until float8 NOT NULL,
    PRIMARY KEY (account, name, slot)
);
