"""Benchmark-scale scoring: many runs scored by the one pure scoring function, with statistics.

    items.py     what to score (bundle dirs, folders of bundles, JSONL of task/workdir/gt)
    hashes.py    the identity of inputs and code: tree, catalog, scorer module, tally version
    worker.py    score one item into one result row (the unit a pool process or a Ray task runs)
    results.py   results.jsonl: append-only, resumable, keyed by (bundle, scorer, catalog) hash
    runner.py    the sweep loop with a rich progress bar, over a local process pool or Ray
    ray_backend.py  Ray tasks (num_cpus=1, retries, streamed results, optional shipping)
    stats.py     mean, stdev, bootstrap CI, pass@k, pass^k, paired differences
    report.py    per task / label / family aggregates as JSON; html.py draws them
    collect.py   results.jsonl from every node's `run/+/score` on an MQTT broker
"""
