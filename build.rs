//! napi-rs's link setup, and the one place that decides the global allocator per target.

/// Overrides the per-target choice below: `mimalloc` or `system` (for measuring one against the
/// other on any target; `benchmark/allocator.js` builds both this way).
const ALLOCATOR_OVERRIDE: &str = "BATCHTOK_ALLOCATOR";

fn main() {
    napi_build::setup();

    // mimalloc is the global allocator where it was measured to win or is what Node addons
    // commonly ship, and only with the `mimalloc` feature (on by default). The measurements and
    // how to repeat them: `benchmark/results/allocator.md`.
    //
    // - x86_64 Linux, glibc: the system allocator. mimalloc 2 (the line Cargo.toml builds) spent
    //   up to 1.2 times glibc's CPU time per MiB on the release candidate and held 1.3 times its
    //   steady RSS; mimalloc 3, level or behind in CPU time and ahead in RSS, crashes a process
    //   whose worker_threads alone load the addon (Cargo.toml says which versions).
    // - x86_64 Linux, musl: mimalloc. No musl Node runs on the measuring machine; in a static musl
    //   executable (`benchmark/allocator.rs`) the engines spent 1.2 to 2.6 times less CPU time per
    //   MiB with mimalloc 3 than with musl's malloc, and a second thread gains little or loses with
    //   musl's malloc. The release workflow's `allocator` job measures it under Alpine's Node.
    // - macOS and x86_64 Windows: mimalloc, as many Node addons ship it; the release workflow's
    //   `allocator` job prints the comparison on those runners.
    // - Everything else (arm64 Linux, Windows on arm64, others): the system allocator, until the
    //   release workflow's table shows otherwise.
    //
    // `src/allocator.rs` reads the resulting cfg.
    println!("cargo::rustc-check-cfg=cfg(batchtok_mimalloc)");
    println!("cargo::rerun-if-env-changed={ALLOCATOR_OVERRIDE}");
    let target = |key: &str| std::env::var(key).unwrap_or_default();
    let (os, env, arch) = (
        target("CARGO_CFG_TARGET_OS"),
        target("CARGO_CFG_TARGET_ENV"),
        target("CARGO_CFG_TARGET_ARCH"),
    );
    let by_target = match os.as_str() {
        "macos" => arch == "x86_64" || arch == "aarch64",
        "windows" => env == "msvc" && arch == "x86_64",
        "linux" => arch == "x86_64" && env == "musl",
        _ => false,
    };
    let wanted = match std::env::var(ALLOCATOR_OVERRIDE).as_deref() {
        Ok("mimalloc") => true,
        Ok("system") => false,
        Ok(other) => panic!("{ALLOCATOR_OVERRIDE}={other}: expected 'mimalloc' or 'system'"),
        Err(_) => by_target,
    };
    if wanted && std::env::var_os("CARGO_FEATURE_MIMALLOC").is_some() {
        println!("cargo::rustc-cfg=batchtok_mimalloc");
    }
}
