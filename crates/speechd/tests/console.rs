//! The web console in a real browser (headless Chromium over WebDriver, as docs/console.md describes
//! it), served by `speechd serve`: the bootstrap admin signs in through the token service, opens the
//! dashboard of a folder holding known calls and finds every chart's figures equal to `/stats` and
//! `/appstats`, with no serious or critical accessibility violation (axe-core, run in the page); finds a
//! call by search and opens it (its match marked, its recording followed, its metadata edited through
//! the page and seen through the API); edits an application (a wrong phrase shown as it is typed and
//! refused on save, then the rescoring of a correct one followed); signs out, after which the session cookie opens nothing. A second company's admin sees none of the first's
//! calls, and a session of one company opens none of the other's pages. With
//! `SPEECH_CONSOLE_SCREENSHOTS=<dir>` the pages are saved there as PNG (docs/images/ holds them).
//! Chromium, chromedriver and axe-core are installed by `scripts/test`; without them the test fails and
//! says so.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use support::*;

struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn browser() -> (Driver, Client) {
    let port = free_port();
    let child = Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver is needed: apt-get install chromium chromium-driver (scripts/test installs them)");
    let driver = Driver(child);
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        json!({"args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                        "--disable-background-networking", "--disable-component-update", "--no-first-run",
                        "--window-size=1280,1600"]}),
    );
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = ClientBuilder::rustls()
        .expect("a WebDriver client")
        .capabilities(capabilities)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a Chromium session (is the chromium package installed?)");
    (driver, client)
}

/// axe-core's script: `AXE_JS`, or where `scripts/test` puts it.
fn axe_source() -> String {
    let path = std::env::var("AXE_JS").unwrap_or_else(|_| {
        format!(
            "{}/.cache/speech-tools/axe-core/axe.min.js",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!("axe-core is needed at {path} (scripts/test installs it; or set AXE_JS)")
    })
}

/// The page's accessibility violations of impact serious or critical, as `rule: targets`.
async fn serious_violations(browser: &Client, axe: &str) -> Vec<String> {
    browser.execute(axe, vec![]).await.expect("axe-core loads");
    let found = browser
        .execute_async(
            "const done = arguments[arguments.length - 1];
             axe.run(document, {resultTypes: ['violations']})
               .then(r => done(r.violations
                 .filter(v => v.impact === 'serious' || v.impact === 'critical')
                 .map(v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).join(', '))))
               .catch(e => done(['axe failed: ' + e]));",
            vec![],
        )
        .await
        .expect("axe-core runs");
    serde_json::from_value(found).unwrap()
}

async fn screenshot(browser: &Client, name: &str) {
    if let Ok(dir) = std::env::var("SPEECH_CONSOLE_SCREENSHOTS") {
        let png = browser.screenshot().await.unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(format!("{dir}/{name}.png"), png).unwrap();
    }
}

async fn sign_in(browser: &Client, creds: &Value) {
    browser
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Id("username"))
        .await
        .expect("the token service's sign-in form")
        .send_keys(creds["admin_username"].as_str().unwrap())
        .await
        .unwrap();
    browser
        .find(Locator::Id("password"))
        .await
        .unwrap()
        .send_keys(creds["admin_password"].as_str().unwrap())
        .await
        .unwrap();
    click(browser, "button[type=submit]").await;
}

/// The texts of a table's body, row by row.
async fn rows(browser: &Client, table: &str) -> Vec<Vec<String>> {
    let found = browser
        .execute(
            "return Array.from(document.querySelectorAll(arguments[0] + ' tbody tr'))
               .map(tr => Array.from(tr.children).map(c => c.textContent));",
            vec![json!(table)],
        )
        .await
        .unwrap();
    serde_json::from_value(found).unwrap()
}

fn text(value: &Value, path: &[&str]) -> String {
    let mut value = value;
    for key in path {
        value = &value[key];
    }
    match value {
        Value::String(text) => text.clone(),
        Value::Number(number) => number.to_string(),
        _ => String::new(),
    }
}

