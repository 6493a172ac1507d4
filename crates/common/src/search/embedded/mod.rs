//! The embedded search adapter: a tantivy index in a directory on local disk, for `speechd` and every
//! deployment that runs without a Meilisearch server. It keeps the port's semantics (`common::search`):
//! plain words, all of which must match (AND) — each word of `q`, lowercased and accent-folded by
//! the same analyzer that indexed the text, must be found whole in the text or in a metadata value.
//!
//! Words are runs of letters and digits, so scripts written without spaces (Chinese, Japanese) are words
//! only between punctuation, and a run over 40 bytes is not indexed: the embedded index finds such text
//! poorly, where Meilisearch segments it.
//!
//! One `IndexWriter` behind a mutex takes every write; each call commits and reloads the reader before it
//! returns, so the write is visible to the next search. Tantivy blocks (disk, merges, scoring), so all of
//! its work runs in `spawn_blocking`, never on the async workers. Searches run a few per core at a time
//! (`SEARCHES_PER_CORE`), the others waiting in arrival order: a search is work for the processor only,
//! and run all at once they shared the cores and finished late together (32 at once on two cores: p99
//! 55 to 60 ms), where in turn each takes its own time plus its wait (p99 41 to 46 ms).
//!
//! Fields: `id`, `company`, `organization`, `folder` (raw strings, indexed and stored), `datetime` (stored,
//! and a raw fast field to sort by: the fixed layout sorts as text in time order), `text` (words,
//! stored for the snippets `snippets` chooses), `fields` (the metadata as a stored JSON object),
//! `fields_exact` (the metadata as a JSON object of normalized whole values, indexed raw, for filters)
//! and `fields_text` (every metadata value as words, for `q`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use tantivy::collector::{Count, TopDocs};
use tantivy::directory::MmapDirectory;
use tantivy::query::{AllQuery, BooleanQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, JsonObjectOptions, OwnedValue, Schema, TextFieldIndexing,
    TextOptions, Value,
};
use tantivy::tokenizer::{
    AsciiFoldingFilter, LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer,
};
use tantivy::{
    DocAddress, Index, IndexReader, IndexWriter, Order, ReloadPolicy, Searcher, TantivyDocument,
    Term,
};

use self::snippets::Snippets;
use super::check::{check_document, check_query, check_scope, is_indexable_id};
use super::port::{
    has_words, normalize_filter_value, reachable, Scope, SearchDocument, SearchError, SearchHit,
    SearchIndex, SearchPage, SearchQuery, MAX_QUERY_WORDS,
};

mod snippets;

/// The analyzer of the text, the metadata words and `q`.
const WORDS: &str = "speech_words";
/// Words longer than this are not indexed (nor searched): they are noise, not speech.
const LONGEST_WORD: usize = 40;
/// The writer's indexing buffer; one thread, as a write is one call's documents.
const WRITER_MEMORY: usize = 32 * 1024 * 1024;

/// The size past which the document store closes a block, which a hit then decompresses whole to read
/// its document. Tantivy's default, 16 KB, holds four 5-minute transcripts, so every hit decompressed
/// three others' texts as well; at 2 KB a call is a block of its own, and only short documents
/// (metadata, a few utterances) share one. Over 100,000 calls that served a sixth more searches a
/// second, for a document store about twice as large (blocks of one call compress less: about 2 KB a
/// call), which beside the transcript JSON kept in the object store is little.
const DOCSTORE_BLOCK: usize = 2048;

/// Searches run at once per core. Two keep every core busy while a finished search hands its core to
/// the next (one left the cores idle for that hand-off, 15 % fewer searches a second); more let the
/// searches share the cores again and finish late together.
const SEARCHES_PER_CORE: usize = 2;

/// The embedded search index. Cheap to clone; clones share the index.
#[derive(Clone)]
pub struct EmbeddedIndex {
    inner: Arc<Inner>,
    /// The searches that may run at once, `SEARCHES_PER_CORE` per core (fair: waiters go in arrival
    /// order).
    searches: Arc<tokio::sync::Semaphore>,
}

struct Inner {
    index: Index,
    reader: IndexReader,
    writer: Mutex<IndexWriter<TantivyDocument>>,
    fields: Fields,
}

#[derive(Clone, Copy)]
struct Fields {
    id: Field,
    company: Field,
    organization: Field,
    folder: Field,
    datetime: Field,
    text: Field,
    fields: Field,
    fields_exact: Field,
    fields_text: Field,
}

