"""Turns one bench-peers.sh run (raw.jsonl, systems.jsonl) into results.json and results.md.

argv: OUT ROUNDS DURATION CONNECTIONS PINNED. Per system and request: the median req/s over
the rounds, p50/p99 of that median round, the median CPU time per request, and both as
ratios to the bare-axum ceiling (throughput: req/s over req/s; efficiency: requests per
CPU-second over the ceiling's), each ratio the median of the per-round ratios; per system:
idle and peak RSS of the largest server process (and the sum, for clusters).
"""

import json
import statistics
import sys
from pathlib import Path

NAMES = {
    "bare": "bare axum handler (ceiling)",
    "ours": "mcp-runtime",
    "rmcp": "rmcp 3.x stateless",
    "ts": "TypeScript SDK v2 stateless (loadtest/peers/ts-server)",
    "ours-lb1": "mcp-runtime ×1 behind nginx",
    "ours-lb3": "mcp-runtime ×3 behind nginx",
}


def main():
    out, rounds, duration, connections, pinned = sys.argv[1:6]
    raw = [json.loads(l) for l in Path(out, "raw.jsonl").read_text().splitlines() if l.strip()]
    systems = [json.loads(l) for l in Path(out, "systems.jsonl").read_text().splitlines() if l.strip()]
    order = [s["system"] for s in systems]
    requests = list(dict.fromkeys(r["request"] for r in raw))

    cells = {}
    for s in order:
        for req in requests:
            runs = sorted((r["wrk"] for r in raw if r["system"] == s and r["request"] == req), key=lambda w: w["rps"])
            if not runs:
                continue
            mid = runs[len(runs) // 2]
            cells[s, req] = {
                "rps_median": statistics.median(w["rps"] for w in runs),
                "rps_rounds": [w["rps"] for w in runs],
                "p50_ms": mid["p50_us"] / 1000,
                "p99_ms": mid["p99_us"] / 1000,
                "errors": sum(w["errors"] for w in runs),
                "cpu_us_per_request": statistics.median(w["cpu_us"] / max(w["requests"], 1) for w in runs),
            }

    # Ratios are paired: system a against system b within each round (their runs are close
    # in time, so drift from other load on the machine hits both), then the median over
    # the rounds.
    by_round = {(r["round"], r["system"], r["request"]): r["wrk"] for r in raw}

    def paired(a, b, req, f):
        vals = []
        for rnd in sorted({r["round"] for r in raw}):
            wa, wb = by_round.get((rnd, a, req)), by_round.get((rnd, b, req))
            if wa and wb and f(wa, wb) is not None:
                vals.append(f(wa, wb))
        return statistics.median(vals) if vals else None

    def ratio(a, b, req):
        return paired(a, b, req, lambda wa, wb: wa["rps"] / wb["rps"] if wb["rps"] else None)

    def efficiency(a, b, req):
        def f(wa, wb):
            ca, cb = wa["cpu_us"] / max(wa["requests"], 1), wb["cpu_us"] / max(wb["requests"], 1)
            return cb / ca if ca and cb else None
        return paired(a, b, req, f)

    result = {
        "settings": {"rounds": int(rounds), "seconds": float(duration), "connections": int(connections),
                     "pinned": pinned != "0", "load_generator": "wrk -t1"},
        "systems": systems,
        "cells": [{"system": s, "request": req, **c} for (s, req), c in cells.items()],
        "ratios": {req: {k: {"throughput": ratio("ours", b, req), "cpu_efficiency": efficiency("ours", b, req)}
                         for k, b in (("ours/bare", "bare"), ("ours/rmcp", "rmcp"), ("ours/ts", "ts"))}
                   for req in requests},
    }
    Path(out, "results.json").write_text(json.dumps(result, indent=2) + "\n")

    mb = lambda kb: f"{kb / 1024:.1f}"
    fmt = lambda v: "–" if v is None else f"{v:.3f}" if v < 0.1 else f"{v:.2f}"
    md = [
        f"wrk -t1 -c{connections}, {rounds} rounds × {duration} s per system and request, systems interleaved; "
        + ("servers pinned to CPU 0, wrk to CPU 1." if pinned != "0" else "no CPU pinning."),
        "",
        "| system | request | req/s (median) | × ceiling | CPU µs/request | × ceiling (CPU) | p50 ms | p99 ms | errors | response bytes |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    by_name = {s["system"]: s for s in systems}
    for req in requests:
        for s in order:
            c = cells.get((s, req))
            if not c:
                continue
            r, e = ratio(s, "bare", req), efficiency(s, "bare", req)
            size = by_name[s].get({"tools/call": "call_bytes", "legacy/tools/call": "legacy_call_bytes"}.get(req, "list_bytes"), 0)
            md.append(
                f"| {NAMES.get(s, s)} | {req} | {c['rps_median']:,.0f} | {fmt(r)} | {c['cpu_us_per_request']:.1f} "
                f"| {fmt(e)} | {c['p50_ms']:.2f} | {c['p99_ms']:.2f} | {c['errors']} | {size} |"
            )
    md += [
        "",
        "| system | server processes | idle RSS MB | peak RSS MB (largest process) | peak RSS MB (sum) |",
        "|---|---:|---:|---:|---:|",
    ]
    for s in systems:
        md.append(
            f"| {NAMES.get(s['system'], s['system'])} | {s['processes']} | {mb(s['idle_rss_kb'])} "
            f"| {mb(s['peak_rss_kb'])} | {mb(s['peak_rss_sum_kb'])} |"
        )
    heads = [f"{req} {kind}" for req in requests for kind in ("req/s", "CPU efficiency")]
    md += ["", "| ratio | " + " | ".join(heads) + " |", "|---|" + "---:|" * len(heads)]
    for key in ("ours/bare", "ours/rmcp", "ours/ts"):
        vals = [result["ratios"][req][key][k] for req in requests for k in ("throughput", "cpu_efficiency")]
        md.append(f"| {key} | " + " | ".join("–" if v is None else f"{v:.2f}×" for v in vals) + " |")
    Path(out, "results.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
