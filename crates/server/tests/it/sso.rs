//! Single sign-on against a real, certified OpenID provider (npm's `oidc-provider`, started by
//! each test; see `tests/oidc.sh`): a browser's sign-in with PKCE, where claims place users,
//! RP-initiated and back-channel logout, e-mail linking, and the provider's access tokens as
//! bearer tokens, across a rotation of its keys.

use std::sync::Mutex;

use mgds_oidc::testing::{ProviderBrowser, TestProvider};
use mgds_server::sso::SsoConfig;
use reqwest::{Client, Method, Response, StatusCode};
use serde_json::{Value, json};

use crate::{Service, json_of};

const RESOURCE: &str = "https://mgds.test/api";
const WEB_SECRET: &str = "a web client's secret, long enough";

fn accounts() -> Value {
    json!({
        "alice-sub": {"email": "alice@lab.example", "email_verified": true, "name": "Alice", "groups": ["mgds-admins", "lab"]},
        "bob-sub": {"email": "bob@lab.example", "email_verified": true, "name": "Bob", "groups": ["lab"]},
        "carol-sub": {"email": "carol@lab.example", "email_verified": true, "name": "Carol", "groups": ["hr"]},
        "dana-sub": {"email": "dana@lab.example", "email_verified": true, "name": "Dana", "groups": ["lab"]},
        "dana-again-sub": {"email": "dana@lab.example", "email_verified": true, "name": "Dana", "groups": ["lab"]},
        "eve-sub": {"email": "eve@lab.example", "email_verified": false, "name": "Eve", "groups": ["lab"]},
    })
}

/// A provider with the test accounts, its access tokens JWTs for [`RESOURCE`].
async fn provider() -> TestProvider {
    TestProvider::start(json!({"port": 0, "accounts": accounts(), "resource": RESOURCE, "clients": []})).await
}

/// The configuration of a service signing in at `issuer`.
fn config(issuer: &str) -> SsoConfig {
    SsoConfig {
        issuer: issuer.to_string(),
        display_name: "Lab SSO".into(),
        client_id: "mgds-web".into(),
        client_secret: Some(WEB_SECRET.into()),
        native_client_id: Some("mgds-desktop".into()),
        audiences: vec![RESOURCE.into()],
        scopes: "openid email profile groups".into(),
        link_verified_email: false,
        email_trusted: false,
        placements: vec![
            "groups:lab=Microbiology:member".parse().unwrap(),
            "groups:mgds-admins=Microbiology:admin".parse().unwrap(),
        ],
        default_organization: None,
    }
}

/// Registers the services' clients at the provider (it restarts to take them).
async fn register(provider: &mut TestProvider, services: &[&Service]) {
    let callbacks: Vec<String> = services.iter().map(|s| format!("{}/api/v1/sso/callback", s.url)).collect();
    let after: Vec<String> = services.iter().map(|s| format!("{}/", s.url)).collect();
    provider
        .restart(json!({"clients": [
            {"client_id": "mgds-web", "client_secret": WEB_SECRET, "application_type": "web",
             "token_endpoint_auth_method": "client_secret_basic", "redirect_uris": callbacks,
             "post_logout_redirect_uris": after,
             "backchannel_logout_uri": format!("{}/api/v1/sso/backchannel_logout", services[0].url),
             "backchannel_logout_session_required": true,
             "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]},
            {"client_id": "mgds-desktop", "application_type": "native", "token_endpoint_auth_method": "none",
             "redirect_uris": ["http://127.0.0.1/callback"], "grant_types": ["authorization_code", "refresh_token"],
             "response_types": ["code"]}
        ]}))
        .await;
}

/// A browser at the service: no redirects followed, its cookies kept by name.
struct Browser {
    http: Client,
    cookies: Mutex<Vec<(String, String)>>,
}

impl Browser {
    fn new() -> Browser {
        let http = Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        Browser { http, cookies: Mutex::default() }
    }

    async fn send(&self, method: Method, url: &str, csrf: Option<&str>) -> Response {
        let cookie =
            self.cookies.lock().unwrap().iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ");
        let mut req = self.http.request(method, url).header("cookie", cookie);
        if let Some(t) = csrf {
            req = req.header("x-csrf-token", t);
        }
        let r = req.send().await.unwrap();
        for set in r.headers().get_all("set-cookie") {
            let set = set.to_str().unwrap();
            let (pair, attrs) = set.split_once(';').unwrap_or((set, ""));
            let (name, value) = pair.split_once('=').unwrap();
            let mut cookies = self.cookies.lock().unwrap();
            cookies.retain(|(k, _)| k != name);
            if !attrs.to_ascii_lowercase().contains("max-age=0") {
                cookies.push((name.to_string(), value.to_string()));
            }
        }
        r
    }

    fn has(&self, name: &str) -> bool {
        self.cookies.lock().unwrap().iter().any(|(k, _)| k == name)
    }

    /// Signs in at `svc` through the provider as `account`; where the service finally sends
    /// the browser.
    async fn sign_in(&self, svc: &Service, at: &ProviderBrowser, account: &str, return_to: &str) -> String {
        let r = self.send(Method::GET, &format!("{}/api/v1/sso/sign_in?return_to={return_to}", svc.url), None).await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{:?}", r.text().await);
        assert!(self.has("mgds_sso_state"), "the sign-in is bound to this browser by a cookie");
        let to_provider = location(&r);
        assert!(to_provider.contains("code_challenge_method=S256") && to_provider.contains("nonce="), "{to_provider}");
        let back = at.sign_in(&to_provider, account).await.unwrap();
        assert!(back.starts_with(&format!("{}/api/v1/sso/callback?", svc.url)), "{back}");
        let r = self.send(Method::GET, &back, None).await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER);
        location(&r)
    }

    async fn session(&self, svc: &Service) -> (u16, Value) {
        json_of(self.send(Method::GET, &format!("{}/api/v1/session", svc.url), None).await).await
    }
}

