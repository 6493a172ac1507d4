//! The search index contract, which every adapter passes: writes are visible when they return, a
//! document written again is replaced whole, scopes never leak into each other, every word of a query
//! must match (in the text or a metadata value, ignoring case and accents), metadata filters compare
//! whole values and cannot be escaped from, the empty query lists newest first, pages are bounded,
//! deletions remove exactly what they name, and no query text makes a search fail.
//!
//! Each behaviour is one test per adapter (`contract!`): the embedded index always, Meilisearch when a
//! server binary is found (see `common::testing::meili`; where there is none, `scripts/test` leaves
//! those tests out by name and lists them as skipped).

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::search::{
    EmbeddedIndex, MeiliIndex, Scope, SearchDocument, SearchError, SearchIndex, SearchPage,
    SearchQuery, MAX_LIMIT,
};
use common::testing::meili::{MeiliServer, MASTER_KEY};
use common::testing::proxy::TcpProxy;

/// Generates, for each behaviour, one test on the embedded index and one on Meilisearch.
macro_rules! contract {
    ($($behaviour:ident),* $(,)?) => {
        mod embedded {
            $(
                #[tokio::test]
                async fn $behaviour() {
                    let (_dir, index) = super::embedded();
                    super::$behaviour(&index).await;
                }
            )*
        }
        mod meilisearch {
            $(
                #[tokio::test]
                async fn $behaviour() {
                    let (_server, index) = super::meilisearch().await;
                    super::$behaviour(&index).await;
                }
            )*
        }
    };
}

contract!(
    finds_a_word_of_the_text_with_a_marked_snippet,
    every_word_must_match,
    writing_an_id_again_replaces_the_document,
    scopes_never_leak,
    a_scope_holding_every_document_still_bounds_the_search,
    filters_compare_whole_metadata_values,
    filter_text_cannot_break_out,
    the_longest_field_names_are_filtered,
    words_are_found_in_metadata_values,
    the_empty_query_lists_newest_first,
    pages_follow_offset_and_limit,
    deletes_by_id,
    deletes_a_folder_exactly,
    deletes_an_organization_exactly,
    deletes_a_company_exactly,
    hostile_queries_never_fail,
    limits_over_the_maximum_are_refused,
    inputs_the_indexes_cannot_take_are_refused,
    a_refused_document_fails_alone_in_a_batch,
    is_ready,
);

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn embedded() -> (TempDir, EmbeddedIndex) {
    let dir = std::env::temp_dir().join(format!("speech-search-{}", uuid::Uuid::new_v4().simple()));
    let index = EmbeddedIndex::open(&dir).expect("the embedded index opens");
    (TempDir(dir), index)
}

async fn meilisearch() -> (MeiliServer, MeiliIndex) {
    let server = MeiliServer::start().await;
    let index = MeiliIndex::connect(&server.url, Some(MASTER_KEY), "calls")
        .await
        .expect("the Meilisearch index is set up");
    // Connecting again finds the index in place and keeps it.
    let index_again = MeiliIndex::connect(&server.url, Some(MASTER_KEY), "calls")
        .await
        .expect("connecting to an existing index");
    drop(index);
    (server, index_again)
}

// ---- helpers ----

fn call(id: &str, at: (&str, &str, &str), datetime: &str, text: &str) -> SearchDocument {
    SearchDocument {
        id: id.to_string(),
        company: at.0.to_string(),
        organization: at.1.to_string(),
        folder: at.2.to_string(),
        datetime: datetime.to_string(),
        text: text.to_string(),
        fields: BTreeMap::new(),
    }
}

fn with_fields(mut document: SearchDocument, fields: &[(&str, &str)]) -> SearchDocument {
    document.fields = fields
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    document
}

fn company(company: &str) -> Scope {
    Scope {
        company: company.to_string(),
        organization: None,
        folder: None,
    }
}

fn organization(company: &str, organization: &str) -> Scope {
    Scope {
        organization: Some(organization.to_string()),
        ..self::company(company)
    }
}

fn folder(company: &str, organization: &str, folder: &str) -> Scope {
    Scope {
        folder: Some(folder.to_string()),
        ..self::organization(company, organization)
    }
}

fn query(scope: Scope, q: &str) -> SearchQuery {
    SearchQuery {
        scope,
        q: q.to_string(),
        filter: Vec::new(),
        offset: 0,
        limit: MAX_LIMIT,
    }
}

fn filtered(scope: Scope, filter: &[(&str, &str)]) -> SearchQuery {
    SearchQuery {
        filter: filter
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect(),
        ..query(scope, "")
    }
}