impl EmbeddedIndex {
    /// Opens the index in `dir`, creating the directory and an empty index when missing. Blocks (disk):
    /// call it at startup or from `spawn_blocking`. Only one `EmbeddedIndex` may hold a directory at a
    /// time (tantivy's writer lock); a second open of the same directory fails.
    pub fn open(dir: &Path) -> Result<Self, SearchError> {
        std::fs::create_dir_all(dir).map_err(|e| backend(format!("{}: {e}", dir.display())))?;
        let (schema, fields) = schema();
        let directory = MmapDirectory::open(dir).map_err(|e| backend(e.to_string()))?;
        let mut index = Index::open_or_create(directory, schema).map_err(tantivy_error)?;
        // Segments written from now on (new ones, and merges that rewrite their documents); the blocks
        // of the ones written before stay as they are.
        index.settings_mut().docstore_blocksize = DOCSTORE_BLOCK;
        index.tokenizers().register(WORDS, words());
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(tantivy_error)?;
        let writer = index
            .writer_with_num_threads(1, WRITER_MEMORY)
            .map_err(tantivy_error)?;
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Ok(EmbeddedIndex {
            inner: Arc::new(Inner {
                index,
                reader,
                writer: Mutex::new(writer),
                fields,
            }),
            searches: Arc::new(tokio::sync::Semaphore::new(SEARCHES_PER_CORE * cores)),
        })
    }

    /// Runs tantivy's blocking work on the blocking pool.
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Inner) -> Result<T, SearchError> + Send + 'static,
    ) -> Result<T, SearchError> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || work(&inner))
            .await
            .map_err(|e| backend(format!("search task: {e}")))?
    }
}

#[async_trait]
impl SearchIndex for EmbeddedIndex {
    async fn upsert(&self, documents: &[SearchDocument]) -> Result<(), SearchError> {
        documents.iter().try_for_each(check_document)?;
        if documents.is_empty() {
            return Ok(());
        }
        let documents = documents.to_vec();
        self.blocking(move |inner| {
            let f = inner.fields;
            inner.write(|writer| {
                // In call order, so a later copy of an id in the same call wins.
                for document in &documents {
                    writer.delete_term(Term::from_field_text(f.id, &document.id));
                    writer.add_document(to_tantivy(f, document))?;
                }
                Ok(())
            })
        })
        .await
    }

    async fn delete(&self, ids: &[String]) -> Result<(), SearchError> {
        let ids: Vec<String> = ids
            .iter()
            .filter(|id| is_indexable_id(id))
            .cloned()
            .collect();
        if ids.is_empty() {
            return Ok(());
        }
        self.blocking(move |inner| {
            let f = inner.fields;
            inner.write(|writer| {
                for id in &ids {
                    writer.delete_term(Term::from_field_text(f.id, id));
                }
                Ok(())
            })
        })
        .await
    }

    async fn delete_scope(&self, scope: &Scope) -> Result<(), SearchError> {
        check_scope(scope)?;
        let scope = scope.clone();
        self.blocking(move |inner| {
            let query = BooleanQuery::new(scope_clauses(inner.fields, &scope));
            inner.write(|writer| writer.delete_query(Box::new(query)).map(drop))
        })
        .await
    }

    async fn search(&self, query: &SearchQuery) -> Result<SearchPage, SearchError> {
        check_query(query)?;
        let query = query.clone();
        // The semaphore is never closed. The turn goes with the work: a request given up while its
        // search runs does not free its turn before the search ends.
        let turn = self
            .searches
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| backend(format!("search turn: {e}")))?;
        self.blocking(move |inner| {
            let _turn = turn;
            inner.search(&query)
        })
        .await
    }

    async fn ready(&self) -> Result<(), SearchError> {
        // Reading the index's metadata fails when its directory is gone or unreadable.
        self.blocking(|inner| inner.index.load_metas().map(drop).map_err(tantivy_error))
            .await
    }
}

impl Inner {
    /// Applies `changes`, commits and reloads the reader, under the writer's lock so that writes
    /// become visible in the order they were made. A failed write is rolled back whole.
    fn write(
        &self,
        changes: impl FnOnce(&IndexWriter<TantivyDocument>) -> tantivy::Result<()>,
    ) -> Result<(), SearchError> {
        let mut writer = self.writer.lock();
        let committed = changes(&writer).and_then(|()| writer.commit().map(drop));
        if let Err(e) = committed {
            // The rollback's own failure says less than the write's.
            let _ = writer.rollback();
            return Err(tantivy_error(e));
        }
        self.reader.reload().map_err(tantivy_error)
    }