fn location(r: &Response) -> String {
    r.headers().get("location").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default()
}

/// The reason a refused sign-in shows on the sign-in page.
fn problem(location: &str) -> String {
    let fragment = location.split_once('#').map(|(_, f)| f).unwrap_or_default();
    url_decode(fragment.strip_prefix("sign_in_problem=").unwrap_or_else(|| panic!("no problem in {location}")))
}

fn url_decode(s: &str) -> String {
    let pairs: Vec<(String, String)> =
        reqwest::Url::parse(&format!("http://x/?p={s}")).unwrap().query_pairs().into_owned().collect();
    pairs[0].1.clone()
}

#[tokio::test]
async fn a_browser_signs_in_at_the_provider_is_placed_by_its_claims_and_signs_out_there() {
    let mut provider = provider().await;
    let issuer = provider.issuer.clone();
    let svc = Service::start_with(|c| c.sso = Some(config(&issuer))).await;
    register(&mut provider, &[&svc]).await;

    let (status, about) = json_of(svc.req(Method::GET, "/api/v1/sso").send().await.unwrap()).await;
    assert_eq!(status, 200, "{about}");
    assert_eq!(about["name"], "Lab SSO");
    assert_eq!(about["issuer"], issuer.as_str());
    assert_eq!(about["native_client_id"], "mgds-desktop");
    assert!(about["scopes"].as_str().unwrap().contains("offline_access"));

    // Alice: an admin by her group, made on first sign-in.
    let at_provider = provider.browser();
    let browser = Browser::new();
    let landed = browser.sign_in(&svc, &at_provider, "alice-sub", "/samples").await;
    assert_eq!(landed, format!("{}/samples", svc.url));
    assert!(browser.has("mgds_session") && !browser.has("mgds_sso_state"));
    let (status, me) = browser.session(&svc).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["user"]["email"], "alice@lab.example");
    assert_eq!(me["user"]["role"], "admin");
    let csrf = me["csrf_token"].as_str().unwrap().to_string();

    // The callback's address again (a replay, or a code stolen from the address bar) fails,
    // and so does one brought back by another browser.
    let mallory = Browser::new();
    let r = mallory.send(Method::GET, &format!("{}/api/v1/sso/sign_in", svc.url), None).await;
    let back = provider.browser().sign_in(&location(&r), "bob-sub").await.unwrap();
    let stranger = Browser::new();
    let r = stranger.send(Method::GET, &back, None).await;
    assert!(problem(&location(&r)).contains("not begun in this browser"), "{}", location(&r));
    assert!(!stranger.has("mgds_session"));
    let r = mallory.send(Method::GET, &back, None).await;
    assert_eq!(location(&r), format!("{}/", svc.url), "the browser that began it signs in");
    let r = mallory.send(Method::GET, &back, None).await;
    assert!(problem(&location(&r)).contains("not begun in this browser"));

    // Bob: a member. Carol's group places her nowhere: refused, in words.
    let (_, bob) = mallory.session(&svc).await;
    assert_eq!(bob["user"]["email"], "bob@lab.example");
    assert_eq!(bob["user"]["role"], "member");
    let carol = Browser::new();
    let landed = carol.sign_in(&svc, &provider.browser(), "carol-sub", "/").await;
    assert!(problem(&landed).contains("is in no group that this MGDS service lets in"), "{landed}");
    assert_eq!(carol.session(&svc).await.0, 401);

    // Signing out of MGDS signs out at the provider (RP-initiated logout), which sends the
    // browser back to the service.
    let r = browser.send(Method::DELETE, &format!("{}/api/v1/session", svc.url), Some(&csrf)).await;
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    let end = body["end_session_url"].as_str().unwrap().to_string();
    assert!(end.starts_with(&issuer) && end.contains("id_token_hint="), "{end}");
    let after = at_provider.sign_out(&end).await.unwrap();
    assert!(after.starts_with(&format!("{}/", svc.url)), "{after}");
    assert_eq!(browser.session(&svc).await.0, 401);

    // Signing out at the provider itself ends the MGDS session by back-channel logout.
    let again = Browser::new();
    let at_provider = provider.browser();
    again.sign_in(&svc, &at_provider, "alice-sub", "/").await;
    assert_eq!(again.session(&svc).await.0, 200);
    at_provider.end_session_at_provider().await.unwrap();
    assert_eq!(again.session(&svc).await.0, 401, "the provider's back-channel logout ended the session");
    assert_eq!(mallory.session(&svc).await.0, 200, "another user's session stays");

    // A logout token that is not the provider's is refused.
    let r = svc
        .req(Method::POST, "/api/v1/sso/backchannel_logout")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("logout_token=eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);

    // The audit trail has the sign-ins, the one made account and the provider's logout.
    let admin = svc.user_in("root@lab.example", Some("Microbiology"), mgds_server::admin::Role::Owner).await;
    let (status, entries) = svc.get(Some(&admin), "/api/v1/audit?per_page=200").await;
    assert_eq!(status, 200, "{entries}");
    let actions: Vec<&str> = entries.as_array().unwrap().iter().filter_map(|e| e["action"].as_str()).collect();
    for want in ["user.created", "session.signed_in", "session.signed_out", "session.ended_by_provider"] {
        assert!(actions.contains(&want), "{want} not in {actions:?}");
    }
}

