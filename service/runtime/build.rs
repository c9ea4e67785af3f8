//! Release builds of the binary lay out the request path's functions together.
//!
//! `link-order.txt` lists the functions a `tools/call` and a `tools/list` execute, hottest
//! first, as the linker names them (`loadtest/link-order.sh` writes it from callgrind
//! profiles). Given to the linker as `--symbol-ordering-file`, it packs that code (~1 MB)
//! at the start of `.text` instead of leaving it spread over 22 MB, so a call touches half
//! as many pages of code: 3–4 % less CPU per call (loadtest/RESULTS.md § Code layout). It
//! changes where functions sit, never what they do; names the list has that a build lacks
//! (the code moved on, a dependency or the toolchain changed) are skipped without a word,
//! and `python3 loadtest/lib/link_order.py --check BINARY service/runtime/link-order.txt`
//! says how many are left and in the list's order (`loadtest/production.sh` and
//! `loadtest/scale.sh` say it in their results when a build they measure is not).
//!
//! Only where the linker is known to take the flag: x86_64 Linux GNU, which links with
//! rust-lld since Rust 1.90, and no linker of one's own (`target.<triple>.linker`, `-C
//! linker`, `-fuse-ld`, linker features: GNU ld would refuse the flag).
//! `MCP_RUNTIME_LINK_ORDER=0` leaves it out.
//!
//! A profile-guided build (`-Cprofile-use`, as the image builds: docs/deployment.md) leaves
//! it out too: the profile lays out the code (rust-lld sorts the functions by the call graph
//! LLVM records from it), as fast as by the list, and a list taken from a build without the
//! profile names functions the profile inlined elsewhere (loadtest/RESULTS.md § Profile-guided).
//! Such a build says so in `mcp-runtime --version` (`MCP_RUNTIME_BUILD`).

use std::env;
use std::path::Path;

fn main() {
    println!("cargo::rerun-if-changed=link-order.txt");
    println!("cargo::rerun-if-env-changed=MCP_RUNTIME_LINK_ORDER");
    println!("cargo::rerun-if-env-changed=RUSTFLAGS");
    println!("cargo::rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let var = |name: &str| env::var(name).unwrap_or_default();
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    let profiled = flags.contains("profile-use");
    println!("cargo::rustc-env=MCP_RUNTIME_BUILD={}", if profiled { " (profile-guided)" } else { "" });
    let wanted = !profiled
        && var("PROFILE") == "release"
        && var("TARGET") == "x86_64-unknown-linux-gnu"
        && var("MCP_RUNTIME_LINK_ORDER") != "0"
        // The linker Cargo resolved from `target.<triple>.linker` (config or environment).
        && var("RUSTC_LINKER").is_empty()
        && !flags.contains("linker")
        && !flags.contains("fuse-ld");
    let list = Path::new(&var("CARGO_MANIFEST_DIR")).join("link-order.txt");
    if wanted && list.is_file() {
        println!("cargo::rustc-link-arg-bins=-Wl,--symbol-ordering-file={}", list.display());
        println!("cargo::rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
