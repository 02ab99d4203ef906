"""The SNS query protocol (2010-03-31) on hopper's endpoint: which requests are SNS's
(routing.py), their parameters (params.py), the action handlers (topics.py,
subscriptions.py, publishing.py), answers and errors in SNS's XML (render.py,
errors.py), and the endpoint that joins them (endpoint.py)."""
