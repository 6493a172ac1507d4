//! Off-the-shelf clients against the token service: an OpenID Connect relying party built with the
//! `openidconnect` crate (discovery, PKCE, nonce, ID token verification, userinfo, refresh) and an
//! `oauth2`-crate client using the client-credentials grant.

use std::time::Duration;

use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreErrorResponseType, CoreProviderMetadata,
    CoreUserInfoClaims,
};
use openidconnect::{
    AccessTokenHash, AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl, Nonce,
    OAuth2TokenResponse, PkceCodeChallenge, RedirectUrl, RequestTokenError, Scope, TokenResponse,
};

use crate::support::*;

/// The HTTP client of a relying party: never follows redirects.
fn rp_http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

async fn an_openid_connect_relying_party_signs_in_verifies_and_refreshes(backend: Backend) {
    let s = setup(backend).await;
    let http = rp_http();
    let metadata =
        CoreProviderMetadata::discover_async(IssuerUrl::new(s.auth.issuer("acme")).unwrap(), &http)
            .await
            .expect("discovery and JWKS");
    assert_eq!(metadata.issuer().as_str(), s.auth.issuer("acme"));
    let client = CoreClient::from_provider_metadata(
        metadata,
        ClientId::new(s.client_id.clone()),
        Some(ClientSecret::new(s.secret.clone())),
    )
    .set_redirect_uri(RedirectUrl::new(REDIRECT_URI.to_string()).unwrap());

    let (challenge, pkce_verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, csrf, nonce) = client
        .authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        )
        .add_scope(Scope::new("refreshToken".to_string()))
        .set_pkce_challenge(challenge)
        .url();
    assert!(url.as_str().starts_with(&s.auth.authorize_url("acme")));
    let query = query_of(url.as_str());
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(query["scope"], "openid refreshToken");

    // The user signs in on the login page the crate's URL leads to.
    let browser = browser();
    let page = browser.get(url.clone()).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let response = auth::testing::post_login(&browser, url, USERNAME, PASSWORD).await;
    let redirected = parse_redirect(response).expect("redirected with a code");
    assert_eq!(redirected.state.as_deref(), Some(csrf.secret().as_str()));

    let tokens = client
        .exchange_code(AuthorizationCode::new(redirected.code))
        .unwrap()
        .set_pkce_verifier(pkce_verifier)
        .request_async(&http)
        .await
        .expect("code exchange");
    let scopes: Vec<&str> = tokens
        .scopes()
        .expect("scopes")
        .iter()
        .map(|s| s.as_str())
        .collect();
    assert_eq!(scopes, ["openid", "refreshToken"]);
    assert_eq!(tokens.expires_in(), Some(Duration::from_secs(3600)));

    let id_token = tokens.id_token().expect("an ID token");
    let id_verifier = client.id_token_verifier();
    let claims = id_token
        .claims(&id_verifier, &nonce)
        .expect("the ID token verifies with the nonce");
    assert_eq!(claims.subject().as_str(), s.user.id);
    assert_eq!(claims.issuer().as_str(), s.auth.issuer("acme"));
    assert!(claims.audiences().iter().any(|a| a.as_str() == s.client_id));
    assert!(claims.auth_time().is_some());
    let expected = claims.access_token_hash().expect("at_hash");
    let actual = AccessTokenHash::from_token(
        tokens.access_token(),
        id_token.signing_alg().unwrap(),
        id_token.signing_key(&id_verifier).unwrap(),
    )
    .unwrap();
    assert_eq!(&actual, expected, "at_hash matches the access token");
    assert!(
        id_token
            .claims(&id_verifier, &Nonce::new("another nonce".to_string()))
            .is_err(),
        "a wrong nonce is detected"
    );

    let access = s
        .auth
        .verifier()
        .verify(tokens.access_token().secret())
        .await
        .expect("the access token verifies");
    assert_eq!(access.sub, s.user.id);

    let info: CoreUserInfoClaims = client
        .user_info(
            tokens.access_token().clone(),
            Some(claims.subject().clone()),
        )
        .unwrap()
        .request_async(&http)
        .await
        .expect("userinfo");
    assert_eq!(info.subject().as_str(), s.user.id);

    let refresh_token = tokens.refresh_token().expect("a refresh token");
    let refreshed = client
        .exchange_refresh_token(refresh_token)
        .unwrap()
        .request_async(&http)
        .await
        .expect("refresh");
    let new_refresh = refreshed.refresh_token().expect("rotated");
    assert_ne!(new_refresh.secret(), refresh_token.secret());
    s.auth
        .verifier()
        .verify(refreshed.access_token().secret())
        .await
        .expect("the refreshed access token verifies");

    match client
        .exchange_refresh_token(refresh_token)
        .unwrap()
        .request_async(&http)
        .await
    {
        Err(RequestTokenError::ServerResponse(e)) => {
            assert_eq!(e.error(), &CoreErrorResponseType::InvalidGrant)
        }
        other => panic!("the rotated refresh token must be refused: {other:?}"),
    }
}

async fn an_oauth2_client_gets_a_client_credentials_token(backend: Backend) {
    use oauth2::basic::{BasicClient, BasicErrorResponseType, BasicTokenType};
    use oauth2::TokenResponse as _;

    let s = setup(backend).await;
    let http = rp_http();
    let token_url = oauth2::TokenUrl::new(s.auth.token_url("acme")).unwrap();
    let client = BasicClient::new(oauth2::ClientId::new(s.client_id.clone()))
        .set_client_secret(oauth2::ClientSecret::new(s.secret.clone()))
        .set_token_uri(token_url.clone());
    let token = client
        .exchange_client_credentials()
        .request_async(&http)
        .await
        .expect("client credentials");
    assert_eq!(token.token_type(), &BasicTokenType::Bearer);
    assert_eq!(token.expires_in(), Some(Duration::from_secs(3600)));
    assert!(token.refresh_token().is_none());
    let claims = s
        .auth
        .verifier()
        .verify(token.access_token().secret())
        .await
        .expect("the token verifies");
    assert_eq!(claims.client_id, s.client_id);
    assert_eq!(claims.company, "acme");

    let token = client
        .exchange_client_credentials()
        .add_scope(oauth2::Scope::new("analytics:read".to_string()))
        .request_async(&http)
        .await
        .expect("a narrower scope");
    let claims = s
        .auth
        .verifier()
        .verify(token.access_token().secret())
        .await
        .unwrap();
    assert_eq!(claims.scope, "analytics:read");

    let wrong = BasicClient::new(oauth2::ClientId::new(s.client_id.clone()))
        .set_client_secret(oauth2::ClientSecret::new("wrong".to_string()))
        .set_token_uri(token_url);
    match wrong
        .exchange_client_credentials()
        .request_async(&http)
        .await
    {
        Err(oauth2::RequestTokenError::ServerResponse(e)) => {
            assert_eq!(e.error(), &BasicErrorResponseType::InvalidClient)
        }
        other => panic!("a wrong secret must be refused: {other:?}"),
    }
}

common::backend_tests!(
    an_openid_connect_relying_party_signs_in_verifies_and_refreshes,
    an_oauth2_client_gets_a_client_credentials_token,
);
