//! The `mcp-runtime` binary: parse arguments and hand over to the library.

fn main() -> std::process::ExitCode {
    mcp_runtime::cli::main()
}
