//! libFuzzer entry of `mcp_fuzz::schema_validation`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::schema_validation(data));
