//! Where a page's CPU work runs: reading the API's answers and laying out a large page (a dashboard of a
//! hundred agents over a month is some 700 KB of HTML) takes milliseconds that must not hold up the HTTP
//! worker serving the API requests the page itself waits for. The service that mounts the console
//! gives it a runner (the analytics service: its matching pool, a fair share per company).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use crate::error::ConsoleError;

/// A job of a company's page.
pub type Job = Box<dyn FnOnce() + Send>;

/// Runs a company's job off the HTTP workers; resolves once it has run (an error: it could not).
pub type Runner =
    Arc<dyn Fn(&str, Job) -> Pin<Box<dyn Future<Output = Result<(), String>>>> + Send + Sync>;

/// Runs `work` for `company` with `runner`, and gives its result.
pub async fn run<T, F>(runner: &Runner, company: &str, work: F) -> Result<T, ConsoleError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let slot = Arc::new(Mutex::new(None));
    let out = slot.clone();
    runner(
        company,
        Box::new(move || {
            let result = work();
            *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
        }),
    )
    .await
    .map_err(ConsoleError::internal)?;
    let result = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
    result.ok_or_else(|| ConsoleError::internal("a page's work ended without its result"))
}

/// A runner for a console alone (tests): the work runs on the caller's thread.
pub fn inline() -> Runner {
    Arc::new(|_company: &str, job: Job| {
        job();
        Box::pin(async { Ok(()) })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_s_result_comes_back() {
        let runner = inline();
        let answer = futures_util::FutureExt::now_or_never(run(&runner, "acme", || 6 * 7));
        assert_eq!(answer.unwrap().unwrap(), 42);
    }
}
