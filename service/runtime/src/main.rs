//! The `mcp-runtime` binary: parse arguments and hand over to the library.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    mcp_runtime::cli::main()
}
