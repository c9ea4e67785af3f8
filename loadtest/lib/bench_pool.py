"""Pools the rounds of several bench-peers.sh runs: for each system and request, the median
(and quartiles) of the per-round ratios `system ÷ bare` (to the ceiling) and `ours ÷ system`
(the runtime against each peer), for throughput and for CPU efficiency. On a shared machine one run's ratios move by ±15 %; more paired rounds
narrow that.

Usage: python3 loadtest/lib/bench_pool.py target/bench/RUN1 target/bench/RUN2 ...
"""

import json
import statistics
import sys
from pathlib import Path


def cpu(w):
    return w["cpu_us"] / max(w["requests"], 1)


def main():
    pairs = {}
    for d in sys.argv[1:]:
        raw = [json.loads(l) for l in Path(d, "raw.jsonl").read_text().splitlines() if l.strip()]
        by = {(r["round"], r["system"], r["request"]): r["wrk"] for r in raw}
        for (rnd, system, req), w in by.items():
            b = by.get((rnd, "bare", req))
            if b is not None and system != "bare" and cpu(w):
                pairs.setdefault((f"{system} ÷ bare", req), []).append((w["rps"] / b["rps"], cpu(b) / cpu(w)))
            o = by.get((rnd, "ours", req))
            if o is not None and system in ("rmcp", "ts") and cpu(o):
                pairs.setdefault((f"ours ÷ {system}", req), []).append((o["rps"] / w["rps"], cpu(w) / cpu(o)))

    def q(xs):
        return "–" if len(xs) < 4 else " / ".join(f"{v:.3g}" for v in statistics.quantiles(xs, n=4))

    print(f"Pooled over {len(sys.argv) - 1} runs: per-round ratios, median (quartiles).")
    print()
    print("| ratio | request | rounds | throughput | quartiles | CPU efficiency | quartiles |")
    print("|---|---|---:|---:|---|---:|---|")
    for (name, req), v in sorted(pairs.items(), key=lambda kv: ("÷ bare" not in kv[0][0], kv[0])):
        t, c = [a for a, _ in v], [b for _, b in v]
        print(f"| {name} | {req} | {len(v)} | {statistics.median(t):.3g} | {q(t)} | {statistics.median(c):.3g} | {q(c)} |")


if __name__ == "__main__":
    main()
