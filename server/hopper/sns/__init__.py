"""SNS topics on hopper's endpoint: the topic core.

Pure rules and the seams they need, as `hopper.core` is for queues: topics and
subscriptions (model.py), their attributes (attributes.py), filter policies
(filter_policies.py to check one, filter_matching.py to match one), what a subscriber
receives (envelopes.py) and its signature (signing.py), the storage seam (store.py),
and the service that joins them (service.py, publishing.py). Nothing here speaks
HTTP or SQL: the SNS wire protocol is `hopper.wire.sns`, the stores implement
`TopicStore` in their own folders.
"""
