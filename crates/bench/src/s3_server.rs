//! `s3-server`: the S3-protocol server of the tests (s3s-fs behind real HTTP, SigV4 authentication), run
//! on its own so `scripts/bench` can put the production adapters' objects on S3 where no MinIO is
//! installed. Objects go under `$TMPDIR`; it prints its endpoint and the credentials it accepts as one
//! line of JSON and serves until killed.

fn main() {
    use common::testing::s3::{S3Server, ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY};
    let server = S3Server::start();
    println!(
        r#"{{"endpoint":"{}","region":"{REGION}","access_key_id":"{ACCESS_KEY_ID}","secret_access_key":"{SECRET_ACCESS_KEY}"}}"#,
        server.endpoint
    );
    loop {
        std::thread::park();
    }
}
