"""The seed papers' experiments, reproduced on rtnetlab's own engines: one module per seed study.

* ``seed000_comparison``: seed 000's scheduler comparison (FIFO, SP, WF2Q, D2DRR per class);
* ``seed001e_fig6``: seed 001E's Fig. 6 (DOPA's PARTITION with OPA and with DM);
* ``seed003_fabric``: seed 003's lossless fabric under each scheduler;
* ``seed004_table4``: seed 004's Table 4 (the network sporadic server's overhead).

A new study: a module here, its command in ``rtnetlab/cli/experiment.py`` (or, for a capability
of its own, registered onto ``rtnetlab.cli.experiment.app`` from its package). Nothing is imported
here, so a command loads only its own study.
"""
