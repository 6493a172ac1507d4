//! The category rollup of one agent's day in one application, packed into one value (docs/scoring.md,
//! Rollups): `/appstats` over 30 days of 100 agents reads 3,000 rows instead of one per category
//! (30,000 for 10 categories), and what a database client spends per row was most of that read.
//!
//! The value is a version byte (1), then one entry per category in byte order of its path ('' the
//! application as a whole first): the path's length in bytes as a big-endian `u32`, the path, then
//! `calls`, `hits`, `coverage`, `score`, `duration` and `silence` as big-endian 8-byte integers and
//! IEEE doubles. Big-endian because that is what PostgreSQL's `int4send`, `int8send` and `float8send`
//! give, so SQL can write the same value (the benchmark's fill does). An entry whose `calls` falls to 0
//! is left out: no call of the day counts in that category any more.

use std::sync::Arc;

use common::db::StoreError;

use super::rollups::CategoryDayDelta;

/// The version byte every value starts with.
const VERSION: u8 = 1;

/// The value of a day without categories.
pub(crate) const EMPTY: &[u8] = &[VERSION];

/// Bytes of an entry besides its path: the path's length and six 8-byte numbers.
const FIXED: usize = 4 + 6 * 8;

/// A value that does not follow the format: the store was written by something else.
fn corrupt(why: &str) -> StoreError {
    StoreError::Database(sqlx::Error::Decode(
        format!("a packed category rollup is corrupt: {why}").into(),
    ))
}

/// Appends one entry.
fn put(out: &mut Vec<u8>, category: &str, sums: &CategoryDayDelta) {
    out.extend_from_slice(&(category.len() as u32).to_be_bytes());
    out.extend_from_slice(category.as_bytes());
    out.extend_from_slice(&sums.calls.to_be_bytes());
    out.extend_from_slice(&sums.hits.to_be_bytes());
    out.extend_from_slice(&sums.coverage.to_be_bytes());
    out.extend_from_slice(&sums.score.to_be_bytes());
    out.extend_from_slice(&sums.duration.to_be_bytes());
    out.extend_from_slice(&sums.silence.to_be_bytes());
}

/// Each entry of a value, in order: its path's bytes and its sums.
fn entries(value: &[u8]) -> Result<Vec<(&[u8], CategoryDayDelta)>, StoreError> {
    let mut out = Vec::new();
    each(value, |path, sums| out.push((path, sums)))?;
    Ok(out)
}

/// Calls `f` with each entry of a value, in order.
fn each<'v>(
    value: &'v [u8],
    mut f: impl FnMut(&'v [u8], CategoryDayDelta),
) -> Result<(), StoreError> {
    let Some((&VERSION, mut rest)) = value.split_first() else {
        return Err(corrupt("it does not start with version 1"));
    };
    let number = |bytes: &[u8], at: usize| {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(&bytes[at..at + 8]);
        eight
    };
    let mut previous: Option<&[u8]> = None;
    while !rest.is_empty() {
        if rest.len() < FIXED {
            return Err(corrupt("an entry is cut short"));
        }
        let length = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        if rest.len() < FIXED + length {
            return Err(corrupt("an entry is cut short"));
        }
        let (path, numbers) = (&rest[4..4 + length], &rest[4 + length..FIXED + length]);
        // Merging and adding up rely on the order: out of it, a category would be listed twice.
        if previous.is_some_and(|p| p >= path) {
            return Err(corrupt("its categories are not in byte order"));
        }
        previous = Some(path);
        f(
            path,
            CategoryDayDelta {
                calls: i64::from_be_bytes(number(numbers, 0)),
                hits: i64::from_be_bytes(number(numbers, 8)),
                coverage: f64::from_be_bytes(number(numbers, 16)),
                score: i64::from_be_bytes(number(numbers, 24)),
                duration: f64::from_be_bytes(number(numbers, 32)),
                silence: f64::from_be_bytes(number(numbers, 40)),
            },
        );
        rest = &rest[FIXED + length..];
    }
    Ok(())
}

