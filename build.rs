//! napi-rs's link setup, and the one place that decides the global allocator per target.

/// Overrides the per-target choice below: `mimalloc` or `system` (for measuring one against the
/// other on any target; `benchmark/allocator.js` builds both this way).
const ALLOCATOR_OVERRIDE: &str = "BATCHTOK_ALLOCATOR";

fn main() {
    napi_build::setup();

    // mimalloc is the global allocator only where it wins or is what Node addons commonly ship,
    // and only with the `mimalloc` feature (on by default):
    //
    // - Linux: not by default. On x86_64 glibc the default engine (the release candidate's
    //   pipeline) is slower with mimalloc than with glibc's malloc, though the stable fallback is
    //   faster (`benchmark/results/allocator.md`). A likely cause: a dlopen'ed addon needs
    //   mimalloc's local-dynamic TLS model, which costs a `__tls_get_addr` call on every
    //   allocation; the same code linked into an executable (the Rust benchmarks) is faster with
    //   mimalloc.
    // - macOS and x86_64 Windows: mimalloc, as many Node addons ship it; their TLS has no such
    //   cost. `benchmark/allocator.js` compares the two on any machine.
    // - Everything else (musl, Windows on arm64, others): the system allocator.
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
