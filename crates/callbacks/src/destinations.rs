//! How many posts go to one receiver at once. A post to a receiver that answers slowly, or never, holds
//! one of the worker's delivery slots for up to the callback timeout; without a limit per receiver, one
//! company's dead receiver held every slot and every other company's callbacks waited behind it. A
//! delivery whose receiver already takes all the posts it may is put off (the bus's `postpone`: no
//! attempt is counted) and comes back after a while.

use std::collections::HashMap;

use parking_lot::Mutex;

/// The posts under way per receiver (scheme, host and port of the callback URL).
pub struct Destinations {
    limit: usize,
    busy: Mutex<HashMap<String, usize>>,
}

/// A post's place at its receiver, given back when dropped.
pub struct Slot<'a> {
    owner: &'a Destinations,
    key: String,
}

impl Destinations {
    /// At most `limit` posts at once to any one receiver (at least one).
    pub fn new(limit: usize) -> Destinations {
        Destinations {
            limit: limit.max(1),
            busy: Mutex::new(HashMap::new()),
        }
    }

    /// A place for a post to `url`, unless its receiver has all it may have.
    pub fn take(&self, url: &str) -> Option<Slot<'_>> {
        let key = receiver(url);
        let mut busy = self.busy.lock();
        let count = busy.entry(key.clone()).or_insert(0);
        if *count >= self.limit {
            return None;
        }
        *count += 1;
        Some(Slot { owner: self, key })
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut busy = self.owner.busy.lock();
        if let Some(count) = busy.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                busy.remove(&self.key);
            }
        }
    }
}

/// The receiver a URL names: its scheme, host and port (the whole text when it does not parse, which
/// the post then refuses anyway).
fn receiver(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => format!(
            "{}://{}:{}",
            u.scheme(),
            u.host_str().unwrap_or_default().to_ascii_lowercase(),
            u.port_or_known_default().unwrap_or(0)
        ),
        Err(_) => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receiver_gets_at_most_its_limit_and_others_are_apart() {
        let d = Destinations::new(2);
        let a = d.take("https://hooks.evil.example/a").expect("first");
        let b = d
            .take("https://HOOKS.evil.example:443/b?x=1")
            .expect("second");
        assert!(
            d.take("https://hooks.evil.example/c").is_none(),
            "same receiver, another path"
        );
        assert!(
            d.take("https://hooks.acme.example/").is_some(),
            "another receiver"
        );
        assert!(
            d.take("http://hooks.evil.example/").is_some(),
            "another scheme and port"
        );
        drop(a);
        assert!(
            d.take("https://hooks.evil.example/").is_some(),
            "given back"
        );
        drop(b);
        assert!(d.busy.lock().len() <= 1, "idle receivers are forgotten");
    }
}
