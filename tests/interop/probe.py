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
