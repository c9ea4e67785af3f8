//! The images the harness runs, made from local files (no registry is reachable in CI): a
//! Debian package's binary and the libraries `ldd` lists for it, copied into a `FROM scratch`
//! image that the engine builds from a context sent over its API (testcontainers'
//! `GenericBuildableImage`, so Docker and podman build it alike). The tag is a SHA-256 of
//! everything that goes in: an upgraded package makes a new image, an unchanged one is built
//! once per machine and found by every later test process.

use std::path::{Path, PathBuf};
use std::process::Command;

use testcontainers::core::BuildImageOptions;
use testcontainers::runners::AsyncBuilder as _;
use testcontainers::{GenericBuildableImage, GenericImage};
use tokio::sync::OnceCell;

use crate::containers::{check_engine, on_engine};

/// `redis-server` (Debian's `redis-server` package; also the Sentinel, with `--sentinel`).
pub async fn redis() -> GenericImage {
    static IMAGE: OnceCell<GenericImage> = OnceCell::const_new();
    // /usr/bin/redis-server is a link to redis-check-rdb, and Redis picks its mode from the
    // name it was started under: the file goes in under the server's name.
    let recipe = || {
        Recipe::new("mcp-test-redis", "redis-server")
            .binary("/usr/bin/redis-server")
            .lines("WORKDIR /data\nENTRYPOINT [\"/usr/bin/redis-server\"]")
    };
    made(&IMAGE, recipe).await
}

/// nginx (Debian's `nginx`), with the users its workers switch to.
pub async fn nginx() -> GenericImage {
    static IMAGE: OnceCell<GenericImage> = OnceCell::const_new();
    let recipe = || {
        Recipe::new("mcp-test-nginx", "nginx")
            .binary("/usr/sbin/nginx")
            // A master started as root runs its workers as nobody:nogroup (Debian's build).
            .data(
                "/etc/passwd",
                "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n",
            )
            .data("/etc/group", "root:x:0:\nnogroup:x:65534:\n")
            .lines("WORKDIR /var/lib/nginx\nENTRYPOINT [\"/usr/sbin/nginx\"]")
    };
    made(&IMAGE, recipe).await
}

/// Prometheus (Debian's `prometheus`, the version tests/observability/run.sh pins).
pub async fn prometheus() -> GenericImage {
    static IMAGE: OnceCell<GenericImage> = OnceCell::const_new();
    let recipe = || {
        Recipe::new("mcp-test-prometheus", "prometheus")
            .binary("/usr/bin/prometheus")
            .lines("WORKDIR /prometheus\nENTRYPOINT [\"/usr/bin/prometheus\"]")
    };
    made(&IMAGE, recipe).await
}

/// The image `recipe` makes, built (or found) once per process, on the engine's runtime.
async fn made(image: &'static OnceCell<GenericImage>, recipe: fn() -> Recipe) -> GenericImage {
    on_engine(async move {
        check_engine().await;
        image.get_or_init(|| recipe().build()).await.clone()
    })
    .await
}

/// What goes into one image: files at their paths in it, then Dockerfile lines.
struct Recipe {
    name: &'static str,
    package: &'static str,
    files: Vec<(Source, String)>,
    lines: String,
}

enum Source {
    File(PathBuf),
    Data(Vec<u8>),
}

impl Recipe {
    fn new(name: &'static str, package: &'static str) -> Self {
        Self { name, package, files: Vec::new(), lines: String::new() }
    }

    /// `path` from the package, and every library it links, each at the path the loader
    /// resolved it to (symbolic links followed: the image holds the files).
    fn binary(mut self, path: &str) -> Self {
        let bin = self.installed(path);
        let out = Command::new("ldd").arg(&bin).output().expect("run ldd");
        let listing = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && !listing.contains("not found"), "ldd {path}:\n{listing}");
        for lib in listing.lines().filter_map(|l| l.split_whitespace().find(|w| w.starts_with('/'))) {
            self.files.push((Source::File(resolved(Path::new(lib))), lib.to_owned()));
        }
        self.files.push((Source::File(resolved(&bin)), path.to_owned()));
        self
    }

    fn data(mut self, at: &str, text: &str) -> Self {
        self.files.push((Source::Data(text.as_bytes().to_vec()), at.to_owned()));
        self
    }

    fn lines(mut self, text: &str) -> Self {
        self.lines = text.to_owned();
        self
    }

    /// A file of the package, or a loud failure naming the command that installs it.
    fn installed(&self, path: &str) -> PathBuf {
        let p = PathBuf::from(path);
        assert!(
            p.exists(),
            "{path} is missing: the harness makes the {} image from Debian's `{}` package: \
             run `apt-get install -y {}` (tests/run.sh does)",
            self.name,
            self.package,
            self.package
        );
        p
    }

    /// Builds the image unless one with this content exists already.
    async fn build(self) -> GenericImage {
        let version = Command::new("dpkg-query").args(["-W", "-f=${Version}", self.package]).output();
        let version = version.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
        let dockerfile = format!(
            "FROM scratch\nCOPY root/ /\n{}\nLABEL org.opencontainers.image.source=\"debian:{} {version}\"\n",
            self.lines, self.package
        );
        let Recipe { name, files, .. } = self;
        // Reading every file (Prometheus is 50 MB) off the engine runtime's workers.
        let (tag, dockerfile, files) = tokio::task::spawn_blocking(move || {
            let tag = content_hash(&dockerfile, &files);
            (tag, dockerfile, files)
        })
        .await
        .expect("hash the image's files");
        let mut image = GenericBuildableImage::new(format!("localhost/{name}"), tag).with_dockerfile_string(dockerfile);
        for (source, at) in files {
            let target = format!("root{at}");
            image = match source {
                Source::File(path) => image.with_file(path, target),
                Source::Data(bytes) => image.with_data(bytes, target),
            };
        }
        let started = std::time::Instant::now();
        let built = image
            .build_image_with(BuildImageOptions::new().with_skip_if_exists(true))
            .await
            .unwrap_or_else(|e| panic!("building the {name} image: {e}"));
        eprintln!("image localhost/{name} ready in {:.1?}", started.elapsed());
        built
    }
}

fn resolved(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first 16 hex digits of a SHA-256 over the Dockerfile and every file's path, mode and bytes.
fn content_hash(dockerfile: &str, files: &[(Source, String)]) -> String {
    use std::os::unix::fs::PermissionsExt as _;
    let mut hash = ring::digest::Context::new(&ring::digest::SHA256);
    hash.update(dockerfile.as_bytes());
    for (source, at) in files {
        hash.update(at.as_bytes());
        match source {
            Source::File(path) => {
                let mode = std::fs::metadata(path).map(|m| m.permissions().mode()).unwrap_or_default();
                hash.update(&mode.to_le_bytes());
                hash.update(&std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display())));
            }
            Source::Data(bytes) => hash.update(bytes),
        }
    }
    hash.finish().as_ref().iter().take(8).map(|b| format!("{b:02x}")).collect()
}
