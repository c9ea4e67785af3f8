"""The functions callgrind profiles executed, hottest first, as the linker names them.

    python3 loadtest/lib/link_order.py BINARY PROFILE.out... > service/runtime/link-order.txt
    python3 loadtest/lib/link_order.py --check BINARY service/runtime/link-order.txt

Each PROFILE is a callgrind output recorded with `--demangle=no` (loadtest/link-order.sh).
A function's weight is its own instructions summed over the profiles; only names BINARY
defines in its code are kept (libc's are not the linker's to place). On stderr: how many
functions, their code size, and how many 4 KiB pages of BINARY they touch now against packed.

`--check` says how many of the list's names BINARY has, and how many sit in the list's order:
a dependency, feature or toolchain change renames most of them (the names carry a hash of
the crate's build inputs), and then the list wants regenerating; a build from an older list
has the names in another order.
"""

import collections
import re
import subprocess
import sys

# One row of `callgrind_annotate --auto=no`: "  1,234 ( 0.5%)  file:function [object]".
ROW = re.compile(r"\s*([\d,]+)\s+\([^)]*\)\s+(\S+)")


def weights(profile):
    out = subprocess.run(
        ["callgrind_annotate", "--auto=no", "--threshold=100", profile],
        check=True, capture_output=True, text=True,
    ).stdout
    for line in out.splitlines():
        m = ROW.match(line)
        if m and "PROGRAM TOTALS" not in line:
            # file:function; a recursive call's row carries a "'2" suffix.
            name = re.sub(r"'\d+$", "", m.group(2).rsplit(":", 1)[-1])
            yield name, int(m.group(1).replace(",", ""))


def code_symbols(binary):
    """name -> (address, size) of BINARY's functions."""
    out = subprocess.run(["nm", "-S", "--defined-only", binary], check=True, capture_output=True, text=True).stdout
    symbols = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            symbols[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    return symbols


def check(binary, listed):
    names = [n.strip() for n in open(listed) if n.strip()]
    symbols = code_symbols(binary)
    found = [symbols[n][0] for n in names if n in symbols]
    # Laid out by this list: each function after the one listed before it (a build from an
    # older list has these names too, elsewhere).
    in_order = sum(b > a for a, b in zip(found, found[1:])) + bool(found)
    print(f"{len(found)} of the {len(names)} functions {listed} names are in {binary}, {in_order} in its order")
    if len(found) < len(names) * 0.9:
        sys.exit("fewer than 90 % are: regenerate the list (bash loadtest/link-order.sh)")
    if in_order < len(found) * 0.9:
        sys.exit("the build was not laid out by this list (an older list, or MCP_RUNTIME_LINK_ORDER=0): rebuild it")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        return check(sys.argv[2], sys.argv[3])
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, profiles = sys.argv[1], sys.argv[2:]
    total = collections.Counter()
    for p in profiles:
        for name, cost in weights(p):
            total[name] += cost
    symbols = code_symbols(binary)
    hot = [n for n, _ in total.most_common() if n in symbols]
    if not hot:
        sys.exit(f"none of the profiled functions is in {binary}: were the profiles recorded with --demangle=no?")
    size = sum(symbols[n][1] for n in hot)
    pages = {p for n in hot for p in range(symbols[n][0] // 4096, (symbols[n][0] + symbols[n][1]) // 4096 + 1)}
    print("\n".join(hot))
    print(
        f"{len(hot)} functions, {size / 1e6:.2f} MB of code on {len(pages)} pages of 4 KiB "
        f"({size // 4096 + 1} when packed)",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
