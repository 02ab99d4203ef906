"""The console behind `/dashboard`: a JSON API (api.py) that acts through the queue
core as SQS requests do, sessions for `--auth sigv4` (sessions.py), and a short
in-memory history per queue for its charts (history.py). It may import the core and
the wire layer (for SQS's error names and attribute texts), never a store.
"""