    fn search(&self, query: &SearchQuery) -> Result<SearchPage, SearchError> {
        let f = self.fields;
        let words = if has_words(&query.q) {
            let words = words_of(&query.q);
            if words.is_empty() {
                // Only words too long to be indexed: nothing can have them.
                return Ok(SearchPage {
                    total: 0,
                    hits: Vec::new(),
                });
            }
            words
        } else {
            Vec::new()
        };

        let searcher = self.reader.searcher();
        // A scope every document of the index is in (one company, one organization) filters nothing:
        // left out, a one-word query is the word's postings alone, which the top hits are taken from
        // without scoring every document that has the word (block-max WAND).
        let mut clauses = Vec::new();
        for term in scope_terms(f, &query.scope) {
            if !every_document_has(&searcher, &term)? {
                clauses.push((Occur::Must, unscored(term)));
            }
        }
        for (name, value) in &query.filter {
            clauses.push((Occur::Must, exact_value(f, name, value)));
        }
        for word in &words {
            let in_text = scored(Term::from_field_text(f.text, word));
            let in_fields = Term::from_field_text(f.fields_text, word);
            // Metadata seldom holds a query's word. One that no metadata value has is looked for in the
            // text alone: the same documents, scored the same, and a one-word query is then counted from
            // the index's count of the word's documents instead of by visiting each of them.
            let query = if searcher.doc_freq(&in_fields).map_err(tantivy_error)? == 0 {
                in_text
            } else {
                Box::new(BooleanQuery::new(vec![
                    (Occur::Should, in_text),
                    (Occur::Should, scored(in_fields)),
                ]))
            };
            clauses.push((Occur::Must, query));
        }
        let tantivy_query: Box<dyn Query> = match clauses.len() {
            0 => Box::new(AllQuery),
            1 => clauses.pop().expect("one clause").1,
            _ => Box::new(BooleanQuery::new(clauses)),
        };

        let (offset, limit) = reachable(query.offset, query.limit);
        let total = |query: &dyn Query| searcher.search(query, &Count).map_err(tantivy_error);
        let (total, addresses) = if limit == 0 {
            // TopDocs refuses a limit of 0.
            (total(&*tantivy_query)?, Vec::new())
        } else if words.is_empty() {
            let newest = TopDocs::with_limit(limit)
                .and_offset(offset)
                .order_by_string_fast_field("datetime", Order::Desc);
            let (total, top) = searcher
                .search(&*tantivy_query, &(Count, newest))
                .map_err(tantivy_error)?;
            (total, top.into_iter().map(|(_, a)| a).collect())
        } else {
            // Counted apart: a count scores nothing, and the top hits alone may skip the documents
            // that cannot reach them, which a collector counting every one would not let them do.
            let best = TopDocs::with_limit(limit)
                .and_offset(offset)
                .order_by_score();
            let top = searcher
                .search(&*tantivy_query, &best)
                .map_err(tantivy_error)?;
            (
                total(&*tantivy_query)?,
                top.into_iter().map(|(_, a)| a).collect(),
            )
        };

        let snippets = if words.is_empty() || addresses.is_empty() {
            None
        } else {
            Some(Snippets::new(&searcher, f.text, words)?)
        };
        let hits = addresses
            .into_iter()
            .map(|address| hit(f, &searcher, address, snippets.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SearchPage {
            total: total as u64,
            hits,
        })
    }
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let raw = || {
        TextOptions::default()
            .set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer("raw")
                    .set_fieldnorms(false)
                    .set_index_option(IndexRecordOption::Basic),
            )
            .set_stored()
    };
    let words_indexing = TextFieldIndexing::default()
        .set_tokenizer(WORDS)
        .set_index_option(IndexRecordOption::WithFreqs);
    let fields = Fields {
        id: builder.add_text_field("id", raw()),
        company: builder.add_text_field("company", raw()),
        organization: builder.add_text_field("organization", raw()),
        folder: builder.add_text_field("folder", raw()),
        datetime: builder.add_text_field(
            "datetime",
            TextOptions::default().set_stored().set_fast("raw"),
        ),
        text: builder.add_text_field(
            "text",
            TextOptions::default()
                .set_indexing_options(words_indexing.clone())
                .set_stored(),
        ),
        fields: builder.add_json_field("fields", JsonObjectOptions::default().set_stored()),
        fields_exact: builder.add_json_field(
            "fields_exact",
            JsonObjectOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer("raw")
                    .set_fieldnorms(false)
                    .set_index_option(IndexRecordOption::Basic),
            ),
        ),
        fields_text: builder.add_text_field(
            "fields_text",
            TextOptions::default().set_indexing_options(words_indexing),
        ),
    };
    (builder.build(), fields)
}

