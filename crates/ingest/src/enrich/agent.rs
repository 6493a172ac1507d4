//! What a `session_dua` (User-Agent) string says about the client: woothee's rules, corrected where they
//! lag behind the browsers in use today, behind a bounded cache because real traffic repeats a few
//! thousand user agents millions of times and woothee runs regular expressions on every parse.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::LazyLock;

use parking_lot::Mutex;
use regex::Regex;
use serde::Serialize;

/// What a user agent says about the client. Empty strings never appear: unknown parts are None.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct AgentInfo {
    /// "Chrome", "Firefox", "Safari", "Edge", "Opera", "Samsung Internet", "WebView", a crawler's name
    /// ("Googlebot", "GPTBot"), an HTTP library's ("curl")...
    pub browser: Option<String>,
    /// The browser's version exactly as the user agent gives it, e.g. "131.0.0.0".
    pub browser_version: Option<String>,
    /// "Windows 10", "Mac OS X", "iOS", "Android", "Linux", "ChromeOS"... Windows 11 sends the same
    /// "Windows NT 10.0" as Windows 10 (only the client hints tell them apart), so both are "Windows 10".
    /// iPadOS counts as "iOS"; the device type tells iPads apart.
    pub os: Option<String>,
    /// One of "desktop", "mobile", "tablet", "bot", "other". An iPad whose Safari asks for desktop sites
    /// (the default since iPadOS 13) sends a Macintosh user agent and is a "desktop".
    pub device_type: Option<String>,
}

/// What woothee says when it does not know.
const UNKNOWN: &str = "UNKNOWN";

/// Names of automated clients that woothee's fixed list misses (AI crawlers, SEO tools, newer search
/// engines) or takes for a browser because they copy a browser's user agent and append their own token,
/// e.g. "... Mobile Safari/537.36 (compatible; PetalBot;+https://...)". Only a product token ending in
/// bot/crawler/spider and followed by a version, a separator or a closing parenthesis counts, so that
/// phone models such as "CUBOT_X19" stay phones.
static BOT_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)[a-z0-9_.-]*(?:bot|crawler|spider)(?:/[^\s;()]*)?[;)]?").unwrap()
});

/// The Chrome version an Android WebView carries: woothee reports the meaningless "Version/4.0" instead.
static CHROME_VERSION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"Chrome/([0-9][.0-9]*)").unwrap());

/// Parses without the cache.
pub(crate) fn parse(user_agent: &str) -> AgentInfo {
    let ua = user_agent.trim();
    if ua.is_empty() || ua == "-" {
        return AgentInfo::default();
    }
    let woothee = woothee::parser::Parser::new().parse(ua);
    let named_crawler = woothee
        .as_ref()
        .is_some_and(|w| w.category == "crawler" && w.name != MISC_CRAWLER);
    if !named_crawler {
        if let Some(bot) = automated_client(ua) {
            return bot;
        }
    }
    let Some(w) = woothee else {
        return AgentInfo::default();
    };

    let mut browser = known(w.name);
    let mut version = known(w.version);
    let os = known(w.os).map(|os| match os {
        "Mac OSX" => "Mac OS X",
        "iPhone" | "iPad" | "iPod" => "iOS",
        "Windows UNKNOWN Ver" => "Windows",
        other => other,
    });

    match w.name {
        // woothee knows Samsung Internet only by its user-agent token.
        "SamsungBrowser" => browser = Some("Samsung Internet"),
        // The version woothee gives is the library's language ("curl", "python", "Java"); the leading
        // product token names the library and its version.
        "HTTP Library" => {
            let (name, v) = product_token(ua);
            browser = name.or(browser);
            version = v;
        }
        "Webview" => {
            browser = Some("WebView");
            if os == Some("Android") {
                version = CHROME_VERSION
                    .captures(ua)
                    .and_then(|c| c.get(1))
                    .map(|m| m.as_str());
            }
        }
        // A category, not a name.
        MISC_CRAWLER => browser = None,
        _ => {}
    }

    let device_type = match w.category {
        "pc" => Some("desktop"),
        "smartphone" if w.os == "iPad" => Some("tablet"),
        // Android tablets are told apart from phones by the missing "Mobile" token (Chrome's and
        // Firefox's convention alike).
        "smartphone" if w.os == "Android" && !ua.contains("Mobile") => Some("tablet"),
        "smartphone" | "mobilephone" => Some("mobile"),
        "crawler" => Some("bot"),
        UNKNOWN | "" => None,
        _ => Some("other"),
    };

    if w.category == "crawler" {
        // woothee names crawlers but leaves their version out, even when the token carries it.
        version = browser.and_then(|name| token_version(ua, name));
    }

    AgentInfo {
        browser: browser.map(str::to_owned),
        browser_version: version.map(str::to_owned),
        os: os.map(str::to_owned),
        device_type: device_type.map(str::to_owned),
    }
}

