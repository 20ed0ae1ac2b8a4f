"""The testbed: a network description run on real frames in Linux network namespaces (kernel
qdiscs, or the user-space switch running the engine's own schedulers), measured beside its
bounds and the simulator; `export tc` for real hosts. See docs/TESTBED.md."""