struct Folder {
    base: String,
    org: String,
    folder: String,
    token: String,
}

impl Folder {
    fn of(creds: &Value, token: &str) -> Folder {
        Folder {
            base: creds["base_url"].as_str().unwrap().to_string(),
            org: creds["organization"].as_str().unwrap().to_string(),
            folder: creds["folder"].as_str().unwrap().to_string(),
            token: token.to_string(),
        }
    }

    async fn get(&self, path: &str) -> Value {
        let separator = if path.contains('?') { '&' } else { '?' };
        let response = reqwest::get(format!(
            "{}{path}{separator}token={}",
            self.base, self.token
        ))
        .await
        .unwrap();
        assert!(
            response.status().is_success(),
            "{path}: {}",
            response.status()
        );
        response.json().await.unwrap()
    }

    async fn put(&self, path: &str, body: Value) {
        let response = reqwest::Client::new()
            .put(format!("{}{path}?token={}", self.base, self.token))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_success(),
            "{path}: {}",
            response.text().await.unwrap()
        );
    }

    async fn upload(&self, call: Value) {
        let form = reqwest::multipart::Form::new()
            .text("token", self.token.clone())
            .part(
                "file",
                reqwest::multipart::Part::bytes(call.to_string().into_bytes())
                    .file_name("call.json"),
            );
        let response = reqwest::Client::new()
            .post(format!(
                "{}/transcribe/acme/{}/{}",
                self.base, self.org, self.folder
            ))
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_success(),
            "{}",
            response.text().await.unwrap()
        );
    }
}

const RANGE: &str = "daterange=20261119-20261122";

