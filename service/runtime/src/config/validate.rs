//! The validation of a parsed file ([`Config::validate`]): every section checked, every
//! problem collected, and a default standing in for each invalid value so the later stages
//! can look for their own problems.

use std::net::SocketAddr;
use std::time::Duration;

use mcp_adapter_api::Environment;
use mcp_protocol::{CacheHint, Implementation};

use super::{
    AdapterConfig, AuditSink, Caching, Config, ConfigError, HostPolicy, LimitsConfig, OriginPolicy, Problems,
    RawConfig, ServerConfig, TasksConfig, TelemetryConfig, TlsConfig, audit, auth, card, console, discovery, endpoints,
    pinning, raw, shared, user_auth,
};

impl Config {
    /// Every problem of a parsed file, and the config with defaults standing in for invalid
    /// values (`None` only when even a section's defaults do not validate, which the
    /// environment's `OTEL_*` fallbacks can cause).
    pub(super) fn validate(raw: RawConfig, env: Environment) -> (Option<Self>, Problems) {
        let mut problems = Problems::new();
        let lookup_env = &|var: &str| env.get(var).map(str::to_owned);
        let s = raw.server;
        let defaults = raw::RawServer::default();
        let listen = s.listen.parse().unwrap_or_else(|e| {
            problems.add("server.listen", format!("'{}' is not an IP:port address ({e})", s.listen));
            defaults.listen.parse().unwrap_or(SocketAddr::from(([127, 0, 0, 1], 8080)))
        });
        let path = if s.path.starts_with('/') && s.path.len() >= 2 {
            s.path
        } else {
            problems.add("server.path", format!("'{}' must start with '/' and name a path", s.path));
            defaults.path
        };
        let mut at_least = |key: &str, value: u64, min: u64| {
            if value < min {
                problems.add(format!("server.{key}"), format!("must be at least {min}"));
            }
        };
        at_least("max_listen_streams", s.max_listen_streams as u64, 1);
        at_least("max_listen_streams_per_caller", s.max_listen_streams_per_caller as u64, 1);
        at_least("page_size", s.page_size as u64, 1);
        at_least("max_body_bytes", s.max_body_bytes as u64, 1024);
        at_least("sse_keepalive_ms", s.sse_keepalive_ms, 100);
        at_least("call_timeout_ms", s.call_timeout_ms, 1);
        let sse_keepalive = Duration::from_millis(s.sse_keepalive_ms.max(100));
        let limits = problems
            .ok(LimitsConfig::from_raw(&raw.limits, sse_keepalive))
            .or_else(|| LimitsConfig::from_raw(&raw::RawLimits::default(), sse_keepalive).ok());
        let telemetry = problems
            .ok(TelemetryConfig::from_raw(&raw.telemetry, lookup_env))
            .or_else(|| TelemetryConfig::from_raw(&raw::RawTelemetry::default(), &|_| None).ok());
        let tls = problems.ok(raw.tls.as_ref().map(|t| TlsConfig::from_raw(t, &env)).transpose()).flatten();
        let hosts = HostPolicy::new(&s.allowed_hosts).unwrap_or_else(|p| {
            problems.add("server.allowed_hosts", p);
            HostPolicy::localhost()
        });
        let origins = OriginPolicy::new(&s.allowed_origins).unwrap_or_else(|p| {
            problems.add("server.allowed_origins", p);
            OriginPolicy::Localhost
        });
        let server = ServerConfig {
            listen,
            path,
            info: Implementation {
                name: s.name,
                version: s.version.unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_owned()),
                title: s.title,
                description: None,
                website_url: None,
            },
            instructions: s.instructions,
            hosts,
            origins,
            max_body_bytes: s.max_body_bytes.max(1024),
            call_timeout: Duration::from_millis(s.call_timeout_ms.max(1)),
            page_size: s.page_size.max(1),
            sse_keepalive,
            max_listen_streams: s.max_listen_streams.max(1),
            max_listen_streams_per_caller: s.max_listen_streams_per_caller.max(1),
            config_poll: (s.config_poll_ms > 0).then(|| Duration::from_millis(s.config_poll_ms)),
            shutdown_grace: Duration::from_millis(s.shutdown_grace_ms),
        };
        let hint = |h: raw::RawHint| CacheHint { ttl_ms: h.ttl_ms, cache_scope: h.scope };
        let c = raw.caching;
        let caching = Caching {
            discover: hint(c.discover),
            tools_list: hint(c.tools_list),
            prompts_list: hint(c.prompts_list),
            resources_list: hint(c.resources_list),
            resource_templates_list: hint(c.resource_templates_list),
            resources_read: hint(c.resources_read),
            skills_list: hint(c.skills_list),
            skills_get: hint(c.skills_get),
        };
        let request_state = problems
            .ok(shared::request_state(&raw.request_state, &env))
            .or_else(|| shared::request_state(&raw::RawRequestState::default(), &Environment::default()).ok());
        if raw.tasks.ttl_ms == 0 || raw.tasks.poll_interval_ms == 0 {
            problems.add("tasks", "ttl_ms and poll_interval_ms must be at least 1");
        }
        let tasks = TasksConfig {
            ttl: Duration::from_millis(raw.tasks.ttl_ms.max(1)),
            poll_interval: Duration::from_millis(raw.tasks.poll_interval_ms.max(1)),
        };
        let mut adapters: Vec<AdapterConfig> = Vec::with_capacity(raw.adapters.len());
        for (i, a) in raw.adapters.into_iter().enumerate() {
            let name = a.name.unwrap_or_else(|| a.kind.as_str().to_owned());
            if let Some(prev) = adapters.iter().position(|p| p.name == name) {
                problems.add(
                    format!("adapters[{i}].name"),
                    format!("'{name}' is already the name of adapters[{prev}]; give each adapter a unique name"),
                );
                continue;
            }
            adapters.push(AdapterConfig { name, user_auth: a.user_auth, kind: a.kind });
        }
        let auth_problems = problems.len();
        let auth = problems.ok(raw.auth.as_ref().map(|a| auth::auth(a, &env)).transpose()).flatten();
        // The console's rules need a valid [auth]: without one, its problem is [auth]'s.
        let console = if problems.len() == auth_problems {
            problems
                .ok(console::console(
                    &raw.console,
                    auth.as_ref(),
                    telemetry.as_ref().is_some_and(|t| t.metrics_listen.is_some()),
                    &server.path,
                ))
                .flatten()
        } else {
            None
        };
        let audit = problems.ok(audit::audit(&raw.audit, &env)).flatten();
        let resource = auth.as_ref().and_then(|a| a.resource.as_deref());
        let server_card = problems.ok(card::server_card(&raw.server_card, resource)).flatten();
        let discovery = problems.ok(discovery::discovery(&raw.discovery)).unwrap_or_default();
        let results = raw.discovery.results.clamp(1, discovery::MAX_RESULTS);
        let names: Vec<&str> = adapters.iter().map(|a| a.name.as_str()).collect();
        let console_path = console.as_ref().map(|c| c.path.as_str());
        let endpoints = endpoints::endpoints(
            &raw.endpoints,
            (&server.path, &server.info),
            (discovery, results),
            console_path.as_slice(),
            &names,
            &mut problems,
        );
        if auth.is_none()
            && let Some(e) = endpoints.iter().find(|e| !e.scopes.is_empty())
        {
            problems.add(
                format!("endpoints[{}].scopes", e.index),
                "scopes are checked against a caller's token: configure [auth] (issuers or introspection) first",
            );
        }
        let auth = auth.map(|a| a.with_endpoints(&endpoints));
        let pinning = problems.ok(pinning::pinning(&raw.pinning, &env)).unwrap_or_else(pinning::Pinning::off);
        let redis = problems.ok(raw.redis.as_ref().map(|r| shared::redis(r, &env)).transpose()).flatten();
        let rate_limits = problems.ok(shared::rate_limits(&raw.rate_limits)).unwrap_or_default();
        let user_auth = user_auth::user_auth(
            raw.user_auth.as_ref(),
            &raw.upstream_auth,
            auth.as_ref(),
            &adapters,
            redis.is_some(),
            &env,
            &mut problems,
        );
        let (Some(limits), Some(mut telemetry), Some(request_state)) = (limits, telemetry, request_state) else {
            return (None, problems);
        };
        // OTLP logs carry the audit trail only: the endpoint is kept when the trail goes there.
        let trail_to_collector = audit.as_ref().is_some_and(|a| a.sink == AuditSink::Otlp);
        if let Some(otlp) = telemetry.otlp.as_mut().filter(|_| !trail_to_collector) {
            otlp.logs_endpoint = None;
        }
        if trail_to_collector && telemetry.otlp.as_ref().and_then(|o| o.logs_endpoint.as_ref()).is_none() {
            problems.ok::<(), ConfigError>(Err(ConfigError::invalid(
                "audit.sink",
                "\"otlp\" sends the trail to the OpenTelemetry collector: set [telemetry] otlp_endpoint \
                 (or OTEL_EXPORTER_OTLP_ENDPOINT), or choose \"file\" or \"stdout\"",
            )));
        }
        let config = Self {
            server,
            caching,
            request_state,
            tasks,
            adapters,
            redis,
            rate_limits,
            console,
            audit,
            server_card,
            discovery,
            endpoints,
            pinning,
            user_auth,
            auth,
            telemetry,
            limits,
            tls,
            tool_policies: raw.tool_policies,
            env,
            source: std::sync::Arc::default(),
            problems: Vec::new(),
        };
        (Some(config), problems)
    }
}