/// Words as the index holds them: split on anything but letters and digits, lowercased, accents folded.
fn words() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(LONGEST_WORD))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build()
}

/// The distinct words of `q` that count, in order.
fn words_of(q: &str) -> Vec<String> {
    let mut analyzer = words();
    let mut stream = analyzer.token_stream(q);
    let mut found: Vec<String> = Vec::new();
    while found.len() < MAX_QUERY_WORDS && stream.advance() {
        let word = &stream.token().text;
        if !found.contains(word) {
            found.push(word.clone());
        }
    }
    found
}

fn to_tantivy(f: Fields, document: &SearchDocument) -> TantivyDocument {
    let mut doc = TantivyDocument::default();
    doc.add_text(f.id, &document.id);
    doc.add_text(f.company, &document.company);
    doc.add_text(f.organization, &document.organization);
    doc.add_text(f.folder, &document.folder);
    doc.add_text(f.datetime, &document.datetime);
    doc.add_text(f.text, &document.text);
    let object = |value: fn(&str) -> String| -> BTreeMap<String, OwnedValue> {
        document
            .fields
            .iter()
            .map(|(name, v)| (name.clone(), OwnedValue::Str(value(v))))
            .collect()
    };
    doc.add_object(f.fields, object(str::to_string));
    doc.add_object(f.fields_exact, object(normalize_filter_value));
    for value in document.fields.values() {
        doc.add_text(f.fields_text, value);
    }
    doc
}

/// Every document of the scope; the clauses score nothing, so relevance is the words' alone.
fn scope_clauses(f: Fields, scope: &Scope) -> Vec<(Occur, Box<dyn Query>)> {
    scope_terms(f, scope)
        .into_iter()
        .map(|term| (Occur::Must, unscored(term)))
        .collect()
}

/// The terms a document of the scope has: its company's, and its organization's and folder's when the
/// scope names them.
fn scope_terms(f: Fields, scope: &Scope) -> Vec<Term> {
    let mut terms = vec![Term::from_field_text(f.company, &scope.company)];
    if let Some(organization) = &scope.organization {
        terms.push(Term::from_field_text(f.organization, organization));
    }
    if let Some(folder) = &scope.folder {
        terms.push(Term::from_field_text(f.folder, folder));
    }
    terms
}

/// Whether every document the searcher sees, deleted ones included, has `term`, a term of a field that
/// holds one value per document: then in each segment as many documents have it as the segment holds.
fn every_document_has(searcher: &Searcher, term: &Term) -> Result<bool, SearchError> {
    for segment in searcher.segment_readers() {
        let have = segment
            .inverted_index(term.field())
            .map_err(tantivy_error)?
            .doc_freq(term)
            .map_err(|e| backend(e.to_string()))?;
        if have != segment.max_doc() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The documents whose metadata field `name` holds `value`, compared as both were normalized.
fn exact_value(f: Fields, name: &str, value: &str) -> Box<dyn Query> {
    // The path is read with `\` escapes and `.` as nesting; the name is one key, taken literally.
    let path = name.replace('\\', "\\\\").replace('.', "\\.");
    let mut term = Term::from_field_json_path(f.fields_exact, &path, false);
    term.append_type_and_str(&normalize_filter_value(value));
    unscored(term)
}

/// The documents that have `term`, scored by how often (BM25).
fn scored(term: Term) -> Box<dyn Query> {
    Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs))
}

fn unscored(term: Term) -> Box<dyn Query> {
    Box::new(ConstScoreQuery::new(
        Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
        0.0,
    ))
}

fn hit(
    f: Fields,
    searcher: &Searcher,
    address: DocAddress,
    snippets: Option<&Snippets>,
) -> Result<SearchHit, SearchError> {
    let doc: TantivyDocument = searcher.doc(address).map_err(tantivy_error)?;
    let text = |field: Field| {
        doc.get_first(field)
            .and_then(|value| value.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let fields = doc
        .get_first(f.fields)
        .and_then(|value| value.as_object())
        .map(|object| {
            object
                .filter_map(|(name, value)| Some((name.to_string(), value.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    let snippet = match snippets {
        Some(snippets) => snippets.of(doc
            .get_first(f.text)
            .and_then(|value| value.as_str())
            .unwrap_or_default()),
        None => String::new(),
    };
    Ok(SearchHit {
        id: text(f.id),
        folder: text(f.folder),
        datetime: text(f.datetime),
        snippet,
        fields,
    })
}

fn backend(message: String) -> SearchError {
    SearchError::Backend(message)
}

fn tantivy_error(e: tantivy::TantivyError) -> SearchError {
    backend(e.to_string())
}
