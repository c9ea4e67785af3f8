#!/usr/bin/env python3
"""Evaluates every query of the shipped Grafana dashboard and every alert rule through a real
Prometheus's HTTP API (tests/observability/run.sh starts it, scraping a runtime under load).
Fails when Prometheus could not scrape the runtime, when a rule does not evaluate, or when any
query errors or returns no data. Python standard library only.

- Dashboard: every panel target and every `label_values(...)` variable, with the Grafana
  variables substituted: `$__rate_interval` -> RATE_INTERVAL, `$__interval` -> 5s, any other
  `$var`/`${var}` -> `.*` (the dashboard's "All" value; every variable is used in `=~`).
- Alert rules: as Prometheus loaded them (/api/v1/rules), each rule's health must be `ok`; its
  expression is evaluated with each comparison against a number turned into a `bool`
  comparison (`x > 0.05` -> `x > bool 0.05`), so a rule that is not firing still has to
  return its series: an alert that can never see data is as broken as one that errors.

Usage: check.py PROMETHEUS_URL DASHBOARD.json [RATE_INTERVAL]
"""

import json
import re
import sys
import urllib.parse
import urllib.request

COMPARISON = re.compile(r"(==|!=|>=|<=|>|<)\s*(?!bool\b)(-?[0-9][0-9.eE+-]*)\b")
VARIABLE = re.compile(r"\$\{?(\w+)\}?")
LABEL_VALUES = re.compile(r"^label_values\((.*),\s*(\w+)\)$", re.S)


def get(base, path, **params):
    url = f"{base}{path}" + (f"?{urllib.parse.urlencode(params)}" if params else "")
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        return json.load(e)


def substitute(expr, rate_interval):
    fixed = {"__rate_interval": rate_interval, "__interval": "5s", "__range": "5m"}
    return VARIABLE.sub(lambda m: fixed.get(m.group(1), ".*"), expr)


def as_bool(expr):
    return COMPARISON.sub(lambda m: f"{m.group(1)} bool {m.group(2)}", expr)


def dashboard_queries(path, rate_interval):
    dash = json.load(open(path))
    out = []
    for panel in dash["panels"]:
        for t in panel.get("targets", []):
            out.append((f"panel '{panel['title']}' {t['refId']}", substitute(t["expr"], rate_interval)))
    for var in dash["templating"]["list"]:
        if var["type"] != "query":
            continue
        q = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
        m = LABEL_VALUES.match(q.strip())
        if not m:
            sys.exit(f"FAILED: variable {var['name']}: only label_values(expr, label) is supported, got {q}")
        out.append((f"variable ${var['name']}", f"count by ({m.group(2)}) ({substitute(m.group(1), rate_interval)})"))
    return out


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    base, dashboard = sys.argv[1].rstrip("/"), sys.argv[2]
    rate_interval = sys.argv[3] if len(sys.argv) == 4 else "30s"
    failures = []

    targets = get(base, "/api/v1/targets")["data"]["activeTargets"]
    down = [f"{t['scrapeUrl']}: {t['health']} {t.get('lastError', '')}" for t in targets if t["health"] != "up"]
    if not targets or down:
        failures.append(f"scrape targets not up: {down or 'none configured'}")

    queries = dashboard_queries(dashboard, rate_interval)
    rules = 0
    for group in get(base, "/api/v1/rules")["data"]["groups"]:
        for rule in group["rules"]:
            rules += 1
            name = rule.get("name")
            if rule.get("health") != "ok":
                failures.append(f"rule {name}: health {rule.get('health')}: {rule.get('lastError')}")
            queries.append((f"rule {name}", as_bool(rule["query"])))
    if rules == 0:
        failures.append("Prometheus loaded no rules")

    for what, q in queries:
        answer = get(base, "/api/v1/query", query=q)
        if answer.get("status") != "success":
            failures.append(f"{what}: {answer.get('errorType')}: {answer.get('error')}\n    {q}")
            continue
        n = len(answer["data"]["result"])
        print(f"{'ok ' if n else 'EMPTY'} {n:3d} series  {what}")
        if n == 0:
            failures.append(f"{what}: no data\n    {q}")
    print(f"{len(queries)} queries ({rules} alert rules) evaluated against {base}")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