/// Three calls of two agents over two days, scored by application `sales`.
async fn known_calls(acme: &Folder) -> (Value, Value) {
    acme.put(
        "/apps/acme/sales",
        json!({"categories": {"Greeting": {"phrases": ["thank* for calling"]},
                              "Sales": {"phrases": ["premium"]}}}),
    )
    .await;
    let path = format!("/config/acme/{}/{}", acme.org, acme.folder);
    let mut folder = acme.get(&path).await;
    folder["apps"] = json!(["sales"]);
    let folder: serde_json::Map<String, Value> = folder
        .as_object()
        .unwrap()
        .iter()
        .filter(|(key, _)| !["created", "status"].contains(&key.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    acme.put(&path, Value::Object(folder)).await;
    let calls = [
        (
            "2026-11-20T09:00:00",
            "a1",
            "thank you for calling",
            "I want the premium plan",
        ),
        (
            "2026-11-20T11:30:00",
            "a2",
            "hello there",
            "my invoice is wrong",
        ),
        (
            "2026-11-21T10:00:00",
            "a1",
            "thanks for calling acme",
            "no thanks",
        ),
    ];
    for (index, (datetime, agent, said, heard)) in calls.iter().enumerate() {
        // The first call's client turn has its words' times: the page marks the matched word alone.
        let words: Vec<Value> = heard
            .split(' ')
            .enumerate()
            .map(|(i, word)| {
                let start = 5.0 + 0.9 * i as f64;
                json!({"word": word, "start": start, "end": start + 0.9})
            })
            .collect();
        let mut heard = json!({"speaker": "client", "start": 5.0, "end": 9.5, "text": heard});
        if index == 0 {
            heard["words"] = json!(words);
        }
        acme.upload(json!({
            "filename": format!("call-{index}.wav"), "datetime": datetime, "agent_id": agent,
            "utterances": [
                {"speaker": "agent", "start": 0.0, "end": 4.0 + index as f64, "text": said},
                heard]
        }))
        .await;
    }
    let stats_path = format!("/stats/acme/{}/{}?{RANGE}", acme.org, acme.folder);
    let app_path = format!(
        "/appstats/acme/{}/sales/{}?{RANGE}&depth=0",
        acme.org, acme.folder
    );
    for _ in 0..200 {
        let stats = acme.get(&stats_path).await;
        let apps = acme.get(&app_path).await;
        let calls: i64 = stats
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["calls"].as_i64().unwrap())
            .sum();
        let scored: i64 = apps
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|day| day.as_object().unwrap().values())
            .filter_map(|agent| agent.get("calls").and_then(Value::as_i64))
            .sum();
        if calls == 3 && scored == 3 {
            return (stats, apps);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the calls were not all counted and scored");
}

/// Every chart's table on the page holds the API's figures for its dates.
async fn charts_show(browser: &Client, stats: &Value, apps: &Value) {
    let days = stats.as_array().unwrap();
    let charts: &[(&str, &[&[&str]])] = &[
        ("#calls", &[&["calls"]]),
        ("#duration", &[&["avgduration"], &["avgsilence"]]),
        (
            "#talk",
            &[&["agent", "talk", "avg"], &["client", "talk", "avg"]],
        ),
        (
            "#agent-emotion",
            &[
                &["agent", "emotion", "positive"],
                &["agent", "emotion", "improving"],
                &["agent", "emotion", "worsening"],
                &["agent", "emotion", "negative"],
            ],
        ),
        (
            "#client-emotion",
            &[
                &["client", "emotion", "positive"],
                &["client", "emotion", "improving"],
                &["client", "emotion", "worsening"],
                &["client", "emotion", "negative"],
            ],
        ),
    ];
    for (chart, paths) in charts {
        let shown = rows(browser, &format!("{chart} .figures table")).await;
        let expected: Vec<Vec<String>> = days
            .iter()
            .map(|day| {
                std::iter::once(text(day, &["date"]))
                    .chain(paths.iter().map(|path| text(day, path)))
                    .collect()
            })
            .collect();
        assert_eq!(shown, expected, "chart {chart}");
    }
    assert_eq!(days.len(), 2, "two days of calls: {stats}");

    // The agents' table: one row per day and agent, in the API's order, a column per category the
    // API named.
    let header = browser
        .execute(
            "return Array.from(document.querySelectorAll('section[data-app=sales] table.agents thead th'))
               .map(th => th.textContent);",
            vec![],
        )
        .await
        .unwrap();
    let header: Vec<String> = serde_json::from_value(header).unwrap();
    let categories: Vec<String> = header[5..]
        .iter()
        .map(|h| h.trim_end_matches(" hit/miss").to_string())
        .collect();
    let mut named = BTreeSet::new();
    let mut expected = Vec::new();
    for day in apps.as_array().unwrap() {
        for (agent, figures) in day.as_object().unwrap() {
            let Some(keys) = figures.as_object() else {
                continue;
            };
            named.extend(
                keys.keys()
                    .filter(|k| *k != "calls" && *k != "overall")
                    .cloned(),
            );
            let mut row = vec![
                text(day, &["date"]),
                agent.clone(),
                text(figures, &["calls"]),
                text(figures, &["overall", "hitmiss"]),
                text(figures, &["overall", "coverage"]),
            ];
            row.extend(
                categories
                    .iter()
                    .map(|category| text(figures, &[category, "hitmiss"])),
            );
            expected.push(row);
        }
    }
    assert_eq!(
        categories.iter().cloned().collect::<BTreeSet<_>>(),
        named,
        "{header:?}"
    );
    assert!(named.contains("Greeting"), "the calls hit Greeting: {apps}");
    assert_eq!(
        rows(browser, "section[data-app=sales] table.agents").await,
        expected
    );

    // Each trend chart's points: per agent, the hit/miss of its category (or overall) each day the
    // API gave one, read as a number.
    let trends = browser
        .execute(
            "return Array.from(document.querySelectorAll('section[data-app=sales] figure.chart'))
               .map(f => [f.querySelector('figcaption').textContent,
                          JSON.parse(f.querySelector('script.chart-data').textContent),
                          f.querySelector('.figures a').getAttribute('href')]);",
            vec![],
        )
        .await
        .unwrap();
    let trends: Vec<(String, Value, String)> = serde_json::from_value(trends).unwrap();
    assert_eq!(trends.len(), 1 + categories.len(), "{trends:?}");
    let app_days = apps.as_array().unwrap();
    for (index, (caption, chart, link)) in trends.iter().enumerate() {
        let category = if index == 0 {
            "overall"
        } else {
            &categories[index - 1]
        };
        assert_eq!(caption, &format!("sales · {category} hit/miss"));
        assert_eq!(
            link, "#app-sales-agents",
            "its figures are the agents' table's"
        );
        let dates: Vec<String> = app_days.iter().map(|day| text(day, &["date"])).collect();
        assert_eq!(chart["dates"], json!(dates), "{caption}");
        let series = chart["series"].as_array().unwrap();
        assert_eq!(series.len(), 2, "a line per agent: {chart}");
        for line in series {
            let agent = line["label"].as_str().unwrap();
            let expected: Vec<Option<f64>> = app_days
                .iter()
                .map(|day| text(day, &[agent, category, "hitmiss"]).parse().ok())
                .collect();
            let shown: Vec<Option<f64>> = serde_json::from_value(line["values"].clone()).unwrap();
            assert_eq!(shown, expected, "{caption}, {agent}");
        }
    }

    // Every chart was drawn by the page's script, under the page's content security policy.
    let drawn = browser
        .execute(
            "return [document.querySelectorAll('figure.chart').length,
                     document.querySelectorAll('figure.chart.drawn canvas').length];",
            vec![],
        )
        .await
        .unwrap();
    let (figures, canvases): (u64, u64) = serde_json::from_value(drawn).unwrap();
    assert!(
        figures >= 5 + 3,
        "the stats charts and a trend per category: {figures}"
    );
    assert_eq!(canvases, figures, "every chart drawn");
}

async fn session_cookie(browser: &Client) -> String {
    browser
        .get_named_cookie("console_session")
        .await
        .expect("the session cookie")
        .value()
        .to_string()
}

/// What the console answers `path` with for a bare request carrying `cookie`: status and location.
async fn bare(base: &str, path: &str, cookie: &str) -> (u16, String) {
    let response = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(format!("{base}{path}"))
        .header("Cookie", format!("console_session={cookie}"))
        .send()
        .await
        .unwrap();
    let location = response
        .headers()
        .get("location")
        .map(|l| l.to_str().unwrap().to_string())
        .unwrap_or_default();
    (response.status().as_u16(), location)
}

/// The status of a POST of `body` (with `content_type` and the extra `headers`) to the console's `path`
/// carrying the session `cookie`, as another site's page or script would send it.
async fn forged(
    base: &str,
    path: &str,
    cookie: &str,
    content_type: &str,
    body: &str,
    headers: &[(&str, &str)],
) -> u16 {
    let mut request = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(format!("{base}{path}"))
        .header("Cookie", format!("console_session={cookie}"))
        .header("Content-Type", content_type)
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap().status().as_u16()
}

/// At 390 px wide (a phone) nothing of the page runs off its side; the window is made wide again
/// after.
async fn fits_a_phone(browser: &Client, what: &str) {
    browser.set_window_size(390, 844).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let overflow = browser
        .execute(
            "return document.documentElement.scrollWidth - window.innerWidth;",
            vec![],
        )
        .await
        .unwrap();
    browser.set_window_size(1280, 1600).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        overflow.as_i64().unwrap() <= 0,
        "the {what} is {overflow} px too wide at 390 px"
    );
}

