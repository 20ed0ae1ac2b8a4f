"""Peer implementations that the benchmarks run side by side with the engine."""
