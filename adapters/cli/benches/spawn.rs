//! Benchmark (not a test): calls per second of the CLI adapter against spawning the same
//! command directly from a Rust loop, measured in one run on the same machine.
//!
//! ```text
//! cargo bench -p mcp-adapter-cli --bench spawn
//! CLI_BENCH_CALLS=5000 CLI_BENCH_PROGRAM=/usr/bin/true cargo bench -p mcp-adapter-cli --bench spawn
//! ```
//!
//! The command is `printf %s <arg>` (tiny output, one templated argument) unless
//! `CLI_BENCH_PROGRAM` names another program (run without arguments). Sequential runs
//! measure the per-call cost; concurrent runs (`CLI_BENCH_CONCURRENCY`, default 4) measure
//! throughput with several calls in flight. The adapter side includes everything a call does
//! below the HTTP layer: argv rendering and checks, the concurrency slot, a scrubbed
//! environment, a new process group, pipes, the deadline, reaping and output mapping.
//!
//! The machine is shared, so its load drifts: the variants run interleaved in
//! `CLI_BENCH_ROUNDS` rounds (default 5) and each figure sums its share of every round.

use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_adapter_api::{Adapter, Build as _, BuildContext, CallContext, Input, Outcome, ToolCall};
use mcp_adapter_cli::{Cli, CliConfig};
use serde_json::{Map, Value, json};

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

struct Setup {
    program: String,
    args: Vec<String>,
    tool_args: Value,
    arguments: Map<String, Value>,
}

fn setup() -> Setup {
    match std::env::var("CLI_BENCH_PROGRAM") {
        Ok(program) => Setup { program, args: vec![], tool_args: json!([]), arguments: Map::new() },
        Err(_) => Setup {
            program: "/usr/bin/printf".into(),
            args: vec!["%s".into(), "hello".into()],
            tool_args: json!(["%s", "{text}"]),
            arguments: json!({"text": "hello"}).as_object().cloned().unwrap_or_default(),
        },
    }
}

const VARIANTS: [&str; 6] = [
    "direct: std Command::output()",
    "direct: std, adapter's settings (env_clear, pgid)",
    "direct: tokio Command::output()",
    "adapter: Cli::call_tool",
    "direct: tokio Command::output(), N in flight",
    "adapter: Cli::call_tool, N in flight",
];

fn main() {
    let calls: usize = env_or("CLI_BENCH_CALLS", 2000);
    let rounds: usize = env_or("CLI_BENCH_ROUNDS", 5).max(1);
    let concurrency: usize = env_or("CLI_BENCH_CONCURRENCY", 4);
    let per_round = calls.div_ceil(rounds);
    let s = setup();
    let config: CliConfig = serde_json::from_value(json!({"tools": [{
        "name": "bench", "description": "benchmark", "executable": s.program,
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        "args": s.tool_args, "max_concurrent": concurrency,
    }]}))
    .expect("bench config");
    let path = std::env::var("PATH").unwrap_or_default();
    let cx = BuildContext::with_env([("PATH", path)].into_iter().collect());
    let cli = Arc::new(Cli::build(&config, &cx).expect("bench tool"));
    let arguments = Arc::new(s.arguments.clone());
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    println!(
        "command: {} {}   calls per variant: {}   rounds: {rounds}   N: {concurrency}   cores: {}",
        s.program,
        s.args.join(" "),
        per_round * rounds,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    // Warm-up: page cache, allocator, tokio's process driver.
    for _ in 0..50 {
        let _ = Command::new(&s.program).args(&s.args).output();
    }

    let mut totals = [Duration::ZERO; VARIANTS.len()];
    for _ in 0..rounds {
        for (i, total) in totals.iter_mut().enumerate() {
            let start = Instant::now();
            match i {
                0 => (0..per_round).for_each(|_| {
                    assert!(Command::new(&s.program).args(&s.args).output().expect("spawn").status.success());
                }),
                1 => (0..per_round).for_each(|_| {
                    let out = Command::new(&s.program)
                        .args(&s.args)
                        .env_clear()
                        .process_group(0)
                        .stdin(Stdio::null())
                        .output()
                        .expect("spawn");
                    assert!(out.status.success());
                }),
                2 => rt.block_on(async {
                    for _ in 0..per_round {
                        let out = tokio::process::Command::new(&s.program).args(&s.args).output().await;
                        assert!(out.expect("spawn").status.success());
                    }
                }),
                3 => rt.block_on(async {
                    for _ in 0..per_round {
                        call_once(Arc::clone(&cli), Arc::clone(&arguments)).await;
                    }
                }),
                4 => rt.block_on(in_flight(per_round, concurrency, || {
                    let (program, args) = (s.program.clone(), s.args.clone());
                    async move {
                        let out = tokio::process::Command::new(program).args(args).output().await;
                        assert!(out.expect("spawn").status.success());
                    }
                })),
                _ => rt.block_on(in_flight(per_round, concurrency, || {
                    call_once(Arc::clone(&cli), Arc::clone(&arguments))
                })),
            }
            *total += start.elapsed();
        }
    }
    let rate = |i: usize| (per_round * rounds) as f64 / totals[i].as_secs_f64();
    for (i, label) in VARIANTS.iter().enumerate() {
        let label = label.replace('N', &concurrency.to_string());
        println!("{label:<52} {:>8.0} calls/s  ({:.3} s)", rate(i), totals[i].as_secs_f64());
    }
    println!("ratio adapter / direct std, one at a time:            {:.2}", rate(3) / rate(0));
    println!("ratio adapter / direct std with the same settings:    {:.2}", rate(3) / rate(1));
    println!("ratio adapter / direct tokio, {concurrency} in flight:              {:.2}", rate(5) / rate(4));
}

async fn call_once(cli: Arc<Cli>, arguments: Arc<Map<String, Value>>) {
    let cx = CallContext::detached(Duration::from_secs(30));
    let call = ToolCall { name: "bench", arguments: &arguments, input: Input::default() };
    match cli.call_tool(call, &cx).await.expect("call") {
        Outcome::Complete(r) => assert!(!r.is_error, "{r:?}"),
        Outcome::InputRequired(_) => unreachable!("a CLI tool asked for input"),
    }
}

/// Runs `calls` tasks made by `task`, `concurrency` at a time.
async fn in_flight<F>(calls: usize, concurrency: usize, task: impl Fn() -> F)
where
    F: Future<Output = ()> + Send + 'static,
{
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..calls {
        if set.len() == concurrency {
            set.join_next().await.expect("task").expect("join");
        }
        set.spawn(task());
    }
    while set.join_next().await.is_some() {}
}
