"""Parameter sweeps on Dask (`rtnetlab sweep`): a SPEC names what varies, the seeds, what runs per
point and what is kept; points run in batches on an embedded cluster that admits no one else or on
a remote scheduler chosen by its credentials (`cluster`), rows stream to Parquet (one per point
and seed), a killed sweep resumes where it stopped, and the rows aggregate into means with
t-based confidence intervals and plots. The seeds' figures (`rtnetlab experiment ...`) and the
soundness campaign are sweeps too."""

import sys
import types
from typing import Any


class _SweepModule(types.ModuleType):
    """This package, callable: ``rtnetlab.sweep`` is both the sweeps' package and the API's
    ``rt.sweep(spec, out, ...)`` (:func:`rtnetlab.studies.sweep`), whichever was imported first
    (importing the package sets the attribute ``rtnetlab.sweep`` to it)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from rtnetlab.studies import sweep

        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _SweepModule
