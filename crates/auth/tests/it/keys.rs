//! Signing keys: the JWKS, the algorithms and key ids of the tokens, rotation with and without overlap,
//! and the discovery document.

use serde_json::Value;

use crate::support::*;

async fn get_json(url: &str) -> (u16, Value) {
    let response = reqwest::get(url).await.unwrap();
    let (status, body, _) = read(response).await;
    (status, body)
}

async fn jwks(auth: &TestAuth) -> Vec<Value> {
    let (status, body) = get_json(&format!("{}/jwks", auth.issuer("acme"))).await;
    assert_eq!(status, 200, "{body}");
    body["keys"].as_array().expect("a key set").clone()
}

fn kids(keys: &[Value]) -> Vec<String> {
    keys.iter()
        .map(|k| k["kid"].as_str().expect("every key has a kid").to_string())
        .collect()
}

async fn client_credentials_token(s: &Setup) -> String {
    let (status, body, _) = token_basic(
        &s.auth,
        "acme",
        &s.client_id,
        &s.secret,
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["access_token"].as_str().unwrap().to_string()
}

fn kid(token: &str) -> String {
    jwt_header(token)["kid"]
        .as_str()
        .expect("a kid")
        .to_string()
}

async fn the_jwks_publishes_an_eddsa_and_an_rs256_key(backend: Backend) {
    let s = setup(backend).await;
    let keys = jwks(&s.auth).await;
    assert_eq!(keys.len(), 2, "{keys:?}");
    let ed = keys
        .iter()
        .find(|k| k["alg"] == "EdDSA")
        .expect("an EdDSA key");
    assert_eq!(ed["kty"], "OKP");
    assert_eq!(ed["crv"], "Ed25519");
    assert_eq!(ed["use"], "sig");
    assert!(ed["x"].is_string());
    let rsa = keys
        .iter()
        .find(|k| k["alg"] == "RS256")
        .expect("an RS256 key");
    assert_eq!(rsa["kty"], "RSA");
    assert_eq!(rsa["use"], "sig");
    assert!(rsa["n"].is_string() && rsa["e"].is_string());
    for key in &keys {
        assert!(key["kid"].as_str().is_some_and(|k| !k.is_empty()));
        for private in ["d", "p", "q", "dp", "dq", "qi"] {
            assert!(key.get(private).is_none(), "no private part {private}");
        }
    }
    let published = kids(&keys);

    let access = client_credentials_token(&s).await;
    let header = jwt_header(&access);
    assert_eq!(header["alg"], "EdDSA");
    assert_eq!(header["typ"], "at+jwt");
    assert_eq!(header["kid"], ed["kid"]);

    let body = tokens(&s, &[]).await;
    let header = jwt_header(body["access_token"].as_str().unwrap());
    assert_eq!(header["alg"], "EdDSA");
    assert_eq!(header["typ"], "at+jwt");
    assert!(published.contains(&header["kid"].as_str().unwrap().to_string()));
    let header = jwt_header(body["id_token"].as_str().unwrap());
    assert_eq!(header["alg"], "RS256");
    assert_eq!(header["kid"], rsa["kid"]);
    assert_ne!(header["typ"], "at+jwt", "an ID token is no access token");
    assert!(
        s.auth
            .verifier()
            .verify(body["id_token"].as_str().unwrap())
            .await
            .is_err(),
        "the resource services' verifier refuses ID tokens"
    );

    // Each company has its own keys.
    s.auth.add_company("globex").await;
    let (status, globex) = get_json(&format!("{}/jwks", s.auth.issuer("globex"))).await;
    assert_eq!(status, 200);
    let globex_kids = kids(globex["keys"].as_array().unwrap());
    assert_eq!(globex_kids.len(), 2);
    assert!(globex_kids.iter().all(|k| !published.contains(k)));
}

async fn rotation_signs_with_new_keys_and_keeps_the_old_ones_published(backend: Backend) {
    let s = setup(backend).await;
    let before = client_credentials_token(&s).await;
    let before_id = tokens(&s, &[]).await["id_token"]
        .as_str()
        .unwrap()
        .to_string();
    let old_kids = kids(&jwks(&s.auth).await);
    assert!(old_kids.contains(&kid(&before)));

    s.auth.service.state.keys.rotate("acme").await.unwrap();

    let after = client_credentials_token(&s).await;
    assert_ne!(kid(&after), kid(&before), "new tokens carry a new kid");
    let after_id = tokens(&s, &[]).await["id_token"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(kid(&after_id), kid(&before_id), "ID tokens too");

    let published = kids(&jwks(&s.auth).await);
    assert_eq!(published.len(), 4, "{published:?}");
    for kid in [kid(&before), kid(&after), kid(&before_id), kid(&after_id)] {
        assert!(published.contains(&kid), "{kid} in {published:?}");
    }

    let verifier = s.auth.verifier();
    let claims = verifier
        .verify(&before)
        .await
        .expect("a token signed before the rotation still verifies");
    assert_eq!(claims.sub, s.client_id);
    verifier.verify(&after).await.expect("a new token verifies");
    let (_, body) = introspect(&s.auth, &s.client_id, &s.secret, &before).await;
    assert_eq!(body["active"], true);
}

async fn without_overlap_a_rotated_key_stops_verifying(backend: Backend) {
    let auth = TestAuth::start_with(backend, |c| {
        c.key_overlap_secs = 0;
        c.key_cache_secs = 0;
    })
    .await;
    let s = setup_with(auth, full_client_spec()).await;
    let before = client_credentials_token(&s).await;
    s.auth
        .verifier()
        .verify(&before)
        .await
        .expect("verifies before the rotation");
    let old = kid(&before);

    s.auth.service.state.keys.rotate("acme").await.unwrap();
    // Retired keys are dropped when retired strictly before now: let the clock move on.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;

    let published = kids(&jwks(&s.auth).await);
    assert_eq!(published.len(), 2, "{published:?}");
    assert!(
        !published.contains(&old),
        "{old} is gone from {published:?}"
    );
    let after = client_credentials_token(&s).await;
    assert!(published.contains(&kid(&after)));

    assert!(
        s.auth.verifier().verify(&before).await.is_err(),
        "a token signed with the dropped key no longer verifies"
    );
    s.auth
        .verifier()
        .verify(&after)
        .await
        .expect("a new token verifies");
    let (_, body) = introspect(&s.auth, &s.client_id, &s.secret, &before).await;
    assert_eq!(body["active"], false);
}

async fn discovery_describes_the_company(backend: Backend) {
    let s = setup(backend).await;
    let issuer = s.auth.issuer("acme");
    let (status, doc) = get_json(&format!("{issuer}/.well-known/openid-configuration")).await;
    assert_eq!(status, 200, "{doc}");
    assert_eq!(doc["issuer"], issuer);
    for (field, path) in [
        ("authorization_endpoint", "/authorize"),
        ("token_endpoint", "/token"),
        ("jwks_uri", "/jwks"),
        ("userinfo_endpoint", "/userinfo"),
        ("introspection_endpoint", "/introspect"),
        ("revocation_endpoint", "/revoke"),
    ] {
        assert_eq!(doc[field], format!("{issuer}{path}"), "{field}");
    }
    assert_eq!(doc["authorization_endpoint"], s.auth.authorize_url("acme"));
    assert_eq!(doc["token_endpoint"], s.auth.token_url("acme"));
    assert_eq!(
        doc["code_challenge_methods_supported"],
        serde_json::json!(["S256"])
    );
    assert!(doc["id_token_signing_alg_values_supported"]
        .as_array()
        .unwrap()
        .contains(&"RS256".into()));
    assert!(doc["response_types_supported"]
        .as_array()
        .unwrap()
        .contains(&"code".into()));
    let scopes = doc["scopes_supported"].as_array().unwrap();
    for scope in ["openid", "refreshToken"] {
        assert!(scopes.contains(&scope.into()), "{scope}");
    }

    // The published endpoints answer.
    let (status, _) = get_json(doc["jwks_uri"].as_str().unwrap()).await;
    assert_eq!(status, 200);

    for path in ["/.well-known/openid-configuration", "/jwks"] {
        let (status, _) = get_json(&format!("{}{path}", s.auth.issuer("nope"))).await;
        assert_eq!(status, 404, "{path} of an unknown company");
    }
    assert!(
        auth::storage::signing_keys(&s.auth.service.state.db, "nope")
            .await
            .unwrap()
            .is_empty(),
        "no keys are made for an unknown company"
    );
}

common::backend_tests!(
    the_jwks_publishes_an_eddsa_and_an_rs256_key,
    rotation_signs_with_new_keys_and_keeps_the_old_ones_published,
    without_overlap_a_rotated_key_stops_verifying,
    discovery_describes_the_company,
);