/// Types `text` into the field of id `id`.
async fn fill(browser: &Client, id: &str, text: &str) {
    browser
        .find(Locator::Id(id))
        .await
        .unwrap_or_else(|e| panic!("#{id}: {e}"))
        .send_keys(text)
        .await
        .unwrap();
}

/// Clicks the element `css` finds.
async fn click(browser: &Client, css: &str) {
    browser
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .click()
        .await
        .unwrap();
}

/// A WAV recording of `seconds` of a quiet tone (8 kHz, 16-bit mono).
fn tone(seconds: u32) -> Vec<u8> {
    let rate = 8000u32;
    let samples = rate * seconds;
    let mut wav = Vec::with_capacity(44 + 2 * samples as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + 2 * samples).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    for field in [16u32, 1 | (1 << 16), rate, 2 * rate, 2 | (16 << 16)] {
        wav.extend_from_slice(&field.to_le_bytes());
    }
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(2 * samples).to_le_bytes());
    for i in 0..samples {
        let phase = i as f64 * 440.0 * std::f64::consts::TAU / rate as f64;
        wav.extend_from_slice(&((phase.sin() * 3000.0) as i16).to_le_bytes());
    }
    wav
}

/// Puts `recording` beside the stored transcript of call `id` in the platform's object store, as a
/// transcribed upload keeps its audio.
fn keep_recording(data: &Path, id: &str, recording: &[u8]) {
    fn find(dir: &Path, id: &str) -> Option<PathBuf> {
        for entry in std::fs::read_dir(dir).ok()?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n == id)
                    && path.join("transcript.json").exists()
                {
                    return Some(path);
                }
                if let Some(found) = find(&path, id) {
                    return Some(found);
                }
            }
        }
        None
    }
    let dir = find(data, id).expect("the call's transcript is stored under the data directory");
    std::fs::write(dir.join("audio.wav"), recording).unwrap();
}

