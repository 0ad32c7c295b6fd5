"""The benchmark suite: ``python -m torch_axon.tools.bench`` (``__main__.py``); ``timing.py``
times, ``ceilings.py``, ``ops.py``, ``pointwise.py``, ``models.py``, ``compiled.py``,
``cold_start.py`` and ``collectives.py`` hold the workloads, ``report.py`` writes the report."""