async fn run(index: &dyn SearchIndex, query: &SearchQuery) -> SearchPage {
    index
        .search(query)
        .await
        .unwrap_or_else(|e| panic!("{query:?} fails: {e}"))
}

/// The ids found, in order.
async fn ids(index: &dyn SearchIndex, query: &SearchQuery) -> Vec<String> {
    let page = run(index, query).await;
    assert_eq!(
        page.total,
        page.hits.len() as u64,
        "one page holds them all"
    );
    page.hits.into_iter().map(|hit| hit.id).collect()
}

/// The ids found, sorted (for results ranked by relevance, whose order is not part of the contract).
async fn id_set(index: &dyn SearchIndex, query: &SearchQuery) -> Vec<String> {
    let mut found = ids(index, query).await;
    found.sort();
    found
}

const ACME_SALES_INBOX: (&str, &str, &str) = ("acme", "sales", "inbox");
const T0: &str = "2024-05-01T09:00:00";

/// Calls in neighbouring scopes: folders and organizations that differ only by case, or share a name.
async fn write_neighbours(index: &dyn SearchIndex) {
    index
        .upsert(&[
            call("c1", ("acme", "sales", "inbox"), T0, "invoice one"),
            call("c2", ("acme", "sales", "archive"), T0, "invoice two"),
            call("c3", ("acme", "support", "inbox"), T0, "invoice three"),
            call("c4", ("acme", "Sales", "inbox"), T0, "invoice four"),
            call("c5", ("acme", "sales", "Inbox"), T0, "invoice five"),
            call("c6", ("globex", "sales", "inbox"), T0, "invoice six"),
            call("c7", ("acme-2", "sales", "inbox"), T0, "invoice seven"),
        ])
        .await
        .unwrap();
}

// ---- behaviours ----

async fn finds_a_word_of_the_text_with_a_marked_snippet(index: &dyn SearchIndex) {
    let document = with_fields(
        call(
            "call-1",
            ACME_SALES_INBOX,
            T0,
            "Agent: hello, how can I help?\nCustomer: I want a Refund for <b>order</b> 42 & more",
        ),
        &[("agent", "Ann Lee"), ("direction", "inbound")],
    );
    index.upsert(std::slice::from_ref(&document)).await.unwrap();

    for q in ["refund", "REFUND", "Refund"] {
        let page = run(index, &query(company("acme"), q)).await;
        assert_eq!(page.total, 1, "{q:?} finds the call");
        let hit = &page.hits[0];
        assert_eq!(hit.id, "call-1");
        assert_eq!(hit.folder, "inbox");
        assert_eq!(hit.datetime, T0);
        assert_eq!(hit.fields, document.fields);
        assert!(
            hit.snippet.contains("<em>Refund</em>"),
            "the word is marked: {:?}",
            hit.snippet
        );
        assert!(
            !hit.snippet.contains("<b>") && !hit.snippet.contains(" & "),
            "the text is escaped, only the marks are tags: {:?}",
            hit.snippet
        );
    }
    let page = run(index, &query(company("acme"), "")).await;
    assert_eq!(page.hits[0].snippet, "", "no snippet without words");
    assert_eq!(
        run(index, &query(company("acme"), "Cafe")).await.total,
        0,
        "a word the call lacks"
    );
}

async fn every_word_must_match(index: &dyn SearchIndex) {
    index
        .upsert(&[
            call("both", ACME_SALES_INBOX, T0, "the parcel arrived broken"),
            call("one", ACME_SALES_INBOX, T0, "the parcel arrived on time"),
            call("accent", ACME_SALES_INBOX, T0, "un café très froid"),
        ])
        .await
        .unwrap();
    let scope = || folder("acme", "sales", "inbox");
    assert_eq!(
        id_set(index, &query(scope(), "parcel")).await,
        ["both", "one"]
    );
    assert_eq!(
        id_set(index, &query(scope(), "parcel broken")).await,
        ["both"]
    );
    assert_eq!(
        id_set(index, &query(scope(), "BROKEN, parcel!")).await,
        ["both"]
    );
    assert!(id_set(index, &query(scope(), "parcel zeppelin"))
        .await
        .is_empty());
    assert_eq!(
        id_set(index, &query(scope(), "CAFE tres")).await,
        ["accent"],
        "case and accents are ignored"
    );
}

