//! Sign-in in a real browser: headless Chromium driven over WebDriver (chromedriver) goes through the
//! authorization-code flow against a relying party on another origin (`localhost` beside the token
//! service on `127.0.0.1`), as every real relying party is. It catches what HTTP-level tests cannot: a
//! page policy that makes the browser refuse the redirect after the form. Chromium and chromedriver come
//! from Debian (`scripts/test` installs them); without them the test fails and says so.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{ClientBuilder, Locator};

use crate::support::*;

struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn chromedriver() -> (Driver, u16) {
    let port = free_port();
    let child = Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect(
            "chromedriver is needed for the browser tests: apt-get install chromium chromium-driver \
             (scripts/test installs them)",
        );
    let driver = Driver(child);
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return (driver, port);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("chromedriver did not start on port {port}");
}

/// A relying party's callback on `localhost`: answers every request with a small page.
fn relying_party() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = "<html><body><p id=\"done\">back at the relying party</p></body></html>";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://localhost:{port}/callback")
}

async fn a_browser_signs_in_and_lands_at_the_relying_party(backend: Backend) {
    let callback = relying_party();
    let auth = TestAuth::start(backend).await;
    let spec = directory::ClientSpec {
        redirect_uris: vec![callback.clone()],
        ..full_client_spec()
    };
    let s = setup_with(auth, spec).await;
    let (_driver, port) = chromedriver().await;
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({"args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                                    "--disable-dev-shm-usage"]}),
    );
    // The WebDriver client's TLS stack needs a process-wide crypto provider (plain HTTP is used here).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let browser = ClientBuilder::rustls()
        .expect("a WebDriver client")
        .capabilities(capabilities)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a Chromium session (is the chromium package installed?)");

    let authorize = reqwest::Url::parse_with_params(
        &s.auth.authorize_url("acme"),
        &[
            ("client_id", s.client_id.as_str()),
            ("response_type", "code"),
            ("redirect_uri", callback.as_str()),
            ("state", "browser-1"),
        ],
    )
    .unwrap();
    browser.goto(authorize.as_str()).await.unwrap();
    browser
        .find(Locator::Id("username"))
        .await
        .expect("the login form")
        .send_keys(USERNAME)
        .await
        .unwrap();
    browser
        .find(Locator::Id("password"))
        .await
        .unwrap()
        .send_keys(PASSWORD)
        .await
        .unwrap();
    browser
        .find(Locator::Css("button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Id("done"))
        .await
        .expect("the browser reached the relying party");
    let landed = browser.current_url().await.unwrap();
    assert!(landed.as_str().starts_with(&callback), "{landed}");
    let pairs: std::collections::HashMap<String, String> = landed
        .query_pairs()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(pairs["state"], "browser-1");
    assert!(pairs.contains_key("session_state"));
    let (status, body, _) = exchange(
        &s.auth,
        &s.client_id,
        Some(&s.secret),
        &pairs["code"],
        &[("redirectURI", callback.as_str())],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["id_token"].is_string());

    // Signed in: the next authorization request goes straight back with a code, no form.
    let again = authorize
        .as_str()
        .replace("state=browser-1", "state=browser-2");
    browser.goto(&again).await.unwrap();
    browser
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Id("done"))
        .await
        .expect("the browser went straight back");
    let landed = browser.current_url().await.unwrap();
    assert!(landed.as_str().contains("state=browser-2"), "{landed}");
    assert!(landed.as_str().contains("code="), "{landed}");
    browser.close().await.unwrap();
}

common::backend_tests!(a_browser_signs_in_and_lands_at_the_relying_party);