/// Two lists of category sums in byte order of their paths, each path once per list, as one in that
/// order: the sums of a path in both added up. `P` orders as the path's bytes (`&[u8]`, `Arc<str>`).
pub(crate) fn add_in_order<P: Ord>(
    a: impl IntoIterator<Item = (P, CategoryDayDelta)>,
    b: impl IntoIterator<Item = (P, CategoryDayDelta)>,
) -> Vec<(P, CategoryDayDelta)> {
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    let mut out = Vec::with_capacity(a.size_hint().0.max(b.size_hint().0));
    loop {
        let next = match (a.peek(), b.peek()) {
            (None, None) => return out,
            (Some(_), None) => a.next(),
            (None, Some(_)) => b.next(),
            (Some((x, _)), Some((y, _))) => match x.cmp(y) {
                std::cmp::Ordering::Less => a.next(),
                std::cmp::Ordering::Greater => b.next(),
                std::cmp::Ordering::Equal => a.next().map(|(path, mut sums)| {
                    sums.add(&b.next().expect("peeked").1);
                    (path, sums)
                }),
            },
        };
        out.extend(next);
    }
}

/// A value with `changes` (by category, in byte order, each once) added to the sums of `current`.
pub(crate) fn merged(
    current: &[u8],
    changes: &[(&str, &CategoryDayDelta)],
) -> Result<Vec<u8>, StoreError> {
    let old = entries(current)?;
    let new = changes
        .iter()
        .map(|(path, sums)| (path.as_bytes(), (*sums).clone()));
    let mut out = Vec::with_capacity(current.len() + changes.len() * (FIXED + 16));
    out.push(VERSION);
    for (path, sums) in add_in_order(old, new) {
        if sums.calls != 0 {
            let path = std::str::from_utf8(path).map_err(|_| corrupt("a path is not UTF-8"))?;
            put(&mut out, path, &sums);
        }
    }
    Ok(out)
}

/// Category paths read from many values, each kept once: a 30-day read holds 30,000 entries of the
/// same few paths.
#[derive(Debug, Default)]
pub(crate) struct Paths(Vec<Arc<str>>);

impl Paths {
    pub(crate) fn get(&mut self, path: &[u8]) -> Result<Arc<str>, StoreError> {
        if let Some(known) = self.0.iter().find(|p| p.as_bytes() == path) {
            return Ok(known.clone());
        }
        let path: Arc<str> = std::str::from_utf8(path)
            .map_err(|_| corrupt("a path is not UTF-8"))?
            .into();
        self.0.push(path.clone());
        Ok(path)
    }
}