async fn writing_an_id_again_replaces_the_document(index: &dyn SearchIndex) {
    let first = with_fields(
        call("call-1", ACME_SALES_INBOX, T0, "an apple pie"),
        &[("agent", "Ann")],
    );
    index.upsert(&[first]).await.unwrap();
    let second = with_fields(
        call(
            "call-1",
            ACME_SALES_INBOX,
            "2024-06-01T08:00:00",
            "a zebra crossing",
        ),
        &[("queue", "billing")],
    );
    index.upsert(std::slice::from_ref(&second)).await.unwrap();

    let scope = || company("acme");
    assert!(
        ids(index, &query(scope(), "apple")).await.is_empty(),
        "the old text is gone"
    );
    assert!(
        ids(index, &query(scope(), "ann")).await.is_empty(),
        "the old fields too"
    );
    assert!(ids(index, &filtered(scope(), &[("agent", "Ann")]))
        .await
        .is_empty());
    let page = run(index, &query(scope(), "zebra")).await;
    assert_eq!(page.total, 1);
    assert_eq!(page.hits[0].fields, second.fields);
    assert_eq!(page.hits[0].datetime, "2024-06-01T08:00:00");
    assert_eq!(
        run(index, &query(scope(), "")).await.total,
        1,
        "one call, not two"
    );

    // Within one call the last copy of an id wins.
    index
        .upsert(&[
            call("call-2", ACME_SALES_INBOX, T0, "first draft"),
            call("call-2", ACME_SALES_INBOX, T0, "final version"),
        ])
        .await
        .unwrap();
    assert!(ids(index, &query(scope(), "draft")).await.is_empty());
    assert_eq!(ids(index, &query(scope(), "final")).await, ["call-2"]);
    assert_eq!(run(index, &query(scope(), "")).await.total, 2);
}

async fn scopes_never_leak(index: &dyn SearchIndex) {
    write_neighbours(index).await;
    for q in ["invoice", ""] {
        assert_eq!(
            id_set(index, &query(company("acme"), q)).await,
            ["c1", "c2", "c3", "c4", "c5"],
            "{q:?}: acme's calls only, not acme-2's"
        );
        assert_eq!(id_set(index, &query(company("globex"), q)).await, ["c6"]);
        assert_eq!(id_set(index, &query(company("acme-2"), q)).await, ["c7"]);
        assert!(id_set(index, &query(company("acm"), q)).await.is_empty());
        assert!(id_set(index, &query(company("ACME"), q)).await.is_empty());
        assert_eq!(
            id_set(index, &query(organization("acme", "sales"), q)).await,
            ["c1", "c2", "c5"],
            "{q:?}: the organization, case included"
        );
        assert_eq!(
            id_set(index, &query(organization("acme", "Sales"), q)).await,
            ["c4"]
        );
        assert_eq!(
            id_set(index, &query(folder("acme", "sales", "inbox"), q)).await,
            ["c1"]
        );
        assert_eq!(
            id_set(index, &query(folder("acme", "sales", "Inbox"), q)).await,
            ["c5"]
        );
        assert_eq!(
            id_set(index, &query(folder("acme", "support", "inbox"), q)).await,
            ["c3"]
        );
        assert!(
            id_set(index, &query(folder("acme", "support", "archive"), q))
                .await
                .is_empty()
        );
    }
}

/// An index of one company's one folder: its scope holds every document, and still bounds what is found,
/// counted and ranked, as documents of other scopes come and its own are deleted.
async fn a_scope_holding_every_document_still_bounds_the_search(index: &dyn SearchIndex) {
    index
        .upsert(&[
            call("once", ACME_SALES_INBOX, T0, "an invoice and a refund"),
            call("twice", ACME_SALES_INBOX, T0, "invoice invoice"),
            call("none", ACME_SALES_INBOX, T0, "a refund"),
        ])
        .await
        .unwrap();
    let everywhere = [
        company("acme"),
        organization("acme", "sales"),
        folder("acme", "sales", "inbox"),
    ];
    for scope in &everywhere {
        assert_eq!(
            ids(index, &query(scope.clone(), "invoice")).await,
            ["twice", "once"],
            "{scope:?}: both, the one saying it twice first"
        );
        assert_eq!(run(index, &query(scope.clone(), "")).await.total, 3);
    }
    for elsewhere in [
        company("globex"),
        organization("acme", "support"),
        folder("acme", "sales", "archive"),
    ] {
        for q in ["invoice", ""] {
            let page = run(index, &query(elsewhere.clone(), q)).await;
            assert_eq!((page.total, page.hits.len()), (0, 0), "{elsewhere:?} {q:?}");
        }
    }

    index
        .upsert(&[call(
            "theirs",
            ("globex", "sales", "inbox"),
            T0,
            "invoice invoice invoice",
        )])
        .await
        .unwrap();
    index.delete(&["twice".to_string()]).await.unwrap();
    for scope in &everywhere {
        assert_eq!(
            ids(index, &query(scope.clone(), "invoice")).await,
            ["once"],
            "{scope:?}"
        );
    }
    assert_eq!(
        ids(index, &query(company("globex"), "invoice")).await,
        ["theirs"]
    );
}

