//! Writing a batch of documents so that one the index refuses fails alone: the documents of many
//! companies share a batch, and one company's odd document must not keep the others' calls out of the
//! index. Documents `check_document` refuses are set aside first; a write the index refuses all the same
//! (`SearchError::Invalid`) is tried again by halves (`crate::halves`), down to the one document at
//! fault; any other error is the index's own, for the whole write.

use super::check::check_document;
use super::port::{Refused, SearchDocument, SearchError, SearchIndex};

/// Writes what `index` takes of `documents` and answers the others, each with why.
pub(super) async fn upsert_each<I: SearchIndex + ?Sized>(
    index: &I,
    documents: &[SearchDocument],
) -> Result<Vec<Refused>, SearchError> {
    let mut refused = Vec::new();
    let checked: Vec<SearchDocument>;
    let writable = if documents.iter().all(|d| check_document(d).is_ok()) {
        documents
    } else {
        checked = documents
            .iter()
            .filter(|d| match check_document(d) {
                Ok(()) => true,
                Err(e) => {
                    refused.push(Refused::new(&d.id, e));
                    false
                }
            })
            .cloned()
            .collect();
        &checked[..]
    };
    let divisible = |e: &SearchError| matches!(e, SearchError::Invalid(_));
    let failed = crate::halves::by_halves(writable, divisible, |part| index.upsert(part)).await?;
    refused.extend(failed.into_iter().map(|(d, e)| Refused::new(&d.id, e)));
    Ok(refused)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use async_trait::async_trait;

    use super::super::port::{Scope, SearchPage, SearchQuery};
    use super::*;

    /// An index that refuses every write holding a document whose text is "bad", counting writes.
    #[derive(Default)]
    struct Picky {
        written: Mutex<Vec<String>>,
        writes: Mutex<usize>,
        down: bool,
    }

    #[async_trait]
    impl SearchIndex for Picky {
        async fn upsert(&self, documents: &[SearchDocument]) -> Result<(), SearchError> {
            *self.writes.lock().unwrap() += 1;
            if self.down {
                return Err(SearchError::Backend("down".into()));
            }
            if documents.iter().any(|d| d.text == "bad") {
                return Err(SearchError::Invalid("a bad text".into()));
            }
            let mut written = self.written.lock().unwrap();
            written.extend(documents.iter().map(|d| d.id.clone()));
            Ok(())
        }
        async fn delete(&self, _: &[String]) -> Result<(), SearchError> {
            unreachable!()
        }
        async fn delete_scope(&self, _: &Scope) -> Result<(), SearchError> {
            unreachable!()
        }
        async fn search(&self, _: &SearchQuery) -> Result<SearchPage, SearchError> {
            unreachable!()
        }
        async fn ready(&self) -> Result<(), SearchError> {
            Ok(())
        }
    }

    fn document(id: &str, text: &str, datetime: &str) -> SearchDocument {
        SearchDocument {
            id: id.into(),
            company: "acme".into(),
            organization: "main".into(),
            folder: "calls".into(),
            datetime: datetime.into(),
            text: text.into(),
            fields: BTreeMap::new(),
        }
    }

    const T: &str = "2026-11-20T10:00:00";

    #[tokio::test]
    async fn a_batch_without_a_bad_document_is_one_write() {
        let index = Picky::default();
        let documents: Vec<_> = (0..10)
            .map(|i| document(&format!("c{i}"), "ok", T))
            .collect();
        assert!(index.upsert_each(&documents).await.unwrap().is_empty());
        assert_eq!(*index.writes.lock().unwrap(), 1);
        assert_eq!(index.written.lock().unwrap().len(), 10);
    }

    #[tokio::test]
    async fn documents_the_index_refuses_fail_alone() {
        let index = Picky::default();
        let mut documents: Vec<_> = (0..16)
            .map(|i| document(&format!("c{i}"), "ok", T))
            .collect();
        documents[5].text = "bad".into();
        documents[11].text = "bad".into();
        documents[13].datetime = "1899-12-31T23:59:59".into();
        let refused = index.upsert_each(&documents).await.unwrap();
        let mut ids: Vec<&str> = refused.iter().map(|r| r.id.as_str()).collect();
        ids.sort();
        assert_eq!(ids, ["c11", "c13", "c5"]);
        assert!(
            refused.iter().any(|r| r.reason.contains("year")),
            "{refused:?}"
        );
        let mut written = index.written.lock().unwrap().clone();
        written.sort();
        let expected: Vec<String> = (0..16)
            .filter(|i| ![5, 11, 13].contains(i))
            .map(|i| format!("c{i}"))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(written, expected);
        assert!(
            *index.writes.lock().unwrap() < 2 * 15,
            "at most 2n - 1 writes"
        );
    }

    #[tokio::test]
    async fn an_index_that_is_down_fails_the_whole_write_at_once() {
        let index = Picky {
            down: true,
            ..Picky::default()
        };
        let documents: Vec<_> = (0..8)
            .map(|i| document(&format!("c{i}"), "ok", T))
            .collect();
        assert!(matches!(
            index.upsert_each(&documents).await,
            Err(SearchError::Backend(_))
        ));
        assert_eq!(*index.writes.lock().unwrap(), 1, "no halving of an outage");
    }
}
