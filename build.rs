//! Keeps the per-statement path's code together in the versus binary: the functions on it are placed in
//! `.text.hot.versus` sections (see the crate docs), and lld, rustc's default linker on x86_64 Linux,
//! merges those with the rest of `.text` in input order unless told to keep `.text.hot` apart. GNU ld
//! groups `.text.hot.*` in its default script anyway and ignores the option with a warning.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,keep-text-section-prefix");
        // Lua scripts declare `sb_counter_inc` with `ffi.cdef` and LuaJIT looks it up by name in the
        // running program, as in sysbench: the binary exports it.
        println!("cargo::rustc-link-arg-bins=-Wl,--export-dynamic-symbol=sb_counter_inc");
    }
}
