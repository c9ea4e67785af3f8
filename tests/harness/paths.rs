//! Locations: the repository, the interop install (official schemas, conformance suite), the
//! runtime binary (built on demand) and k6.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// Where `tests/interop/setup.sh` installs the third-party interop parts: `$INTEROP_DIR`, else
/// `target/interop` of this repository.
pub fn interop_dir() -> PathBuf {
    std::env::var_os("INTEROP_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("target/interop"))
}

/// The official JSON Schema documents of the protocol revisions, as `tests/interop/setup.sh`
/// installs them: `$MCP_SCHEMA_DIR` (tests/run.sh sets it), else `<interop dir>/schema`. Fails
/// loudly when they are missing: validating wire output against them is part of the tests.
pub fn schema_dir() -> PathBuf {
    let dir = std::env::var_os("MCP_SCHEMA_DIR").map(PathBuf::from).unwrap_or_else(|| interop_dir().join("schema"));
    assert!(
        dir.join("schema-2026-07-28.json").is_file(),
        "the official MCP JSON Schemas are not installed at {}: run `bash tests/interop/setup.sh` \
         (tests/run.sh does; set MCP_SCHEMA_DIR or INTEROP_DIR when they were installed elsewhere)",
        dir.display()
    );
    dir
}

/// The `mcp-runtime` binary of this source tree with the test-only `faults` fixture set,
/// built once per test process with `cargo build --locked -p mcp-runtime --bin mcp-runtime
/// --features test-fixtures` (same profile and target directory as the running test), so a
/// test never runs a stale binary that happens to be there.
pub fn runtime_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        // target/<profile>/deps/<test> → target/<profile>/mcp-runtime
        let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>");
        let target_dir = profile_dir.parent().expect("target dir");
        let mut build = Command::new(env!("CARGO"));
        build.args(["build", "--locked", "-p", "mcp-runtime", "--bin", "mcp-runtime", "--features", "test-fixtures"]);
        build.arg("--target-dir").arg(target_dir).current_dir(repo());
        // Not the variables cargo gave this test process (CARGO_MANIFEST_DIR, CARGO_PKG_*,
        // OUT_DIR): ring's build script reruns when they change, and with them set here every
        // build from a test and every `cargo test` after it rebuilt ring and all above it.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if ["CARGO_MANIFEST_", "CARGO_PKG_", "CARGO_CRATE_", "CARGO_BIN_", "CARGO_PRIMARY_PACKAGE", "OUT_DIR"]
                .iter()
                .any(|p| name.starts_with(p))
            {
                build.env_remove(name.as_ref());
            }
        }
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        let status = build.status().expect("run cargo build");
        assert!(status.success(), "building mcp-runtime failed ({status})");
        let bin = profile_dir.join("mcp-runtime");
        assert!(bin.is_file(), "mcp-runtime binary not found at {}", bin.display());
        bin
    })
}

/// The k6 binary: `$K6`, else the venv `loadtest/install-tools.sh k6` creates under
/// `target/tools/`, else `k6` on PATH. Fails loudly when there is none.
pub fn k6() -> PathBuf {
    if let Some(k6) = std::env::var_os("K6") {
        return PathBuf::from(k6);
    }
    let venv = repo().join("target/tools/venv/bin/k6");
    if venv.is_file() {
        return venv;
    }
    std::env::var_os("PATH")
        .and_then(|p| std::env::split_paths(&p).map(|d| d.join("k6")).find(|c| c.is_file()))
        .unwrap_or_else(|| {
            panic!(
                "k6 is not installed: run `bash loadtest/install-tools.sh k6` (tests/run.sh does this before the tests)"
            )
        })
}
