//! napi-rs's link setup, and the one place that decides the global allocator per target.

fn main() {
    napi_build::setup();

    // mimalloc is the global allocator where it builds and is measured or widely used in Node
    // addons: glibc Linux (x86_64, aarch64), macOS and x86_64 Windows. Elsewhere (musl, where its
    // dynamic-TLS build is not proven in a dlopen'ed addon; Windows on arm64; anything else) the
    // system allocator stays, and the build still succeeds. `src/allocator.rs` reads this cfg.
    println!("cargo::rustc-check-cfg=cfg(batchtok_mimalloc)");
    let target = |key: &str| std::env::var(key).unwrap_or_default();
    let (os, env, arch) = (
        target("CARGO_CFG_TARGET_OS"),
        target("CARGO_CFG_TARGET_ENV"),
        target("CARGO_CFG_TARGET_ARCH"),
    );
    let proven = match os.as_str() {
        "linux" => env == "gnu" && (arch == "x86_64" || arch == "aarch64"),
        "macos" => arch == "x86_64" || arch == "aarch64",
        "windows" => env == "msvc" && arch == "x86_64",
        _ => false,
    };
    if proven && std::env::var_os("CARGO_FEATURE_MIMALLOC").is_some() {
        println!("cargo::rustc-cfg=batchtok_mimalloc");
    }
}