/// What woothee calls a crawler it has no name for.
const MISC_CRAWLER: &str = "misc crawler";

/// A client that carries a bot token, or a headless browser driven by a script, is a bot whatever
/// browser it imitates.
fn automated_client(ua: &str) -> Option<AgentInfo> {
    let (name, version) = if let Some(at) = ua.find("HeadlessChrome/") {
        (
            "HeadlessChrome",
            version_at(&ua[at + "HeadlessChrome/".len()..]),
        )
    } else {
        let token = BOT_TOKEN
            .find_iter(ua)
            .map(|m| m.as_str())
            .find(|t| t.contains('/') || t.ends_with(';') || t.ends_with(')'))?;
        let token = token.trim_end_matches([';', ')']);
        match token.split_once('/') {
            Some((name, v)) => (name, version_at(v)),
            None => (token, None),
        }
    };
    Some(AgentInfo {
        browser: known(name).map(str::to_owned),
        browser_version: version.map(str::to_owned),
        os: None,
        device_type: Some("bot".to_owned()),
    })
}

/// `None` for woothee's "UNKNOWN" and for empty strings.
fn known(s: &str) -> Option<&str> {
    (!s.is_empty() && s != UNKNOWN).then_some(s)
}

/// The name and version of the user agent's first product token ("curl/8.11.0" -> curl, 8.11.0).
fn product_token(ua: &str) -> (Option<&str>, Option<&str>) {
    let first = ua.split_whitespace().next().unwrap_or("");
    match first.split_once('/') {
        Some((name, v)) => (known(name), known(v)),
        None => (known(first), None),
    }
}

/// The version after `name/` anywhere in the user agent ("...Googlebot/2.1;..." -> 2.1).
fn token_version<'a>(ua: &'a str, name: &str) -> Option<&'a str> {
    let at = ua
        .match_indices(name)
        .find(|(i, _)| ua[i + name.len()..].starts_with('/'))?
        .0;
    version_at(&ua[at + name.len() + 1..])
}

/// The version at the start of `rest`: digits and dots.
fn version_at(rest: &str) -> Option<&str> {
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    known(&rest[..end])
}

/// User agents longer than this are parsed every time: they are rare, and caching them would let a
/// client that sends random long strings evict the common ones at little cost to itself.
const MAX_CACHED_LEN: usize = 512;

/// Shards, so that request workers on different cores seldom wait for the same lock.
const SHARDS: usize = 16;

/// Parsed user agents by string, at most `capacity` of them. A shard that is full is emptied rather
/// than trimmed: the common user agents are back after a few requests, and there is no per-entry
/// bookkeeping on the hot path.
pub(crate) struct AgentCache {
    hasher: RandomState,
    per_shard: usize,
    shards: [Mutex<HashMap<String, AgentInfo>>; SHARDS],
}

impl AgentCache {
    pub(crate) fn new(capacity: usize) -> AgentCache {
        AgentCache {
            hasher: RandomState::new(),
            per_shard: capacity.div_ceil(SHARDS).max(1),
            shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
        }
    }

