//! The object store contract, which every adapter passes: objects round-trip byte for byte, are replaced
//! whole, are deleted idempotently, list in order by prefix with a resumable cursor, and no key reaches
//! outside the store. Run here against the local-directory adapter.

use common::objects::{LocalDirectory, ObjectError, ObjectStore};

struct Dir(std::path::PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn local() -> (Dir, LocalDirectory) {
    let root =
        std::env::temp_dir().join(format!("speech-objects-{}", uuid::Uuid::new_v4().simple()));
    let store = LocalDirectory::open(&root).unwrap();
    (Dir(root), store)
}

async fn objects_round_trip_and_are_replaced_whole(store: &dyn ObjectStore) {
    let key = "acme/support/inbox/call-1/transcript.json";
    assert_eq!(store.get(key).await.unwrap(), None);
    let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    store.put(key, big.clone()).await.unwrap();
    assert_eq!(store.get(key).await.unwrap(), Some(big));
    store.put(key, b"{}".to_vec()).await.unwrap();
    assert_eq!(store.get(key).await.unwrap(), Some(b"{}".to_vec()));
    store.put("acme/empty", Vec::new()).await.unwrap();
    assert_eq!(store.get("acme/empty").await.unwrap(), Some(Vec::new()));
}

async fn deleting_is_idempotent(store: &dyn ObjectStore) {
    store.put("a/b/c", b"x".to_vec()).await.unwrap();
    store.delete("a/b/c").await.unwrap();
    assert_eq!(store.get("a/b/c").await.unwrap(), None);
    store.delete("a/b/c").await.unwrap();
    store.delete("never/there").await.unwrap();
}

async fn listings_follow_prefixes_in_order_and_resume(store: &dyn ObjectStore) {
    for key in [
        "acme/org1/f1/c3",
        "acme/org1/f1/c1",
        "acme/org1/f2/c2",
        "acme/org10/f1/c9",
        "globex/org1/f1/c1",
    ] {
        store.put(key, key.as_bytes().to_vec()).await.unwrap();
    }
    assert_eq!(
        store.list("acme/org1/", None, 100).await.unwrap(),
        vec!["acme/org1/f1/c1", "acme/org1/f1/c3", "acme/org1/f2/c2"],
        "a folder prefix does not take its neighbour org10"
    );
    let first = store.list("acme/", None, 2).await.unwrap();
    assert_eq!(first, vec!["acme/org1/f1/c1", "acme/org1/f1/c3"]);
    let rest = store
        .list("acme/", Some(first.last().unwrap()), 100)
        .await
        .unwrap();
    assert_eq!(rest, vec!["acme/org1/f2/c2", "acme/org10/f1/c9"]);
    assert_eq!(store.list("", None, 100).await.unwrap().len(), 5);
    assert!(store.list("initech/", None, 10).await.unwrap().is_empty());
}

async fn keys_cannot_leave_the_store(store: &dyn ObjectStore) {
    for key in [
        "",
        "../outside",
        "acme/../../etc/passwd",
        "/etc/passwd",
        "acme//x",
        "acme/./x",
        "acme/x/",
        "acme\\x",
        "acme/x y",
        "acme/%2e%2e",
    ] {
        assert!(
            matches!(
                store.put(key, b"x".to_vec()).await,
                Err(ObjectError::InvalidKey(_))
            ),
            "{key:?} is refused"
        );
        assert!(
            matches!(store.get(key).await, Err(ObjectError::InvalidKey(_))),
            "{key:?}"
        );
        assert!(
            matches!(store.delete(key).await, Err(ObjectError::InvalidKey(_))),
            "{key:?}"
        );
    }
    assert!(matches!(
        store.list("../", None, 10).await,
        Err(ObjectError::InvalidKey(_))
    ));
    let long = "k".repeat(1025);
    assert!(matches!(
        store.put(&long, Vec::new()).await,
        Err(ObjectError::InvalidKey(_))
    ));
}

async fn concurrent_writers_leave_one_whole_object(store: &dyn ObjectStore) {
    let writes = (0..16u8).map(|i| store.put("race/key", vec![i; 64 * 1024]));
    for done in futures_util::future::join_all(writes).await {
        done.unwrap();
    }
    let read = store.get("race/key").await.unwrap().unwrap();
    assert_eq!(read.len(), 64 * 1024);
    assert!(
        read.iter().all(|b| *b == read[0]),
        "one writer's bytes, whole"
    );
    assert_eq!(
        store.list("race/", None, 10).await.unwrap(),
        vec!["race/key"],
        "no temporary file is listed"
    );
}

#[tokio::test]
async fn the_local_directory_keeps_the_contract() {
    // Each part of the contract on a store of its own.
    let (_a, store) = local();
    objects_round_trip_and_are_replaced_whole(&store).await;
    let (_b, store) = local();
    deleting_is_idempotent(&store).await;
    let (_c, store) = local();
    listings_follow_prefixes_in_order_and_resume(&store).await;
    let (_d, store) = local();
    keys_cannot_leave_the_store(&store).await;
    let (_e, store) = local();
    concurrent_writers_leave_one_whole_object(&store).await;
}
