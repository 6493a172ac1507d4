//! A fair share of the API's reads per company. Each company has at most `per_company` reads under way
//! at once; its next ones wait in its own queue, first come first served, so a burst of one company's
//! heavy reads (a year of statistics, searches, counts over a million calls) waits behind itself and
//! never holds every database connection while another company's read waits behind the whole burst.
//! A company whose queue is full is asked to come back later (503 with `Retry-After`); the others are
//! not. Requests are admitted only once their token is checked (`access`), so nobody can fill another
//! company's queue.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::AnalyticsError;

/// The reads under way and waiting, by company.
pub struct Admission {
    per_company: usize,
    queue: usize,
    companies: Arc<Mutex<HashMap<String, Arc<Company>>>>,
}

/// One company's reads: the slots under way, and how many wait for one.
struct Company {
    slots: Arc<Semaphore>,
    waiting: Mutex<usize>,
}

/// A read under way; its slot is given back when it is dropped (when the handler returns).
pub struct Admitted {
    _slot: OwnedSemaphorePermit,
    leaving: Leaving,
}

/// Removes the company's entry once nothing of it is under way or waiting, so the map holds only the
/// companies reading now.
struct Leaving {
    name: String,
    company: Arc<Company>,
    companies: Arc<Mutex<HashMap<String, Arc<Company>>>>,
}

impl Drop for Leaving {
    fn drop(&mut self) {
        let mut companies = self.companies.lock();
        // The map's reference and this one: no other read of the company holds or waits for a slot
        // (each takes its reference under this lock).
        if Arc::strong_count(&self.company) == 2 {
            companies.remove(&self.name);
        }
    }
}

impl Admission {
    /// At most `per_company` reads of a company at once (at least one), and at most `queue` more
    /// waiting.
    pub fn new(per_company: usize, queue: usize) -> Admission {
        Admission {
            per_company: per_company.max(1),
            queue,
            companies: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// Waits for a slot of `company`'s reads; refuses at once when its queue is full.
    pub async fn admit(&self, company: &str) -> Result<Admitted, AnalyticsError> {
        let entry = self
            .companies
            .lock()
            .entry(company.to_string())
            .or_insert_with(|| {
                Arc::new(Company {
                    slots: Arc::new(Semaphore::new(self.per_company)),
                    waiting: Mutex::new(0),
                })
            })
            .clone();
        let leaving = Leaving {
            name: company.to_string(),
            company: entry.clone(),
            companies: self.companies.clone(),
        };
        if let Ok(slot) = entry.slots.clone().try_acquire_owned() {
            return Ok(Admitted {
                _slot: slot,
                leaving,
            });
        }
        {
            let mut waiting = entry.waiting.lock();
            if *waiting >= self.queue {
                return Err(AnalyticsError::Busy(format!(
                    "company {company} has {} reads under way and {} waiting; try again shortly",
                    self.per_company, *waiting
                )));
            }
            *waiting += 1;
        }
        // Given back however the wait ends, the request cut off included.
        let _waits = Waits(&entry);
        let slot = entry
            .slots
            .clone()
            .acquire_owned()
            .await
            .map_err(AnalyticsError::internal)?;
        Ok(Admitted {
            _slot: slot,
            leaving,
        })
    }

    /// The companies with reads under way or waiting.
    pub fn companies(&self) -> usize {
        self.companies.lock().len()
    }

    /// The reads waiting for a turn, by company; the companies with none are left out.
    pub fn waiting(&self) -> Vec<(String, usize)> {
        self.companies
            .lock()
            .iter()
            .map(|(name, company)| (name.clone(), *company.waiting.lock()))
            .filter(|(_, waiting)| *waiting > 0)
            .collect()
    }
}

impl Admitted {
    /// The company whose read this is.
    pub fn company(&self) -> &str {
        &self.leaving.name
    }
}

/// One read waiting for a slot of its company.
struct Waits<'a>(&'a Company);

impl Drop for Waits<'_> {
    fn drop(&mut self) {
        *self.0.waiting.lock() -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A company's reads past its share wait; another company's read is admitted at once meanwhile.
    #[tokio::test]
    async fn a_company_past_its_share_waits_and_the_others_do_not() {
        let admission = Arc::new(Admission::new(2, 10));
        let held = [
            admission.admit("evil").await.unwrap(),
            admission.admit("evil").await.unwrap(),
        ];
        let third = {
            let admission = admission.clone();
            tokio::spawn(async move { admission.admit("evil").await.map(|_| ()) })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!third.is_finished(), "a third read of evil waits");
        assert_eq!(admission.waiting(), [("evil".to_string(), 1)]);
        let acme = tokio::time::timeout(Duration::from_secs(5), admission.admit("acme"))
            .await
            .expect("acme is not held up by evil's reads")
            .unwrap();
        assert_eq!(acme.company(), "acme");
        drop(held);
        tokio::time::timeout(Duration::from_secs(5), third)
            .await
            .expect("the waiting read goes on once a slot is free")
            .unwrap()
            .unwrap();
    }

    /// A full queue refuses its company's next read (503) and no other company's.
    #[tokio::test]
    async fn a_full_queue_refuses_only_its_company() {
        let admission = Arc::new(Admission::new(1, 2));
        let _held = admission.admit("evil").await.unwrap();
        let waiting: Vec<_> = (0..2)
            .map(|_| {
                let admission = admission.clone();
                tokio::spawn(async move { admission.admit("evil").await.map(|_| ()) })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let Err(refused) = admission.admit("evil").await else {
            panic!("a read past a full queue is refused");
        };
        assert!(matches!(refused, AnalyticsError::Busy(_)), "{refused:?}");
        assert!(admission.admit("acme").await.is_ok());
        for w in waiting {
            w.abort();
        }
    }

    /// A read cut off while it waits leaves the queue, and companies with nothing under way are
    /// forgotten.
    #[tokio::test]
    async fn reads_that_end_or_give_up_leave_nothing_behind() {
        let admission = Arc::new(Admission::new(1, 1));
        let held = admission.admit("evil").await.unwrap();
        let given_up = {
            let admission = admission.clone();
            tokio::spawn(async move { admission.admit("evil").await.map(|_| ()) })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        given_up.abort();
        let _ = given_up.await;
        // The queue's place is free again: one more may wait.
        let next = {
            let admission = admission.clone();
            tokio::spawn(async move { admission.admit("evil").await.map(|_| ()) })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!next.is_finished());
        drop(held);
        next.await.unwrap().unwrap();
        assert_eq!(admission.companies(), 0);
        assert!(admission.waiting().is_empty());
    }
}
