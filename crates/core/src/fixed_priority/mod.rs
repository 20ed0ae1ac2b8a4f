//! Fixed-priority response-time analysis: preemptive tasks, non-preemptive messages on CAN-like
//! buses, holistic chains over processors and a bus, and priority assignment (deadline
//! monotonic, Audsley's OPA), with the DOPA partitioning of seed 001E.
