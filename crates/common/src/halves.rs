//! Writing a batch so that one item the write cannot take fails alone: the items of many companies
//! share a batch (search documents, scored calls), and one company's odd item must not keep the others'
//! out. A write of several that fails is tried again by halves, down to the one item at fault, so a
//! batch of n costs at most 2n - 1 writes when something fails and one when nothing does.

use std::future::Future;

/// Writes `items` with `write`, all at once when it can; the items that failed even when written alone,
/// each with its error. An error `divisible` says is not the items' fault (the store is down) ends the
/// whole write at once, as that error.
pub async fn by_halves<'a, T, E, F, Fut>(
    items: &'a [T],
    divisible: impl Fn(&E) -> bool,
    mut write: F,
) -> Result<Vec<(&'a T, E)>, E>
where
    F: FnMut(&'a [T]) -> Fut,
    Fut: Future<Output = Result<(), E>>,
{
    let mut failed = Vec::new();
    // The parts still to write, the next one last.
    let mut parts = vec![items];
    while let Some(part) = parts.pop() {
        if part.is_empty() {
            continue;
        }
        match write(part).await {
            Ok(()) => {}
            Err(e) if !divisible(&e) => return Err(e),
            Err(e) if part.len() == 1 => failed.push((&part[0], e)),
            Err(_) => {
                let (first, second) = part.split_at(part.len() / 2);
                parts.push(second);
                parts.push(first);
            }
        }
    }
    Ok(failed)
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    #[tokio::test]
    async fn a_batch_that_writes_is_one_write() {
        let writes = RefCell::new(0);
        let items: Vec<u32> = (0..100).collect();
        let failed = by_halves(
            &items,
            |_| true,
            |_| {
                *writes.borrow_mut() += 1;
                async { Ok::<(), ()>(()) }
            },
        )
        .await
        .unwrap();
        assert!(failed.is_empty());
        assert_eq!(*writes.borrow(), 1);
    }

    #[tokio::test]
    async fn only_the_items_at_fault_fail_and_the_rest_are_written() {
        let written = RefCell::new(Vec::new());
        let writes = RefCell::new(0);
        let items: Vec<u32> = (0..100).collect();
        let failed = by_halves(
            &items,
            |_| true,
            |part: &[u32]| {
                *writes.borrow_mut() += 1;
                let bad = part.iter().any(|i| [7, 64, 65].contains(i));
                if !bad {
                    written.borrow_mut().extend_from_slice(part);
                }
                async move {
                    if bad {
                        Err("refused")
                    } else {
                        Ok(())
                    }
                }
            },
        )
        .await
        .unwrap();
        let failed: Vec<u32> = failed.into_iter().map(|(i, _)| *i).collect();
        assert_eq!(failed, [7, 64, 65]);
        let mut written = written.into_inner();
        written.sort();
        let expected: Vec<u32> = (0..100).filter(|i| ![7, 64, 65].contains(i)).collect();
        assert_eq!(written, expected);
        assert!(*writes.borrow() < 2 * 100, "at most 2n - 1 writes");
    }

    #[tokio::test]
    async fn when_everything_fails_every_item_fails_alone() {
        let items: Vec<u32> = (0..5).collect();
        let failed = by_halves(&items, |_| true, |_| async { Err::<(), _>("down") }).await;
        assert_eq!(failed.unwrap().len(), 5);
    }

    #[tokio::test]
    async fn an_error_that_is_not_the_items_fault_ends_the_write_at_once() {
        let writes = RefCell::new(0);
        let items: Vec<u32> = (0..64).collect();
        let failed = by_halves(
            &items,
            |e: &&str| *e != "down",
            |_| {
                *writes.borrow_mut() += 1;
                async { Err("down") }
            },
        )
        .await;
        assert_eq!(failed.unwrap_err(), "down");
        assert_eq!(*writes.borrow(), 1);
    }
}
