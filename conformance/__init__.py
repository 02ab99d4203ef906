"""Differential conformance runs: the same scenarios against moto and against hopper.

Each scenario (in `conformance.scenarios`) drives a `Target` and returns what it was
answered; the answers of both servers are normalised (`normalise`), compared field by
field (`compare`), and every difference is either listed, with its reason, in
`known_differences.toml` (`known`) or counted as unexpected. `python -m conformance`
runs it all; see README.md.
"""
