//! The `mcp-runtime` binary: parse arguments and hand over to the library.

#[global_allocator]
static ALLOCATOR: mcp_runtime::cli::Allocator = mcp_runtime::cli::Allocator;

fn main() -> std::process::ExitCode {
    // First: the CLI adapter re-executes this binary as the supervisor of each tool run.
    mcp_adapter_cli::supervise::enable();
    mcp_runtime::cli::main()
}
