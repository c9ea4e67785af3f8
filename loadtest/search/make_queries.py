#!/usr/bin/env python3
"""Writes the fixed query set of the tool-search benchmark (service/runtime/benches/tool_search.rs)
for one OpenAPI document: 200 natural-language queries, each made from one operation's
summary by rewording it, with the operation it should find.

    python3 loadtest/search/make_queries.py DOCUMENT.json NAME > loadtest/search/NAME.jsonl

Which operations: those whose summary no other operation of the document shares (a summary
that 500 operations carry, as Microsoft Graph's "Get the number of the resource" does, names
none of them) and that has at least two words; sorted by operationId, then 200 taken at even
steps, so the set is spread over the whole API and the same on every run.

The rewording, the same rules for every query, so it is repeatable and not tuned per query:
the leading verb becomes another a person would use ("List" -> "show all", "Get" -> "fetch",
"Create" -> "make a new", ...), some nouns become their everyday short forms ("repository" ->
"repo", "organization" -> "org", "the authenticated user" -> "me"), articles are dropped,
camelCase words are split ("servicePrincipal" -> "service principal"), the text is lower
case, and a word repeated at once is said once. Each line: {"query", "operationId", "method", "path", "summary"}.
"""
import json
import re
import sys

VERBS = {
    "list": "show all",
    "get": "fetch",
    "create": "make a new",
    "update": "change",
    "delete": "remove",
    "remove": "take away",
    "add": "put",
    "check": "see",
    "set": "configure",
    "invoke": "run",
    "retrieve": "look up",
    "download": "fetch the file of",
    "upload": "send",
    "cancel": "stop",
    "enable": "turn on",
    "disable": "turn off",
    "replace": "overwrite",
    "search": "find",
}
NOUNS = [
    (r"\bthe authenticated user\b", "me"),
    (r"\bauthenticated user\b", "me"),
    (r"\brepositories\b", "repos"),
    (r"\brepository\b", "repo"),
    (r"\borganizations\b", "orgs"),
    (r"\borganization\b", "org"),
    (r"\bpull requests\b", "PRs"),
    (r"\bpull request\b", "PR"),
    (r"\bnavigation property\b", ""),
    (r"\bconfiguration\b", "config"),
    (r"\binformation\b", "info"),
]
ARTICLES = re.compile(r"\b(a|an|the)\s+", re.IGNORECASE)


def reword(summary):
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", summary.strip().rstrip("."))
    words = text.split()
    first = words[0].lower()
    if first in VERBS:
        words[0] = VERBS[first]
    text = " ".join(words)
    text = ARTICLES.sub("", text)
    text = text.lower()
    for pattern, short in NOUNS:
        text = re.sub(pattern, short, text)
    text = re.sub(r"\b(\w+)( \1\b)+", r"\1", re.sub(r"\s+", " ", text))  # "make new new to" -> "make new to"
    return text.strip()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    doc = json.load(open(sys.argv[1], encoding="utf-8"))
    ops = []
    for path, item in doc.get("paths", {}).items():
        for method, op in item.items():
            if isinstance(op, dict) and op.get("operationId") and op.get("summary"):
                ops.append((op["operationId"], method, path, op["summary"].strip()))
    count = {}
    for op in ops:
        key = op[3].lower()
        count[key] = count.get(key, 0) + 1
    unique = sorted(op for op in ops if count[op[3].lower()] == 1 and len(op[3].split()) >= 2)
    if len(unique) < 200:
        sys.exit(f"{sys.argv[2]}: only {len(unique)} operations with a summary of their own")
    step = len(unique) / 200
    for i in range(200):
        op_id, method, path, summary = unique[int(i * step)]
        line = {"query": reword(summary), "operationId": op_id, "method": method, "path": path, "summary": summary}
        print(json.dumps(line, ensure_ascii=False))


if __name__ == "__main__":
    main()