#[tokio::test]
async fn an_existing_account_is_linked_by_verified_email_only_where_allowed_and_once() {
    let mut provider = provider().await;
    let issuer = provider.issuer.clone();
    let strict = Service::start_with(|c| c.sso = Some(config(&issuer))).await;
    // Here no rule places anyone: new people join Microbiology as members, and existing users
    // keep the role they have.
    let linking = Service::start_with(|c| {
        c.sso = Some(SsoConfig {
            link_verified_email: true,
            placements: Vec::new(),
            default_organization: Some("Microbiology".into()),
            ..config(&issuer)
        });
    })
    .await;
    register(&mut provider, &[&strict, &linking]).await;
    let dana = strict.user_in("dana@lab.example", Some("Microbiology"), mgds_server::admin::Role::Member).await;
    let dana_there = linking.user_in("Dana@lab.example", Some("Microbiology"), mgds_server::admin::Role::Admin).await;

    let landed = Browser::new().sign_in(&strict, &provider.browser(), "dana-sub", "/").await;
    assert!(problem(&landed).contains("does not link accounts by e-mail"), "{landed}");
    // Her API key still works, unchanged.
    assert_eq!(strict.get(Some(&dana), "/api/v1/account").await.0, 200);

    let b = Browser::new();
    b.sign_in(&linking, &provider.browser(), "dana-sub", "/").await;
    let (status, me) = b.session(&linking).await;
    assert_eq!(status, 200, "{me}");
    let linked = me["user"]["user"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    assert_eq!(linked, dana_there.id, "the existing account, linked");
    assert_eq!(me["user"]["role"], "admin", "the default organisation does not demote an admin made by hand");
    // Another account at the provider with the same address does not take hers.
    let landed = Browser::new().sign_in(&linking, &provider.browser(), "dana-again-sub", "/").await;
    assert!(problem(&landed).contains("linked to another account"), "{landed}");
    // An address the provider does not call verified links nothing.
    linking.user_in("eve@lab.example", Some("Microbiology"), mgds_server::admin::Role::Member).await;
    let landed = Browser::new().sign_in(&linking, &provider.browser(), "eve-sub", "/").await;
    assert!(problem(&landed).contains("does not say the address is verified"), "{landed}");
    // Nor does it make a new account: the address could be a colleague's.
    let landed = Browser::new().sign_in(&strict, &provider.browser(), "eve-sub", "/").await;
    assert!(problem(&landed).contains("is verified, and MGDS makes accounts only for verified addresses"), "{landed}");
}

/// Signs in as the native client (MGDS Desktop's flow, by hand) and answers its tokens.
async fn native_tokens(provider: &TestProvider, account: &str) -> mgds_oidc::Tokens {
    let p = mgds_oidc::Provider::discover(mgds_oidc::http_client("test").unwrap(), &provider.issuer).await.unwrap();
    let pkce = mgds_oidc::Pkce::new();
    let (state, nonce) = (mgds_oidc::random_token(), mgds_oidc::random_token());
    let redirect = "http://127.0.0.1:49152/callback";
    let url = p.authorization_url(&mgds_oidc::AuthorizationRequest {
        client_id: "mgds-desktop",
        redirect_uri: redirect,
        scopes: "openid email profile groups offline_access",
        state: &state,
        nonce: &nonce,
        code_challenge: &pkce.challenge,
        prompt: Some("consent"),
    });
    let back = provider.browser().sign_in(&url, account).await.unwrap();
    let query: Vec<(String, String)> = reqwest::Url::parse(&back).unwrap().query_pairs().into_owned().collect();
    let code = &query.iter().find(|(k, _)| k == "code").unwrap().1;
    assert_eq!(query.iter().find(|(k, _)| k == "state").unwrap().1, state);
    let client = mgds_oidc::ClientAuth { client_id: "mgds-desktop".into(), secret: None };
    let tokens = p.exchange_code(&client, code, redirect, &pkce.verifier).await.unwrap();
    p.verify_id_token(tokens.id_token.as_deref().unwrap(), "mgds-desktop", &nonce).await.unwrap();
    tokens
}

#[tokio::test]
async fn the_api_takes_the_providers_access_tokens_across_a_key_rotation_and_refuses_id_tokens() {
    let mut provider = provider().await;
    let issuer = provider.issuer.clone();
    let svc = Service::start_with(|c| c.sso = Some(config(&issuer))).await;
    let elsewhere = Service::start_with(|c| {
        c.sso = Some(SsoConfig { audiences: vec!["https://elsewhere.example/api".into()], ..config(&issuer) });
    })
    .await;
    register(&mut provider, &[&svc]).await;
    let bearer = |token: &str, path: &str| svc.req(Method::GET, path).bearer_auth(token);

    let tokens = native_tokens(&provider, "bob-sub").await;
    assert!(tokens.refresh_token.is_some(), "the native client gets a refresh token");
    let (status, me) = json_of(bearer(&tokens.access_token, "/api/v1/account").send().await.unwrap()).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["email"], "bob@lab.example", "the first token makes the account by its claims");
    assert_eq!(me["role"], "member");
    // A sample uploaded with the token belongs to that user.
    let (status, _) = json_of(bearer(&tokens.access_token, "/api/v1/samples").send().await.unwrap()).await;
    assert_eq!(status, 200);

    // An ID token is not an access token, whatever its audience.
    let id = tokens.id_token.clone().unwrap();
    let (status, body) = json_of(bearer(&id, "/api/v1/account").send().await.unwrap()).await;
    assert_eq!(status, 401, "{body}");
    // A token changed by a byte fails its signature.
    let mut forged = tokens.access_token.clone().into_bytes();
    let at = forged.len() - 5;
    forged[at] = if forged[at] == b'A' { b'B' } else { b'A' };
    let (status, body) =
        json_of(bearer(std::str::from_utf8(&forged).unwrap(), "/api/v1/account").send().await.unwrap()).await;
    assert_eq!(status, 401, "{body}");
    // A service whose audience the token does not name refuses it.
    let r = elsewhere.req(Method::GET, "/api/v1/account").bearer_auth(&tokens.access_token).send().await.unwrap();
    let (status, body) = json_of(r).await;
    assert_eq!(status, 401);
    assert!(body.to_string().contains("not meant for"), "{body}");

    // The provider rotates its keys: tokens signed by the new key are taken (the key set is
    // fetched again for a key it did not hold).
    provider.restart(json!({"signing_keys": ["k2", "k1"]})).await;
    let rotated = native_tokens(&provider, "bob-sub").await;
    let header = rotated.access_token.split('.').next().unwrap().to_string();
    assert!(String::from_utf8(base64_url(&header)).unwrap().contains("\"k2\""));
    let (status, me) = json_of(bearer(&rotated.access_token, "/api/v1/account").send().await.unwrap()).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["email"], "bob@lab.example", "the same user, by issuer and subject");

    // A disabled account's tokens stop at once.
    mgds_server::admin::set_disabled(&svc.state, "bob@lab.example", true).await.unwrap();
    let (status, body) = json_of(bearer(&rotated.access_token, "/api/v1/account").send().await.unwrap()).await;
    assert_eq!(status, 401);
    assert!(body.to_string().contains("disabled"), "{body}");
}

fn base64_url(s: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(s).unwrap()
}
