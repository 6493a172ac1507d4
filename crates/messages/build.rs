//! Generates the Rust types of `proto/` with a compiler written in Rust (protox), so building needs no
//! `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = "../../proto";
    let files = ["speech/bus/v1/messages.proto"];
    let descriptors = protox::compile(files, [root])?;
    prost_build::Config::new().compile_fds(descriptors)?;
    println!("cargo:rerun-if-changed={root}");
    Ok(())
}
