//! Links the system's PocketSphinx and SphinxBase through pkg-config, so the binding follows wherever
//! the distribution installed them; a machine without them gets a message naming the packages to install.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if let Err(error) = pkg_config::Config::new().probe("pocketsphinx") {
        panic!(
            "PocketSphinx was not found through pkg-config ({error}).\n\
             Install the Debian packages: apt-get install libpocketsphinx-dev pocketsphinx-en-us \
             pocketsphinx-testdata pocketsphinx (scripts/lib.sh: ensure_pocketsphinx)."
        );
    }
}
