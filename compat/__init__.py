"""Real SQS clients, unmodified, each driving the same short workload against hopper.

`clients` names them (version pins, protocol, workload script), `envs` installs each
into a virtualenv (or node_modules) of its own under a cache directory, `run` runs one
client's workload and reads its verdict. `python -m compat` runs them all; see
README.md.
"""