/// The entries of a value, their paths shared through `paths`.
pub(crate) fn read(
    value: &[u8],
    paths: &mut Paths,
) -> Result<Vec<(Arc<str>, CategoryDayDelta)>, StoreError> {
    let mut out = Vec::with_capacity(16);
    let mut failed = None;
    each(value, |path, sums| match paths.get(path) {
        Ok(path) => out.push((path, sums)),
        Err(e) => failed = Some(e),
    })?;
    match failed {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sums(calls: i64, hits: i64, coverage: f64) -> CategoryDayDelta {
        CategoryDayDelta {
            calls,
            hits,
            coverage,
            score: 3 * hits,
            duration: 60.5 * calls as f64,
            silence: 0.25 * calls as f64,
        }
    }

    fn read_all(value: &[u8]) -> Vec<(String, CategoryDayDelta)> {
        read(value, &mut Paths::default())
            .unwrap()
            .into_iter()
            .map(|(p, s)| (p.to_string(), s))
            .collect()
    }

    #[test]
    fn changes_are_added_by_category_in_byte_order() {
        let first = merged(
            EMPTY,
            &[("", &sums(2, 1, 0.5)), ("Sales", &sums(2, 2, 1.0))],
        )
        .unwrap();
        assert_eq!(
            read_all(&first),
            [
                ("".to_string(), sums(2, 1, 0.5)),
                ("Sales".to_string(), sums(2, 2, 1.0))
            ]
        );
        // One new path before, one between, one after; one added to.
        let second = merged(
            &first,
            &[
                ("", &sums(1, 1, 0.25)),
                ("Greeting", &sums(1, 0, 0.0)),
                ("Sales.Upsell", &sums(1, 1, 1.0)),
                ("Zeta", &sums(1, 1, 0.125)),
            ],
        )
        .unwrap();
        let got = read_all(&second);
        let paths: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["", "Greeting", "Sales", "Sales.Upsell", "Zeta"]);
        assert_eq!(got[0].1, sums(3, 2, 0.75));
        assert_eq!(got[2].1, sums(2, 2, 1.0));
        assert_eq!(
            second.len(),
            1 + 5 * FIXED + "GreetingSalesSales.UpsellZeta".len()
        );
    }

    #[test]
    fn a_category_whose_calls_fall_to_zero_is_left_out() {
        let value = merged(EMPTY, &[("", &sums(1, 1, 0.5)), ("A", &sums(1, 0, 0.0))]).unwrap();
        let taken = merged(&value, &[("A", &sums(-1, 0, 0.0))]).unwrap();
        assert_eq!(read_all(&taken), [("".to_string(), sums(1, 1, 0.5))]);
        let none = merged(&taken, &[("", &sums(-1, -1, -0.5))]).unwrap();
        assert_eq!(none, EMPTY);
        assert!(read_all(&none).is_empty());
    }

    #[test]
    fn the_numbers_are_big_endian_as_postgresql_sends_them() {
        let value = merged(EMPTY, &[("é", &sums(1, 1, 0.5))]).unwrap();
        let mut expected = vec![1, 0, 0, 0, 2, 0xc3, 0xa9];
        expected.extend_from_slice(&1i64.to_be_bytes());
        expected.extend_from_slice(&1i64.to_be_bytes());
        expected.extend_from_slice(&0.5f64.to_be_bytes());
        expected.extend_from_slice(&3i64.to_be_bytes());
        expected.extend_from_slice(&60.5f64.to_be_bytes());
        expected.extend_from_slice(&0.25f64.to_be_bytes());
        assert_eq!(value, expected);
    }

    #[test]
    fn paths_are_shared_between_values() {
        let value = merged(EMPTY, &[("A", &sums(1, 1, 0.5))]).unwrap();
        let mut paths = Paths::default();
        let a = read(&value, &mut paths).unwrap();
        let b = read(&value, &mut paths).unwrap();
        assert!(Arc::ptr_eq(&a[0].0, &b[0].0));
    }

    #[test]
    fn a_corrupt_value_is_an_error_not_a_panic() {
        let value = merged(EMPTY, &[("A", &sums(1, 1, 0.5))]).unwrap();
        for bad in [&[][..], &[2][..], &value[..value.len() - 1], &value[..3]] {
            let e = read(bad, &mut Paths::default()).unwrap_err();
            assert!(e.to_string().contains("corrupt"), "{e}");
            assert!(merged(bad, &[]).is_err());
        }
        let two = merged(EMPTY, &[("A", &sums(1, 1, 0.5)), ("B", &sums(1, 1, 0.5))]).unwrap();
        let (a, b) = two[1..].split_at(FIXED + 1);
        let swapped = [&[VERSION][..], b, a].concat();
        let e = read(&swapped, &mut Paths::default()).unwrap_err();
        assert!(e.to_string().contains("byte order"), "{e}");
        let repeated = [&[VERSION][..], a, a].concat();
        assert!(read(&repeated, &mut Paths::default()).is_err());
        let mut not_utf8 = value.clone();
        not_utf8[5] = 0xff;
        assert!(read(&not_utf8, &mut Paths::default()).is_err());
    }
}
