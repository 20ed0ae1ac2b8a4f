"""Middleware latency laboratory (seed 001A-C): a small publish/subscribe abstraction with
pluggable backends (UDP, ZeroMQ, DDS, Zenoh), a latency harness of real processes (SCHED_FIFO and
pinned when allowed, CLOCK_MONOTONIC stamps in the payload), an emulated second board (two network
namespaces joined by a link shaped to 100 Mbit/s), and partition windows (ARINC 653 style) both
emulated and bounded by the core's periodic-window supply analysis."""
