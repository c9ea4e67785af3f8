"""Turns the k6 summaries of one loadtest/run.sh run into summary.json and summary.md.

stdin: one `scenario|status` line per scenario; argv: OUT URL BINARY REPLICAS VUS DURATION.
"""

import json
import sys
from pathlib import Path


def metric(summary, name, key):
    value = summary.get("metrics", {}).get(name, {}).get(key)
    return round(value, 3) if isinstance(value, float) else value


def main():
    out, url, binary, replicas, vus, duration = sys.argv[1:7]
    rows = []
    for line in sys.stdin.read().splitlines():
        scenario, status = line.split("|", 1)
        path = Path(out) / f"{scenario}.json"
        summary = json.loads(path.read_text()) if path.exists() and not status.startswith("skipped") else {}
        rows.append({
            "scenario": scenario,
            "status": status,
            "requests": metric(summary, "http_reqs", "count"),
            "rps": metric(summary, "http_reqs", "rate"),
            "p50_ms": metric(summary, "http_req_duration", "med"),
            "p95_ms": metric(summary, "http_req_duration", "p(95)"),
            "p99_ms": metric(summary, "http_req_duration", "p(99)"),
            "error_rate": metric(summary, "http_req_failed", "value"),
            "checks_passed": metric(summary, "checks", "value"),
        })
    run = {"url": url, "binary": binary, "replicas": int(replicas), "vus": int(vus), "duration": duration}
    Path(out, "summary.json").write_text(json.dumps({"run": run, "scenarios": rows}, indent=2) + "\n")

    def cell(v, fmt="{}"):
        return "–" if v is None else fmt.format(v)

    md = [
        f"k6 against `{url}` ({replicas} replica(s) of `{binary}`), {vus} VUs × {duration} per scenario.",
        "",
        "| scenario | status | requests | req/s | p50 ms | p95 ms | p99 ms | errors | checks |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        md.append(
            f"| {r['scenario']} | {r['status']} | {cell(r['requests'])} | {cell(r['rps'], '{:.0f}')} "
            f"| {cell(r['p50_ms'], '{:.2f}')} | {cell(r['p95_ms'], '{:.2f}')} | {cell(r['p99_ms'], '{:.2f}')} "
            f"| {cell(r['error_rate'], '{:.2%}')} | {cell(r['checks_passed'], '{:.2%}')} |"
        )
    Path(out, "summary.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
