//! Links `raven` as a position-dependent executable (`-no-pie`) on Linux.
//!
//! A position-independent executable carries one dynamic relocation for every pointer in its
//! read-only data (vtables, string tables): about 1.7 MB here. The loader writes each one at
//! start, so those pages become private memory of every raven process for as long as it runs.
//! Linked at a fixed address, the same pages stay clean pages of the file, shared and
//! reclaimable. The libraries it loads keep their randomised addresses.
fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