/// The text of a call's field as the API has it now.
async fn field_now(acme: &Folder, id: &str, field: &str) -> Option<String> {
    let call = acme.get(&format!("/calls/acme/{}/{id}", acme.org)).await;
    call["metadata"][field].as_str().map(str::to_string)
}

async fn wait_for(browser: &Client, css: &str, what: &str) -> fantoccini::elements::Element {
    browser
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// From the search page's hit to the call's page: the matched word is a `<mark>` naming its application
/// and category, the turn being played is marked as the recording plays, a metadata field is added,
/// changed and removed through the page's forms and seen through the API, a reserved name is refused
/// with the API's reason. Returns the call's id.
async fn call_page(browser: &Client, acme: &Folder, data: &Path, axe: &str) -> String {
    let hits = acme
        .get(&format!("/search/acme/{}?q=premium", acme.org))
        .await;
    let id = hits["hits"][0]["tId"].as_str().unwrap().to_string();
    keep_recording(data, &id, &tone(10));
    click(browser, "li.hit a.call").await;
    let mark = wait_for(browser, "ol.transcript mark", "the match is marked").await;
    assert_eq!(mark.text().await.unwrap(), "premium");
    assert_eq!(
        mark.attr("title").await.unwrap().as_deref(),
        Some("sales › Sales: premium")
    );
    let url = browser.current_url().await.unwrap();
    assert!(
        url.path().ends_with(&format!("/calls/{}/{id}", acme.org)),
        "{url}"
    );

    // The recording plays through the console; the transcript follows it.
    let duration = browser
        .execute_async(
            "const a = document.querySelector('audio.recording'); \
             const done = arguments[arguments.length - 1]; \
             if (a.readyState >= 1) { done(a.duration); } \
             else { a.addEventListener('loadedmetadata', () => done(a.duration)); \
                    a.addEventListener('error', () => done(-1)); }",
            vec![],
        )
        .await
        .unwrap()
        .as_f64()
        .unwrap();
    assert!(
        (duration - 10.0).abs() < 0.1,
        "the recording's length: {duration}"
    );
    browser
        .execute(
            "document.querySelector('audio.recording').currentTime = 6;",
            vec![],
        )
        .await
        .unwrap();
    let playing = wait_for(browser, "li.turn.playing", "the played turn is marked").await;
    assert_eq!(
        playing.attr("class").await.unwrap().as_deref(),
        Some("turn client playing")
    );
    assert_eq!(
        playing.attr("aria-current").await.unwrap().as_deref(),
        Some("true")
    );
    assert_eq!(
        serious_violations(browser, axe).await,
        Vec::<String>::new(),
        "call page"
    );
    fits_a_phone(browser, "call page").await;

    // A field added, then changed, in place; each change is the API's.
    fill(browser, "new-field", "queue").await;
    fill(browser, "new-value", "billing").await;
    click(browser, "form.add button").await;
    let value = wait_for(browser, "#field-0", "the added field").await;
    assert_eq!(
        value.prop("value").await.unwrap().as_deref(),
        Some("billing")
    );
    assert_eq!(
        field_now(acme, &id, "queue").await.as_deref(),
        Some("billing")
    );
    value.clear().await.unwrap();
    value.send_keys("retention").await.unwrap();
    click(browser, "form.field:not(.add) button[value='set']").await;
    browser
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("#field-0[value='retention']"))
        .await
        .expect("the changed field");
    assert_eq!(
        field_now(acme, &id, "queue").await.as_deref(),
        Some("retention")
    );
    screenshot(browser, "console-call").await;

    // A reserved name: the API's reason beside what was typed, nothing changed.
    fill(browser, "new-field", "tId").await;
    click(browser, "form.add button").await;
    let alert = wait_for(browser, "p.error[role='alert']", "the refusal").await;
    let said = alert.text().await.unwrap();
    assert!(
        said.starts_with("tId: ") && said.contains("reserved"),
        "{said}"
    );
    assert_eq!(field_now(acme, &id, "tId").await, None);
    assert_eq!(
        field_now(acme, &id, "queue").await.as_deref(),
        Some("retention")
    );

    // A form without the session's CSRF token (another site's) is refused and changes nothing.
    let cookie = session_cookie(browser).await;
    let form = format!("/console/acme/calls/{}/{id}/metadata", acme.org);
    for body in [
        "action=set&field=queue&value=forged",
        "csrf=guess&action=set&field=queue&value=forged",
    ] {
        let status = forged(
            &acme.base,
            &form,
            &cookie,
            "application/x-www-form-urlencoded",
            body,
            &[],
        )
        .await;
        assert!([400, 403].contains(&status), "{body}: {status}");
    }
    assert_eq!(
        field_now(acme, &id, "queue").await.as_deref(),
        Some("retention")
    );

    // Removed.
    click(browser, "form.field:not(.add) button[value='delete']").await;
    wait_for(browser, "#new-field", "the page again").await;
    assert!(
        browser.find(Locator::Css("#field-0")).await.is_err(),
        "the field is gone"
    );
    assert_eq!(field_now(acme, &id, "queue").await, None);
    id
}

