"""What every Python client probe shares: one `PASS name (detail)` / `FAIL name: reason` line per
check, and a closing `N passed, N failed` (the probes sit beside this file, so Python finds it)."""

from typing import Any

_counts = {"passed": 0, "failed": 0}


class CheckFailed(Exception):
    """A check's own verdict (printed without the exception type)."""


def ensure(condition: Any, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


async def check(name: str, fn: Any) -> None:
    """Runs one check: `fn` returns a detail for the PASS line, or raises the reason it failed."""
    try:
        detail = await fn()
        _counts["passed"] += 1
        print(f"PASS {name}" + (f" ({' '.join(str(detail).split())[:300]})" if detail else ""), flush=True)
    except Exception as e:  # noqa: BLE001 - every failure is a FAIL line
        _counts["failed"] += 1
        reason = f"{type(e).__name__}: {e}" if not isinstance(e, CheckFailed) else str(e)
        print(f"FAIL {name}: {' '.join(reason.split())[:300]}", flush=True)


def finish(not_run: int = 0) -> int:
    """Prints the closing line; the exit status (1 when a check failed). `not_run` counts checks
    that could not start at all."""
    failed = _counts["failed"] + not_run
    print(f"{_counts['passed']} passed, {failed} failed", flush=True)
    return 1 if failed else 0


async def browse(start: str, user: str) -> tuple[int, str]:
    """A person's browser, scripted: follows redirects, keeps cookies per host, and submits the
    form of each page it lands on (oidc-provider's development login gets `user` and any
    password; its consent is confirmed) until a page without a form. Returns that page's status
    and text (tags removed)."""
    import re
    from urllib.parse import urlencode, urljoin, urlsplit

    import httpx2

    jars: dict[str, dict[str, str]] = {}
    url, form = start, None
    async with httpx2.AsyncClient(follow_redirects=False, timeout=httpx2.Timeout(15.0)) as http:
        for _ in range(30):
            jar = jars.setdefault(urlsplit(url).netloc, {})
            headers = {"cookie": "; ".join(f"{k}={v}" for k, v in jar.items())} if jar else {}
            if form is None:
                res = await http.get(url, headers=headers)
            else:
                headers["content-type"] = "application/x-www-form-urlencoded"
                res = await http.post(url, content=form, headers=headers)
            for c in res.headers.get_list("set-cookie"):
                k, _, v = c.split(";")[0].partition("=")
                jar[k.strip()] = v
            if 300 <= res.status_code < 400:
                url, form = urljoin(url, res.headers["location"]), None
                continue
            html = res.text
            found = re.search(r'<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)</form>', html)
            if not found:
                return res.status_code, " ".join(re.sub(r"<[^>]*>", " ", html).split())
            fields = dict(re.findall(r'<input[^>]*name="([^"]+)"(?:[^>]*value="([^"]*)")?', found.group(2)))
            if "login" in fields:
                fields.update(login=user, password="any")
            url, form = urljoin(url, found.group(1).replace("&amp;", "&")), urlencode(fields)
    raise CheckFailed(f"more than 30 hops from {start}")
