"""Stores behind the QueueStore seam."""
