//! `sign-cost`: what one Ed25519 signature of an access-token-sized message costs on this machine, on one
//! core. The token endpoint signs once per token, so this bounds its throughput per core.

use std::time::Instant;

use ring::signature::{Ed25519KeyPair, KeyPair};

fn main() {
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).expect("key generation");
    let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).expect("fresh key");
    let message = vec![b'x'; 420];
    let rounds = 20_000;
    for _ in 0..1000 {
        std::hint::black_box(pair.sign(&message));
    }
    let started = Instant::now();
    for _ in 0..rounds {
        std::hint::black_box(pair.sign(std::hint::black_box(&message)));
    }
    let sign = started.elapsed().as_secs_f64() / rounds as f64;
    let started = Instant::now();
    for _ in 0..rounds / 10 {
        let pair = Ed25519KeyPair::from_pkcs8(std::hint::black_box(pkcs8.as_ref())).expect("key");
        std::hint::black_box(pair.public_key());
    }
    let parse = started.elapsed().as_secs_f64() / (rounds / 10) as f64;
    println!(
        "ed25519 sign: {:.1} us ({:.0} signatures/s on one core)",
        sign * 1e6,
        1.0 / sign
    );
    println!(
        "ed25519 key parse (derives the public key): {:.1} us",
        parse * 1e6
    );
}