/// The applications list leads to `sales`' editor; a new category with a wrong phrase shows the
/// parser's problem under its box as it is typed, and its save is refused with the API's message over
/// what was typed, nothing changed; corrected, it is saved and the page follows the rescoring to every
/// call of the folder.
async fn app_editor(browser: &Client, acme: &Folder, axe: &str) {
    browser
        .goto(&format!("{}/console/acme/apps", acme.base))
        .await
        .unwrap();
    wait_for(
        browser,
        "ul.apps a[href='/console/acme/apps/sales']",
        "sales is listed",
    )
    .await
    .click()
    .await
    .unwrap();
    let greeting = wait_for(browser, "#phrases-0", "the first category's phrases").await;
    assert_eq!(
        greeting.prop("value").await.unwrap().as_deref(),
        Some("thank* for calling")
    );
    // The blank category at the end.
    fill(browser, "path-2", "Closing").await;
    fill(browser, "phrases-2", "goodbye\nsee you &").await;
    let problem = wait_for(browser, "#problems-2 li", "the problem as it is typed").await;
    assert_eq!(
        problem.text().await.unwrap(),
        "Line 2: nothing after '&' at position 9"
    );
    assert_eq!(
        serious_violations(browser, axe).await,
        Vec::<String>::new(),
        "application editor"
    );
    fits_a_phone(browser, "application editor").await;
    screenshot(browser, "console-app-editor").await;
    click(browser, "form.editor button[type='submit']").await;
    let refused = wait_for(browser, "p.error[role='alert']", "the refused save").await;
    assert_eq!(
        refused.text().await.unwrap(),
        "Not saved: categories.Closing.phrases[1]: invalid phrase \"see you &\": nothing after '&' at position 9"
    );
    let stored = acme.get("/apps/acme/sales").await;
    assert!(stored["categories"].get("Closing").is_none(), "{stored}");

    // The phrase check answers the page's own script only: a call without the session's CSRF token
    // in its header is refused.
    let cookie = session_cookie(browser).await;
    for headers in [&[][..], &[("X-CSRF-Token", "guess")][..]] {
        let status = forged(
            &acme.base,
            "/console/acme/phrases",
            &cookie,
            "application/json",
            r#"["refund"]"#,
            headers,
        )
        .await;
        assert_eq!(status, 403, "{headers:?}");
    }

    // Corrected and saved: the rescoring is followed to the end.
    let kept = browser.find(Locator::Id("phrases-2")).await.unwrap();
    assert_eq!(
        kept.prop("value").await.unwrap().as_deref(),
        Some("goodbye\nsee you &")
    );
    kept.clear().await.unwrap();
    kept.send_keys("goodbye\nsee you").await.unwrap();
    click(browser, "form.editor button[type='submit']").await;
    wait_for(browser, "div.rescoring", "the rescoring after the save").await;
    browser
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::XPath("//span[@class='count' and .='3 of 3']"))
        .await
        .expect("every call rescored");
    let stored = acme.get("/apps/acme/sales").await;
    assert_eq!(
        stored["categories"]["Closing"],
        json!({"phrases": ["goodbye", "see you"]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_analyst_signs_in_reads_the_dashboard_and_signs_out() {
    let axe = axe_source();
    let data = temp_dir();
    let ports = Ports::free();
    let acme_creds = bootstrap_company(&data, &ports, "acme", &[]);
    let globex_creds = bootstrap_company(&data, &ports, "globex", &[]);
    let _server = serve(&data, &ports).await;
    let token = client_token(&acme_creds).await;
    let acme = Folder::of(&acme_creds, token["access_token"].as_str().unwrap());
    let (stats, apps) = known_calls(&acme).await;
    let base = acme.base.clone();
    let (_driver, browser) = browser().await;

    // Signing in: the console sends the browser to the token service and back to the folders.
    let console = acme_creds["console_url"]
        .as_str()
        .expect("bootstrap prints the console's address");
    assert_eq!(console, format!("{base}/console/acme/"));
    browser.goto(console).await.unwrap();
    sign_in(&browser, &acme_creds).await;
    let folder_link = format!("/console/acme/{}/{}/", acme.org, acme.folder);
    browser
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css(&format!("a[href='{folder_link}']")))
        .await
        .expect("the folders page lists the bootstrap folder");
    assert_eq!(
        serious_violations(&browser, &axe).await,
        Vec::<String>::new(),
        "folders page"
    );

    // The dashboard of the folder over the calls' days.
    browser
        .goto(&format!(
            "{base}{folder_link}?from=2026-11-19&to=2026-11-22"
        ))
        .await
        .unwrap();
    browser
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("figure.chart.drawn"))
        .await
        .expect("the charts are drawn");
    charts_show(&browser, &stats, &apps).await;
    assert_eq!(
        serious_violations(&browser, &axe).await,
        Vec::<String>::new(),
        "dashboard"
    );
    screenshot(&browser, "console-dashboard").await;

    // The keyboard's first stop is the skip link; at phone width nothing runs off the page's side.
    browser
        .find(Locator::Css("body"))
        .await
        .unwrap()
        .send_keys("\u{E004}")
        .await
        .unwrap();
    let focused = browser
        .active_element()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(focused, "Skip to content");
    fits_a_phone(&browser, "dashboard").await;

    // Search: the hit's snippet marks the word.
    browser
        .goto(&format!(
            "{base}/console/acme/search?organization={}&q=premium",
            acme.org
        ))
        .await
        .unwrap();
    let marked = browser
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("li.hit .snippet mark"))
        .await
        .expect("a hit with its match marked")
        .text()
        .await
        .unwrap();
    assert_eq!(marked.to_lowercase(), "premium");
    assert_eq!(
        browser
            .find(Locator::Css("p.total"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
        "1 call"
    );
    assert_eq!(
        serious_violations(&browser, &axe).await,
        Vec::<String>::new(),
        "search page"
    );

    // The call: the match marked in its transcript, its recording followed, its metadata edited.
    let call_id = call_page(&browser, &acme, &data, &axe).await;

    // The application's editor: a wrong phrase shown as it is typed and refused on save, then saved.
    app_editor(&browser, &acme, &axe).await;

    // The jobs page: nothing of acme is being deleted.
    browser
        .goto(&format!("{base}/console/acme/jobs"))
        .await
        .unwrap();
    let nothing = wait_for(&browser, "#deletions-title + p", "the jobs page").await;
    assert_eq!(nothing.text().await.unwrap(), "Nothing is being deleted.");
    assert_eq!(
        serious_violations(&browser, &axe).await,
        Vec::<String>::new(),
        "jobs page"
    );

    // A session of acme opens none of globex's pages: they ask to sign in to globex.
    let acme_cookie = session_cookie(&browser).await;
    let (status, location) = bare(&base, "/console/globex/", &acme_cookie).await;
    assert_eq!(
        (status, location.as_str()),
        (303, "/console/globex/signin?back_to=%2Fconsole%2Fglobex%2F")
    );
    let (status, _) = bare(&base, &folder_link, &acme_cookie).await;
    assert_eq!(status, 200, "the same cookie opens acme's page");

    // Signing out ends the session here and at the token service.
    click(&browser, "form.signout button").await;
    browser
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::XPath("//p[contains(., 'You are signed out')]"))
        .await
        .expect("the signed-out page");
    let (status, location) = bare(&base, &folder_link, &acme_cookie).await;
    assert_eq!(status, 303, "the old cookie opens nothing");
    assert!(location.starts_with("/console/acme/signin"), "{location}");
    browser.goto(console).await.unwrap();
    browser
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Id("username"))
        .await
        .expect("signing in again needs the form: the token service's session ended too");

    // Globex's admin: the same organization and folder names, none of acme's calls.
    let globex_console = globex_creds["console_url"].as_str().unwrap();
    browser.goto(globex_console).await.unwrap();
    sign_in(&browser, &globex_creds).await;
    browser
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("ul.folders a"))
        .await
        .expect("globex's folders");
    let globex_folder = format!(
        "{base}/console/globex/{}/{}/?from=2026-11-19&to=2026-11-22",
        globex_creds["organization"].as_str().unwrap(),
        globex_creds["folder"].as_str().unwrap()
    );
    browser.goto(&globex_folder).await.unwrap();
    browser
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("p.notice"))
        .await
        .expect("no calls in globex's folder");
    assert!(rows(&browser, "#calls .figures table").await.is_empty());
    browser
        .goto(&format!(
            "{base}/console/globex/calls/{}/{call_id}",
            globex_creds["organization"].as_str().unwrap()
        ))
        .await
        .unwrap();
    let refused = browser
        .find(Locator::Css("p.error"))
        .await
        .expect("acme's call is not globex's")
        .text()
        .await
        .unwrap();
    assert_eq!(refused, format!("Transcript not found: {call_id}"));
    let globex_cookie = session_cookie(&browser).await;
    let (status, location) = bare(&base, &folder_link, &globex_cookie).await;
    assert_eq!(status, 303, "globex's session opens no acme page");
    assert!(location.starts_with("/console/acme/signin"), "{location}");
    browser.close().await.unwrap();
}