async fn filters_compare_whole_metadata_values(index: &dyn SearchIndex) {
    let tricky = r#"say "hi" \ then 'bye' \"#;
    index
        .upsert(&[
            with_fields(
                call("full", ACME_SALES_INBOX, T0, "one"),
                &[
                    ("agent", "Ann Lee"),
                    ("note", tricky),
                    ("Call \"Type\" \\", "in bound"),
                    ("customer.tier", "Gold"),
                ],
            ),
            with_fields(
                call("short", ACME_SALES_INBOX, T0, "two"),
                &[("agent", "Ann")],
            ),
            call("bare", ACME_SALES_INBOX, T0, "three"),
            with_fields(
                call("elsewhere", ("globex", "sales", "inbox"), T0, "four"),
                &[("agent", "Ann Lee")],
            ),
        ])
        .await
        .unwrap();
    let found = |filter: &[(&str, &str)]| {
        let query = filtered(company("acme"), filter);
        async move { id_set(index, &query).await }
    };
    assert_eq!(
        found(&[("agent", "Ann Lee")]).await,
        ["full"],
        "the whole value, spaces included"
    );
    assert_eq!(
        found(&[("agent", "ann LEE")]).await,
        ["full"],
        "case is ignored"
    );
    assert_eq!(
        found(&[("agent", " Ann Lee  ")]).await,
        ["full"],
        "so are surrounding spaces"
    );
    assert!(
        found(&[("agent", "Ann  Lee")]).await.is_empty(),
        "but not inner ones"
    );
    assert_eq!(
        found(&[("agent", "Ann")]).await,
        ["short"],
        "not a word of a longer value"
    );
    assert!(found(&[("agent", "Lee")]).await.is_empty());
    assert!(found(&[("agent", "An")]).await.is_empty(), "not a prefix");
    assert_eq!(
        found(&[("note", r#"say "hi" \ then 'bye' \"#)]).await,
        ["full"],
        "quotes and backslashes"
    );
    assert!(found(&[("note", r#"say "hi" \ then 'bye'"#)])
        .await
        .is_empty());
    assert_eq!(
        found(&[("Call \"Type\" \\", "in bound")]).await,
        ["full"],
        "a name to escape"
    );
    assert_eq!(
        found(&[("customer.tier", "gold")]).await,
        ["full"],
        "a dotted name"
    );
    assert!(
        found(&[("team", "blue")]).await.is_empty(),
        "a field no call has"
    );
    assert_eq!(
        found(&[("agent", "Ann Lee"), ("note", tricky)]).await,
        ["full"],
        "all filters hold"
    );
    assert!(found(&[("agent", "Ann"), ("note", tricky)])
        .await
        .is_empty());
    // "bare" has no agent: no filter value matches it, not even the empty one.
    assert!(!found(&[("agent", "")]).await.contains(&"bare".to_string()));

    let with_words = SearchQuery {
        q: "one".to_string(),
        ..filtered(company("acme"), &[("agent", "Ann Lee")])
    };
    assert_eq!(
        ids(index, &with_words).await,
        ["full"],
        "filters narrow a word search"
    );
}

/// A field name of `MAX_FIELD_NAME_LEN` bytes (64 characters of 4 bytes, the longest the analytics API
/// takes) and one of symbols beyond ASCII are stored and filtered on like any other.
async fn the_longest_field_names_are_filtered(index: &dyn SearchIndex) {
    let longest = "\u{1f600}".repeat(common::search::MAX_FIELD_NAME_LEN / 4);
    assert_eq!(longest.len(), common::search::MAX_FIELD_NAME_LEN);
    let symbols = "Größe € ™";
    index
        .upsert(&[
            with_fields(
                call("wide", ACME_SALES_INBOX, T0, "one"),
                &[(longest.as_str(), "yes"), (symbols, "XL")],
            ),
            call("plain", ACME_SALES_INBOX, T0, "two"),
        ])
        .await
        .unwrap();
    for filter in [(longest.as_str(), "yes"), (symbols, "xl")] {
        let query = filtered(company("acme"), &[filter]);
        assert_eq!(id_set(index, &query).await, ["wide"], "{filter:?}");
    }
}

async fn filter_text_cannot_break_out(index: &dyn SearchIndex) {
    index
        .upsert(&[
            with_fields(
                call("ann", ACME_SALES_INBOX, T0, "one"),
                &[("agent", "Ann")],
            ),
            with_fields(
                call("other-company", ("globex", "sales", "inbox"), T0, "two"),
                &[("agent", "Bob")],
            ),
        ])
        .await
        .unwrap();
    // Each would widen the search if it were pasted into a filter expression unquoted.
    let attempts = [
        ("agent", r#"x" OR "fields.agent" = "Ann"#),
        ("agent", r#"x\" OR fields.agent = Ann OR "y"#),
        ("agent", "x' OR fields.agent = 'Ann"),
        ("agent", r#"Ann" OR company_key EXISTS OR "x"#),
        ("agent", "Ann OR NOT agent = x"),
        ("agent", r"Ann\"),
        (r#"agent" = "Ann" OR "fields.agent"#, "Bob"),
        ("agent = Ann OR fields.agent", "Bob"),
    ];
    for (name, value) in attempts {
        let result = index
            .search(&filtered(company("acme"), &[(name, value)]))
            .await;
        match result {
            Ok(page) => assert!(page.hits.is_empty(), "{name:?} = {value:?} finds {page:?}"),
            Err(e) => panic!("{name:?} = {value:?} fails: {e}"),
        }
    }
    assert!(ids(index, &filtered(company("acme"), &[("agent", "Bob")]))
        .await
        .is_empty());
}

async fn words_are_found_in_metadata_values(index: &dyn SearchIndex) {
    index
        .upsert(&[
            with_fields(
                call("call-1", ACME_SALES_INBOX, T0, "hello there"),
                &[("customer", "Zanzibar Shipping"), ("agent", "Ann")],
            ),
            call("call-2", ACME_SALES_INBOX, T0, "hello again"),
        ])
        .await
        .unwrap();
    let page = run(index, &query(company("acme"), "zanzibar")).await;
    assert_eq!(page.total, 1);
    assert_eq!(page.hits[0].id, "call-1");
    assert_eq!(page.hits[0].snippet, "", "nothing of the text matched");
    let page = run(index, &query(company("acme"), "Shipping HELLO")).await;
    assert_eq!(page.total, 1, "words from the text and a field together");
    assert!(
        page.hits[0].snippet.contains("<em>hello</em>"),
        "{:?}",
        page.hits[0].snippet
    );
    assert!(
        ids(index, &query(company("acme"), "customer"))
            .await
            .is_empty(),
        "field names are not words of the call"
    );
}

async fn the_empty_query_lists_newest_first(index: &dyn SearchIndex) {
    index
        .upsert(&[
            call("b", ACME_SALES_INBOX, "2024-03-02T10:00:00", "x"),
            call("d", ACME_SALES_INBOX, "2023-12-31T23:59:59", "x"),
            call("a", ACME_SALES_INBOX, "2024-03-02T10:00:01", "x"),
            call("c", ACME_SALES_INBOX, "2024-01-15T08:30:00", "x"),
        ])
        .await
        .unwrap();
    for q in ["", "   ", "*** ()", "\"\""] {
        let page = run(index, &query(company("acme"), q)).await;
        assert_eq!(
            page.hits.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c", "d"],
            "{q:?} is the empty query"
        );
        assert!(page.hits.iter().all(|hit| hit.snippet.is_empty()));
    }
}

async fn pages_follow_offset_and_limit(index: &dyn SearchIndex) {
    let documents: Vec<SearchDocument> = (0..7)
        .map(|i| {
            call(
                &format!("call-{i}"),
                ACME_SALES_INBOX,
                &format!("2024-01-0{}T12:00:00", i + 1),
                "page",
            )
        })
        .collect();
    index.upsert(&documents).await.unwrap();
    let page = |offset: usize, limit: usize| SearchQuery {
        offset,
        limit,
        ..query(company("acme"), "")
    };
    let newest_first: Vec<String> = (0..7).rev().map(|i| format!("call-{i}")).collect();
    for (offset, limit, expected) in [
        (0, 3, &newest_first[0..3]),
        (3, 3, &newest_first[3..6]),
        (6, 3, &newest_first[6..7]),
        (7, 3, &newest_first[7..7]),
        (2, 0, &newest_first[0..0]),
        (usize::MAX, MAX_LIMIT, &newest_first[0..0]),
    ] {
        let found = run(index, &page(offset, limit)).await;
        assert_eq!(
            found.total, 7,
            "offset {offset}, limit {limit}: all are counted"
        );
        assert_eq!(
            found.hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>(),
            expected,
            "offset {offset}, limit {limit}"
        );
    }
    let words = SearchQuery {
        offset: 2,
        limit: 4,
        ..query(company("acme"), "page")
    };
    let found = run(index, &words).await;
    assert_eq!(
        (found.total, found.hits.len()),
        (7, 4),
        "word searches page too"
    );
}

async fn deletes_by_id(index: &dyn SearchIndex) {
    index
        .upsert(&[
            call("c1", ACME_SALES_INBOX, T0, "x"),
            call("c2", ACME_SALES_INBOX, T0, "x"),
            call("c3", ACME_SALES_INBOX, T0, "x"),
        ])
        .await
        .unwrap();
    let ids_of = |list: &[&str]| list.iter().map(|id| id.to_string()).collect::<Vec<_>>();
    index
        .delete(&ids_of(&["c1", "c3", "never-there", "not an id!"]))
        .await
        .unwrap();
    assert_eq!(id_set(index, &query(company("acme"), "")).await, ["c2"]);
    index
        .delete(&ids_of(&["c1"]))
        .await
        .expect("deleting again is not an error");
    index.delete(&[]).await.unwrap();
    assert_eq!(id_set(index, &query(company("acme"), "x")).await, ["c2"]);
}

async fn deletes_a_folder_exactly(index: &dyn SearchIndex) {
    write_neighbours(index).await;
    index
        .delete_scope(&folder("acme", "sales", "inbox"))
        .await
        .unwrap();
    assert_eq!(
        id_set(index, &query(company("acme"), "")).await,
        ["c2", "c3", "c4", "c5"]
    );
    assert_eq!(id_set(index, &query(company("globex"), "")).await, ["c6"]);
    assert_eq!(id_set(index, &query(company("acme-2"), "")).await, ["c7"]);
}

async fn deletes_an_organization_exactly(index: &dyn SearchIndex) {
    write_neighbours(index).await;
    index
        .delete_scope(&organization("acme", "sales"))
        .await
        .unwrap();
    assert_eq!(
        id_set(index, &query(company("acme"), "")).await,
        ["c3", "c4"]
    );
    assert_eq!(id_set(index, &query(company("globex"), "")).await, ["c6"]);
    assert_eq!(id_set(index, &query(company("acme-2"), "")).await, ["c7"]);
}

async fn deletes_a_company_exactly(index: &dyn SearchIndex) {
    write_neighbours(index).await;
    index.delete_scope(&company("acme")).await.unwrap();
    assert!(id_set(index, &query(company("acme"), "")).await.is_empty());
    assert_eq!(id_set(index, &query(company("globex"), "")).await, ["c6"]);
    assert_eq!(id_set(index, &query(company("acme-2"), "")).await, ["c7"]);
    index
        .delete_scope(&company("initech"))
        .await
        .expect("an empty scope is not an error");
}

async fn hostile_queries_never_fail(index: &dyn SearchIndex) {
    index
        .upsert(&[call(
            "call-1",
            ACME_SALES_INBOX,
            T0,
            "the field value and or not star title",
        )])
        .await
        .unwrap();
    let long_word = "a".repeat(100_000);
    let many_words = "word ".repeat(20_000);
    let hostile = [
        "\"",
        "\"\"\"",
        "AND OR",
        "OR",
        "NOT",
        "*",
        "?",
        "(",
        ")",
        "[",
        "{",
        "}",
        "field:value",
        "title:\"x\"~2",
        "value^2",
        "[1 TO 5]",
        "-",
        "--",
        "+",
        "\\",
        "'",
        "a\u{0}b",
        "\u{E000}field\u{E001}",
        "日本語のテキスト 😀 Ωmega",
        "_geoRadius(1, 2, 3)",
        long_word.as_str(),
        many_words.as_str(),
    ];
    for q in hostile {
        let shown: String = q.chars().take(40).collect();
        if let Err(e) = index.search(&query(company("acme"), q)).await {
            panic!("{shown:?} fails: {e}");
        }
    }
    assert_eq!(
        ids(index, &query(company("acme"), "field:value")).await,
        ["call-1"],
        "syntax is plain words"
    );
    assert_eq!(
        ids(index, &query(company("acme"), "\"field value\"")).await,
        ["call-1"]
    );
    assert_eq!(
        ids(index, &query(company("acme"), "value AND star")).await,
        ["call-1"]
    );
    assert_eq!(
        ids(index, &query(company("acme"), "-title field")).await,
        ["call-1"],
        "no negation"
    );
}

async fn limits_over_the_maximum_are_refused(index: &dyn SearchIndex) {
    index
        .upsert(&[call("c1", ACME_SALES_INBOX, T0, "x")])
        .await
        .unwrap();
    let asking = |limit: usize| SearchQuery {
        limit,
        ..query(company("acme"), "")
    };
    assert_eq!(run(index, &asking(MAX_LIMIT)).await.total, 1);
    for limit in [MAX_LIMIT + 1, usize::MAX] {
        assert!(
            matches!(
                index.search(&asking(limit)).await,
                Err(SearchError::Invalid(_))
            ),
            "limit {limit} is refused"
        );
    }
}

/// One company's document the index refuses, written in a batch with another company's, keeps only
/// itself out of the index.
async fn a_refused_document_fails_alone_in_a_batch(index: &dyn SearchIndex) {
    let bad = SearchDocument {
        datetime: "-0001-01-01T00:00:00".into(),
        ..call("evil1", ("evil", "main", "calls"), T0, "poison")
    };
    let batch = [
        call("acme1", ACME_SALES_INBOX, T0, "refund please"),
        bad,
        call("acme2", ACME_SALES_INBOX, T0, "refund now"),
        with_fields(
            call("evil2", ("evil", "main", "calls"), T0, "x"),
            &[("a..b", "empty part")],
        ),
    ];
    let refused = index.upsert_each(&batch).await.unwrap();
    let mut refused: Vec<&str> = refused.iter().map(|r| r.id.as_str()).collect();
    refused.sort();
    assert_eq!(refused, ["evil1", "evil2"]);
    let mut found = ids(index, &query(company("acme"), "refund")).await;
    found.sort();
    assert_eq!(found, ["acme1", "acme2"]);
    assert!(ids(index, &query(company("evil"), "")).await.is_empty());
    assert!(index.upsert_each(&[]).await.unwrap().is_empty());
}

async fn inputs_the_indexes_cannot_take_are_refused(index: &dyn SearchIndex) {
    let good = call("good", ACME_SALES_INBOX, T0, "x");
    let bad_documents = [
        SearchDocument {
            id: "has space".into(),
            ..good.clone()
        },
        SearchDocument {
            id: String::new(),
            ..good.clone()
        },
        SearchDocument {
            id: "x".repeat(512),
            ..good.clone()
        },
        SearchDocument {
            datetime: "2024-05-01 09:00:00".into(),
            ..good.clone()
        },
        SearchDocument {
            datetime: "2024-5-1T9:00:00".into(),
            ..good.clone()
        },
        SearchDocument {
            datetime: "-0001-01-01T00:00:00".into(),
            ..good.clone()
        },
        SearchDocument {
            datetime: "1899-12-31T23:59:59".into(),
            ..good.clone()
        },
        SearchDocument {
            folder: String::new(),
            ..good.clone()
        },
        with_fields(good.clone(), &[("", "empty name")]),
        with_fields(good.clone(), &[("a..b", "empty part")]),
        with_fields(good.clone(), &[("line\nbreak", "control character")]),
    ];
    for bad in bad_documents {
        let written = index.upsert(&[good.clone(), bad.clone()]).await;
        assert!(
            matches!(written, Err(SearchError::Invalid(_))),
            "{bad:?}: {written:?}"
        );
    }
    assert!(
        ids(index, &query(company("acme"), "")).await.is_empty(),
        "a refused call writes nothing of its documents"
    );
    let folder_alone = Scope {
        folder: Some("inbox".into()),
        ..company("acme")
    };
    assert!(matches!(
        index.search(&query(folder_alone.clone(), "")).await,
        Err(SearchError::Invalid(_))
    ));
    assert!(matches!(
        index.delete_scope(&folder_alone).await,
        Err(SearchError::Invalid(_))
    ));
    assert!(matches!(
        index.delete_scope(&company("")).await,
        Err(SearchError::Invalid(_))
    ));
    assert!(matches!(
        index.search(&filtered(company("acme"), &[("", "x")])).await,
        Err(SearchError::Invalid(_))
    ));
}

async fn is_ready(index: &dyn SearchIndex) {
    index.ready().await.expect("ready");
}

// ---- what only one adapter can show ----

#[tokio::test]
async fn the_embedded_index_keeps_its_calls_across_reopening() {
    let (dir, index) = embedded();
    index
        .upsert(&[call("kept", ACME_SALES_INBOX, T0, "persistent words")])
        .await
        .unwrap();
    assert!(
        matches!(EmbeddedIndex::open(&dir.0), Err(SearchError::Backend(_))),
        "one holder of a directory at a time"
    );
    drop(index);
    let reopened = EmbeddedIndex::open(&dir.0).expect("reopens");
    assert_eq!(
        ids(&reopened, &query(company("acme"), "persistent")).await,
        ["kept"]
    );
}

/// Replicas connect to the index one after another and at once: none leaves the server a failed task
/// (a creation refused because the index exists, which Meilisearch logs as an error), and all are ready.
#[tokio::test]
async fn meilisearch_index_is_created_once_however_many_connect() {
    let server = MeiliServer::start().await;
    MeiliIndex::connect(&server.url, Some(MASTER_KEY), "calls")
        .await
        .expect("creates the index");
    let replicas = (0..4).map(|_| MeiliIndex::connect(&server.url, Some(MASTER_KEY), "calls"));
    for replica in futures_util::future::join_all(replicas).await {
        replica.expect("finds the index in place");
    }
    let tasks: serde_json::Value = reqwest::Client::new()
        .get(format!(
            "{}/tasks?types=indexCreation&indexUids=calls",
            server.url
        ))
        .bearer_auth(MASTER_KEY)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let statuses: Vec<&str> = tasks["results"]
        .as_array()
        .expect("a list of tasks")
        .iter()
        .map(|task| task["status"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(
        statuses,
        ["succeeded"],
        "one creation, none failed: {tasks}"
    );
}

#[tokio::test]
async fn meilisearch_failures_are_backend_errors() {
    let server = MeiliServer::start().await;
    // An index made elsewhere with another primary key: connecting keeps it, writing fails in the task.
    let created = reqwest::Client::new()
        .post(format!("{}/indexes", server.url))
        .bearer_auth(MASTER_KEY)
        .json(&serde_json::json!({"uid": "foreign", "primaryKey": "uid"}))
        .send()
        .await
        .unwrap();
    assert!(created.status().is_success());
    let foreign = MeiliIndex::connect(&server.url, Some(MASTER_KEY), "foreign")
        .await
        .expect("connects to the existing index");
    let written = foreign
        .upsert(&[call("c1", ACME_SALES_INBOX, T0, "x")])
        .await;
    assert!(
        matches!(&written, Err(SearchError::Backend(m)) if m.contains("task failed")),
        "{written:?}"
    );

    let wrong_key = MeiliIndex::connect(&server.url, Some("not-the-master-key"), "calls").await;
    assert!(matches!(wrong_key, Err(SearchError::Backend(_))));

    let index = MeiliIndex::connect(&server.url, Some(MASTER_KEY), "calls")
        .await
        .unwrap();
    index.ready().await.unwrap();
    drop(server);
    assert!(
        matches!(index.ready().await, Err(SearchError::Backend(_))),
        "the server is gone"
    );
    assert!(matches!(
        index.search(&query(company("acme"), "x")).await,
        Err(SearchError::Backend(_))
    ));
}

/// A request for a task that fails on the way (here: its connection closed by a proxy before any
/// answer, as a server closing a kept connection does) is asked again, so the write it waits for is not
/// reported failed while the server applied it; and a server that stays unreachable still fails the wait.
#[tokio::test]
async fn meilisearch_task_requests_lost_on_the_way_are_made_again() {
    let server = MeiliServer::start().await;
    // Closes without an answer the connections of the first two requests for a task, and passes
    // everything else to the server.
    let proxy = TcpProxy::start(server.url.trim_start_matches("http://"), true).await;
    let proxy_url = format!("http://{}", proxy.addr);
    proxy.lose(b"GET /tasks/", 2);
    let index = MeiliIndex::connect(&proxy_url, Some(MASTER_KEY), "calls")
        .await
        .expect("the lost requests for the task were made again");
    assert_eq!(proxy.left_to_lose(), 0, "both were lost");
    index
        .upsert(&[call("c1", ACME_SALES_INBOX, T0, "refund")])
        .await
        .unwrap();
    assert_eq!(
        run(&index, &query(company("acme"), "refund")).await.total,
        1
    );

    // Every request for the task lost: the wait gives up after a few, reported as the backend's failure.
    proxy.lose(b"GET /tasks/", u32::MAX);
    let written = index
        .upsert(&[call("c2", ACME_SALES_INBOX, T0, "refund")])
        .await;
    assert!(
        matches!(written, Err(SearchError::Backend(_))),
        "{written:?}"
    );
}
