"""The queue core: SQS rules written once, over the store seam. No HTTP, no SQL."""