    pub(crate) fn agent(&self, user_agent: &str) -> AgentInfo {
        if user_agent.len() > MAX_CACHED_LEN {
            return parse(user_agent);
        }
        let shard = &self.shards[self.hasher.hash_one(user_agent) as usize % SHARDS];
        if let Some(info) = shard.lock().get(user_agent) {
            return info.clone();
        }
        // Parsed outside the lock: two workers may parse the same new user agent at once, which is
        // cheaper than making every other user agent of the shard wait for the regular expressions.
        let info = parse(user_agent);
        let mut map = shard.lock();
        if map.len() >= self.per_shard {
            map.clear();
        }
        map.insert(user_agent.to_owned(), info.clone());
        info
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(browser: &str, version: &str, os: &str, device: &str) -> AgentInfo {
        let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        AgentInfo {
            browser: some(browser),
            browser_version: some(version),
            os: some(os),
            device_type: some(device),
        }
    }

    /// Real user agents of current browsers, with what the service must say about each.
    const CASES: &[(&str, &str, &str, &str, &str)] = &[
        // Chrome
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
            "Chrome", "131.0.0.0", "Windows 10", "desktop",
        ),
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
            "Chrome", "131.0.0.0", "Mac OS X", "desktop",
        ),
        (
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
            "Chrome", "131.0.0.0", "Linux", "desktop",
        ),
        (
            "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
            "Chrome", "131.0.0.0", "ChromeOS", "desktop",
        ),
        (
            "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 Mobile Safari/537.36",
            "Chrome", "131.0.6778.81", "Android", "mobile",
        ),
        (
            "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 Safari/537.36",
            "Chrome", "131.0.6778.81", "Android", "tablet",
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1",
            "Chrome", "131.0.6778.73", "iOS", "mobile",
        ),
        (
            "Mozilla/5.0 (iPad; CPU OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1",
            "Chrome", "131.0.6778.73", "iOS", "tablet",
        ),
        // Firefox
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
            "Firefox", "133.0", "Windows 10", "desktop",
        ),
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:133.0) Gecko/20100101 Firefox/133.0",
            "Firefox", "133.0", "Mac OS X", "desktop",
        ),
        (
            "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
            "Firefox", "133.0", "Linux", "desktop",
        ),
        (
            "Mozilla/5.0 (Android 15; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0",
            "Firefox", "133.0", "Android", "mobile",
        ),
        (
            "Mozilla/5.0 (Android 14; Tablet; rv:133.0) Gecko/133.0 Firefox/133.0",
            "Firefox", "133.0", "Android", "tablet",
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/133.0 Mobile/15E148 Safari/605.1.15",
            "Firefox", "133.0", "iOS", "mobile",
        ),
        // Safari
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1.1 Safari/605.1.15",
            "Safari", "18.1.1", "Mac OS X", "desktop",
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1.1 Mobile/15E148 Safari/604.1",
            "Safari", "18.1.1", "iOS", "mobile",
        ),
        (
            "Mozilla/5.0 (iPad; CPU OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
            "Safari", "18.1", "iOS", "tablet",
        ),
        // Edge
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86",
            "Edge", "131.0.2903.86", "Windows 10", "desktop",
        ),
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86",
            "Edge", "131.0.2903.86", "Mac OS X", "desktop",
        ),
        (
            "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36 EdgA/131.0.2903.87",
            "Edge", "131.0.2903.87", "Android", "mobile",
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 EdgiOS/131.2903.92 Mobile/15E148 Safari/605.1.15",
            "Edge", "131.2903.92", "iOS", "mobile",
        ),
        // Opera
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 OPR/116.0.0.0",
            "Opera", "116.0.0.0", "Windows 10", "desktop",
        ),
        (
            "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36 OPR/86.0.0.0",
            "Opera", "86.0.0.0", "Android", "mobile",
        ),
        // Samsung Internet
        (
            "Mozilla/5.0 (Linux; Android 14; SM-S928B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/27.0 Chrome/125.0.0.0 Mobile Safari/537.36",
            "Samsung Internet", "27.0", "Android", "mobile",
        ),
        (
            "Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/27.0 Chrome/125.0.0.0 Safari/537.36",
            "Samsung Internet", "27.0", "Android", "tablet",
        ),
        // In-app browsers
        (
            "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.39 Mobile Safari/537.36",
            "WebView", "131.0.6778.39", "Android", "mobile",
        ),
        // iPadOS asking for desktop sites: indistinguishable from a Mac.
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
            "Safari", "18.1", "Mac OS X", "desktop",
        ),
        // Windows 11 says "Windows NT 10.0" too.
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
            "Chrome", "131.0.0.0", "Windows 10", "desktop",
        ),
        // Crawlers and tools
        (
            "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
            "Googlebot", "2.1", "", "bot",
        ),
        (
            "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
            "Googlebot", "2.1", "", "bot",
        ),
        (
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/131.0.0.0 Safari/537.36",
            "bingbot", "2.0", "", "bot",
        ),
        (
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
            "GPTBot", "1.2", "", "bot",
        ),
        (
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
            "ClaudeBot", "1.0", "", "bot",
        ),
        (
            "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
            "YandexBot", "3.0", "", "bot",
        ),
        (
            "Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)",
            "Bytespider", "", "", "bot",
        ),
        (
            "Mozilla/5.0 (Linux; Android 7.0;) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)",
            "PetalBot", "", "", "bot",
        ),
        (
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.6778.33 Safari/537.36",
            "HeadlessChrome", "131.0.6778.33", "", "bot",
        ),
        ("curl/8.11.0", "curl", "8.11.0", "", "other"),
        ("python-requests/2.32.3", "", "", "", ""),
        // A phone whose model name ends in "bot" is still a phone.
        (
            "Mozilla/5.0 (Linux; Android 10; CUBOT_X19) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 Mobile Safari/537.36",
            "Chrome", "131.0.6778.81", "Android", "mobile",
        ),
        ("", "", "", "", ""),
        ("-", "", "", "", ""),
        ("something nobody knows", "", "", "", ""),
    ];

    #[test]
    fn current_browsers() {
        let mut wrong = Vec::new();
        for &(ua, browser, version, os, device) in CASES {
            let got = parse(ua);
            let want = info(browser, version, os, device);
            if got != want {
                wrong.push(format!("{ua}\n  got  {got:?}\n  want {want:?}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn no_empty_strings() {
        for &(ua, ..) in CASES {
            let got = parse(ua);
            for part in [
                &got.browser,
                &got.browser_version,
                &got.os,
                &got.device_type,
            ] {
                assert_ne!(part.as_deref(), Some(""), "{ua}: {got:?}");
            }
        }
    }

    #[test]
    fn cache_answers_as_parse() {
        let cache = AgentCache::new(1024);
        for _ in 0..3 {
            for &(ua, ..) in CASES {
                assert_eq!(cache.agent(ua), parse(ua), "{ua}");
            }
        }
        // Distinct user agents once each: "", "-" and the repeated Windows 11 line collapse.
        let distinct: std::collections::HashSet<_> = CASES.iter().map(|c| c.0).collect();
        assert_eq!(cache.len(), distinct.len());
    }

    #[test]
    fn cache_stays_bounded_and_skips_long_agents() {
        let cache = AgentCache::new(64);
        for i in 0..10_000 {
            let ua = format!("Mozilla/5.0 (Windows NT 10.0; Win64; x64) Firefox/{i}.0");
            assert_eq!(cache.agent(&ua).browser_version, Some(format!("{i}.0")));
            assert!(cache.len() <= 64 + SHARDS, "{}", cache.len());
        }

        let cache = AgentCache::new(64);
        let long = format!("{} Firefox/133.0", "x".repeat(MAX_CACHED_LEN));
        assert_eq!(cache.agent(&long), parse(&long));
        assert_eq!(cache.len(), 0);
    }

    /// Not an assertion: prints what a parse costs with and without the cache
    /// (`cargo test -p ingest --lib agent_cost -- --nocapture`).
    #[test]
    fn agent_cost() {
        use std::time::Instant;
        let agents: Vec<&str> = CASES.iter().map(|c| c.0).collect();
        let rounds = 200;
        let calls = (rounds * agents.len()) as u32;

        let started = Instant::now();
        for _ in 0..rounds {
            for ua in &agents {
                std::hint::black_box(parse(ua));
            }
        }
        let uncached = started.elapsed() / calls;

        let cache = AgentCache::new(16_384);
        for ua in &agents {
            cache.agent(ua);
        }
        let started = Instant::now();
        for _ in 0..rounds {
            for ua in &agents {
                std::hint::black_box(cache.agent(ua));
            }
        }
        let cached = started.elapsed() / calls;
        println!("agent(): uncached {uncached:?} per call, cached {cached:?} per call ({calls} calls each)");
    }
}
