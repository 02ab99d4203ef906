"""What operators see of a running hopper: metrics, the dashboard, logs, shutdown.

Nothing here changes a queue: it reads the store through the queue core (stats,
peek) and listens to the core's events. The SQS protocol layer knows nothing of it.
"""
