"""hopper: a queue server that speaks the Amazon SQS wire protocol."""

__version__ = "0.1.0"
