"""``recompute watch``: assert invariants on every block, for monitoring bots (docs/design.md
§Watch; docs/watch.md is the user's guide).

- :mod:`~recompute.watch.config`    checks.toml → :class:`~recompute.watch.config.Check` list
- :mod:`~recompute.sources.cache`    a proof source that shares raw answers between the checks
                                    of one block (and learns each check's slots block to block)
- :mod:`~recompute.watch.evaluate`  every check at one anchored block → :class:`Line` list
- :mod:`~recompute.watch.follower`  follow the head: parentHash links, reorgs, outages, finality
- :mod:`~recompute.watch.auditor`   ``--from N --to M``: a range of history, bounded concurrency
- :mod:`~recompute.watch.segment`   one segment of a range, evaluated on its own (a Dask task)
- :mod:`~recompute.watch.linking`   segments tied into one chain of parent links up to the pin
- :mod:`~recompute.watch.coordinator`  a range in segments: run, store, tie, write in order
- :mod:`~recompute.watch.cluster`   segments on Dask: ``--processes P`` or ``--cluster URL``
- :mod:`~recompute.watch.store`     the SQLite evidence store (``--store``, ``--resume``)
- :mod:`~recompute.watch.recording` follow mode writing its final lines to the store
- :mod:`~recompute.watch.sink`      where lines go: stdout JSON, stderr summary, metrics, hooks
- :mod:`~recompute.watch.metrics`   Prometheus text metrics on 127.0.0.1
- :mod:`~recompute.watch.hooks`     ``--on-bad CMD`` on each turn to unhealthy
"""
